//! Reading under a root: only regular files, opened non-blocking, checked again after
//! the open, and capped.

use super::*;

impl Dir {
    /// Opens a regular file for reading (streaming readers: line counts, hashes).
    pub fn open_read(&self, rel: &Path) -> Result<File, DoorError> {
        let shown = show(rel);
        let (parent, name) = self.resolve(rel, &shown, true)?;
        let Some(name) = name else {
            return Err(DoorError::NotRegular(shown, Kind::Dir));
        };
        open_regular_at(&parent, &name, &shown)
    }

    /// Whether a [`Dir::lock`] on `rel` is held now, by anyone: asked by taking a shared
    /// lock for an instant (so two askers never see each other), without creating the
    /// file; `false` when there is no file.
    pub fn lock_is_held(&self, rel: &Path) -> Result<bool, DoorError> {
        let file = match self.open_read(rel) {
            Ok(file) => file,
            Err(DoorError::Missing(_)) => return Ok(false),
            Err(err) => return Err(err),
        };
        match file.try_lock_shared() {
            Ok(()) => Ok(false),
            Err(std::fs::TryLockError::WouldBlock) => Ok(true),
            Err(std::fs::TryLockError::Error(err)) => Err(DoorError::Io(show(rel), err)),
        }
    }

    /// What is at `rel` (symlinks inside followed), or `None` when nothing is.
    pub fn kind(&self, rel: &Path) -> Result<Option<(Kind, u64)>, DoorError> {
        let shown = show(rel);
        let (parent, name) = match self.resolve(rel, &shown, true) {
            Ok(found) => found,
            Err(DoorError::Missing(_)) => return Ok(None),
            Err(err) => return Err(err),
        };
        let Some(name) = name else {
            return Ok(Some((Kind::Dir, 0)));
        };
        match fstatat(parent.fd(), &name, libc::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some((
                Kind::of(st.st_mode),
                u64::try_from(st.st_size).unwrap_or(0),
            ))),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(DoorError::Io(shown, err)),
        }
    }

    /// What is at `rel` itself, no symlink followed anywhere (the folders on the way are
    /// created if missing, as for a write), or `None` when nothing is.
    pub fn kind_no_follow(&self, rel: &Path) -> Result<Option<Kind>, DoorError> {
        let shown = show(rel);
        let (dir, name) = self.parent_for_write(rel, &shown)?;
        match fstatat(dir.fd(), &name, libc::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => Ok(Some(Kind::of(st.st_mode))),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(None),
            Err(err) => Err(DoorError::Io(shown, err)),
        }
    }

    /// The real path of a folder inside the root, for walkers and child processes.
    pub fn real_dir(&self, rel: &Path) -> Result<PathBuf, DoorError> {
        let shown = show(rel);
        let (mut parts, opened) = self.walk_components(rel, &shown)?;
        let mut path = self.root.clone();
        let Some(last) = parts.pop() else {
            return Ok(path);
        };
        let parent = self.open_from(&parts, opened, &shown)?;
        let st = fstatat(
            parent.fd(),
            &cstring(&last, &shown)?,
            libc::AT_SYMLINK_NOFOLLOW,
        )
        .map_err(|e| read_error(e, &shown))?;
        match Kind::of(st.st_mode) {
            Kind::Dir => {
                path.extend(parts);
                path.push(last);
                Ok(path)
            }
            kind => Err(DoorError::NotADir(shown, kind)),
        }
    }
}

pub(super) fn read_error(err: io::Error, shown: &str) -> DoorError {
    match err.raw_os_error() {
        Some(libc::ENOENT) => DoorError::Missing(shown.to_owned()),
        Some(libc::ENOTDIR) => DoorError::Missing(shown.to_owned()),
        _ => DoorError::Io(shown.to_owned(), err),
    }
}

pub(super) fn refuse_non_regular(dir: &Fd, name: &CString, shown: &str) -> Result<(), DoorError> {
    match fstatat(dir.fd(), name, libc::AT_SYMLINK_NOFOLLOW) {
        Ok(st) => match Kind::of(st.st_mode) {
            Kind::File => Ok(()),
            Kind::Symlink => Err(DoorError::Symlink(shown.to_owned())),
            kind => Err(DoorError::NotRegular(shown.to_owned(), kind)),
        },
        Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(err) => Err(DoorError::Io(shown.to_owned(), err)),
    }
}

pub(super) fn open_regular_at(dir: &Fd, name: &CString, shown: &str) -> Result<File, DoorError> {
    // Look before opening, so a device is never opened; then open non-blocking and look
    // again, so whatever was swapped in meanwhile cannot block or be read.
    let st =
        fstatat(dir.fd(), name, libc::AT_SYMLINK_NOFOLLOW).map_err(|e| read_error(e, shown))?;
    match Kind::of(st.st_mode) {
        Kind::File => {}
        kind => return Err(DoorError::NotRegular(shown.to_owned(), kind)),
    }
    let fd = openat(
        dir.fd(),
        name,
        libc::O_RDONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
        0,
    )
    .map_err(|e| read_error(e, shown))?;
    check_regular(&fd, shown)?;
    Ok(File::from(fd))
}

pub(super) fn check_regular(fd: &OwnedFd, shown: &str) -> Result<(), DoorError> {
    // SAFETY: all-zero is a valid `stat` (integers and timespecs).
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    // SAFETY: fstat on an owned, open descriptor, writing only the buffer we own.
    if unsafe { libc::fstat(fd.as_raw_fd(), &raw mut st) } != 0 {
        return Err(DoorError::Io(shown.to_owned(), io::Error::last_os_error()));
    }
    match Kind::of(st.st_mode) {
        Kind::File => Ok(()),
        kind => Err(DoorError::NotRegular(shown.to_owned(), kind)),
    }
}

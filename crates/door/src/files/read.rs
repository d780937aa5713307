//! Reading under a root: only regular files, opened non-blocking, checked again after
//! the open, and capped.

use super::*;

impl Dir {
    /// Opens a regular file for reading (streaming readers: line counts, hashes).
    pub fn open_read(&self, rel: &Path) -> Result<File, DoorError> {
        self.open_read_sized(rel).map(|(file, _)| file)
    }

    /// [`Dir::open_read`], with the file's size as the open file says it.
    pub(super) fn open_read_sized(&self, rel: &Path) -> Result<(File, u64), DoorError> {
        let shown = show(rel);
        let resolved = self.resolve(rel, &shown, true)?;
        let Some(name) = resolved.name else {
            return Err(DoorError::NotRegular(shown, Kind::Dir));
        };
        open_regular_at(&resolved.dir, &name, &shown, resolved.seen)
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
        let resolved = match self.resolve(rel, &shown, true) {
            Ok(found) => found,
            Err(DoorError::Missing(_)) => return Ok(None),
            Err(err) => return Err(err),
        };
        let Some(name) = resolved.name else {
            return Ok(Some((Kind::Dir, 0)));
        };
        let looked = resolved.seen.map_or_else(
            || fstatat(resolved.dir.fd(), &name, libc::AT_SYMLINK_NOFOLLOW),
            Ok,
        );
        match looked {
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

    /// [`Dir::read_marker`] on Unix: the target of the symlink `rel`, never followed;
    /// `None` when nothing, or no symlink, is there.
    pub(super) fn read_link(&self, rel: &Path) -> Result<Option<Vec<u8>>, DoorError> {
        let shown = show(rel);
        let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
            return Err(DoorError::BadPath(shown));
        };
        let walked = match self.walk_components(parent, &shown) {
            Ok(walked) => walked,
            Err(DoorError::Missing(_)) => return Ok(None),
            Err(err) => return Err(err),
        };
        let dir = self.open_from(&walked.parts, walked.opened, &shown)?;
        match readlinkat(dir.fd(), &cstring(name, &shown)?) {
            Ok(target) => Ok(Some(target.into_vec())),
            Err(err) if matches!(err.raw_os_error(), Some(libc::ENOENT | libc::EINVAL)) => Ok(None),
            Err(err) => Err(DoorError::Io(shown, err)),
        }
    }

    /// The real path of a folder inside the root, for walkers and child processes.
    pub fn real_dir(&self, rel: &Path) -> Result<PathBuf, DoorError> {
        let shown = show(rel);
        let walked = self.walk_components(rel, &shown)?;
        let mut parts = walked.parts;
        let mut path = self.root.clone();
        let Some(last) = parts.pop() else {
            return Ok(path);
        };
        let st = match walked.last {
            Some(st) => st,
            None => {
                let parent = self.open_from(&parts, walked.opened, &shown)?;
                fstatat(
                    parent.fd(),
                    &cstring(&last, &shown)?,
                    libc::AT_SYMLINK_NOFOLLOW,
                )
                .map_err(|e| read_error(e, &shown))?
            }
        };
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

/// Opens `name` in `dir` for reading if it is a regular file, with its size. `seen` is
/// what the caller's walk just found there, if it looked.
pub(super) fn open_regular_at(
    dir: &Fd,
    name: &CString,
    shown: &str,
    seen: Option<libc::stat>,
) -> Result<(File, u64), DoorError> {
    // Look before opening (or take the walk's look), so a device is never opened; then
    // open non-blocking and look again, so whatever was swapped in meanwhile cannot block
    // or be read.
    let st = match seen {
        Some(st) => st,
        None => {
            fstatat(dir.fd(), name, libc::AT_SYMLINK_NOFOLLOW).map_err(|e| read_error(e, shown))?
        }
    };
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
    let len = check_regular(&fd, shown)?;
    Ok((File::from(fd), len))
}

/// The open file's size, if it is a regular file.
pub(super) fn check_regular(fd: &OwnedFd, shown: &str) -> Result<u64, DoorError> {
    let st = fstat(fd.as_fd()).map_err(|err| DoorError::Io(shown.to_owned(), err))?;
    match Kind::of(st.st_mode) {
        Kind::File => Ok(u64::try_from(st.st_size).unwrap_or(0)),
        kind => Err(DoorError::NotRegular(shown.to_owned(), kind)),
    }
}

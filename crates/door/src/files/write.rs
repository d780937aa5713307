//! Writing under a root: atomic replace through an `O_EXCL` temp file (stale ones of
//! killed writers removed), append, create, locks, renames and folders, never through a
//! symlink in any component.

use super::*;

/// A temp file left by a writer that is still alive is removed after this long anyway.
pub(super) const STALE_TEMP: Duration = Duration::from_secs(3600);

impl Dir {
    /// Replaces `rel` with `bytes` atomically: a crash at any instant leaves the old file or
    /// the new one. Creates missing folders; never follows a symlink; replaces only a
    /// regular file.
    pub fn write_atomic(&self, rel: &Path, bytes: &[u8]) -> Result<(), DoorError> {
        self.replace(rel, bytes, true)
    }

    /// [`Dir::write_atomic`] without the fsyncs: still all or nothing if the process
    /// dies, but a power loss may keep the old file. For bookkeeping that can be lost.
    pub fn write_atomic_unsynced(&self, rel: &Path, bytes: &[u8]) -> Result<(), DoorError> {
        self.replace(rel, bytes, false)
    }

    pub(super) fn replace(&self, rel: &Path, bytes: &[u8], durable: bool) -> Result<(), DoorError> {
        let shown = show(rel);
        let (dir, name) = self.parent_for_write(rel, &shown)?;
        refuse_non_regular(&dir, &name, &shown)?;
        remove_stale_temps(&dir, &name);
        let temp = temp_name(&name);
        let result = (|| -> io::Result<()> {
            let mut file = create_temp(&dir, &temp)?;
            file.write_all(bytes)?;
            if durable {
                file.sync_all()?;
            }
            renameat(dir.fd(), &temp, dir.fd(), &name)?;
            // Make the rename itself durable.
            if durable {
                sync_durably(dir.fd())
            } else {
                Ok(())
            }
        })();
        if let Err(err) = result {
            let _ = unlinkat(dir.fd(), &temp, 0);
            return Err(DoorError::Io(shown, err));
        }
        Ok(())
    }

    /// [`Dir::write_atomic`] for a file written again and again under a lock (the loop's
    /// state): the previous content is kept beside it as `shadow` (a name in the same
    /// folder), and the next write goes into that file and swaps it in (`renameat2` with
    /// `RENAME_EXCHANGE`), so no file is created and none freed on each write. On ext4 a
    /// new inode, and the old one's block freed by the rename, made up a quarter of the
    /// write (510 µs against 390 µs measured here). Atomic and durable as `write_atomic`.
    ///
    /// The caller holds the lock every writer of `rel` takes: two writers filling the
    /// shadow at once would swap in a mix. A reader that held the state open across two
    /// writes can see it rewritten: read such a file with [`Dir::read_settled`]. The shadow
    /// is written only when it is a regular file of this user's with one name and a state
    /// file's mode (so a hard link planted there is replaced, never written through, and a
    /// planted mode never becomes the state's); otherwise this is `write_atomic`, which
    /// keeps the previous content as the shadow where the file system can exchange names
    /// (and keeps none where it cannot). Linux only; elsewhere `write_atomic`.
    pub fn write_atomic_swapping(
        &self,
        rel: &Path,
        shadow: &str,
        bytes: &[u8],
    ) -> Result<(), DoorError> {
        #[cfg(target_os = "linux")]
        {
            let shown = show(rel);
            let (dir, name) = self.parent_for_write(rel, &shown)?;
            refuse_non_regular(&dir, &name, &shown)?;
            let shadow = cstring(OsStr::new(shadow), &shown)?;
            let written = match swap_in(&dir, &shadow, &name, bytes) {
                Swap::Swapped(synced) => synced,
                Swap::NotSwapped => replace_keeping(&dir, &name, &shadow, bytes),
            };
            written.map_err(|err| DoorError::Io(shown, err))
        }
        #[cfg(not(target_os = "linux"))]
        {
            let _ = shadow;
            self.write_atomic(rel, bytes)
        }
    }

    /// [`Dir::write_marker`] on Unix: a symlink made beside `rel` and renamed over it.
    pub(super) fn replace_link(&self, rel: &Path, value: &str) -> Result<(), DoorError> {
        let shown = show(rel);
        let (dir, name) = self.parent_for_write(rel, &shown)?;
        remove_stale_temps(&dir, &name);
        let temp = temp_name(&name);
        let target = cstring(OsStr::new(value), &shown)?;
        let result = symlinkat(&target, dir.fd(), &temp)
            .and_then(|()| renameat(dir.fd(), &temp, dir.fd(), &name));
        if let Err(err) = result {
            let _ = unlinkat(dir.fd(), &temp, 0);
            return Err(DoorError::Io(shown, err));
        }
        Ok(())
    }

    /// Appends `bytes` in one `write` (`O_APPEND`: concurrent appenders never interleave
    /// within it). Creates the file and missing folders; refuses symlinks and non-files.
    pub fn append(&self, rel: &Path, bytes: &[u8]) -> Result<(), DoorError> {
        let mut file = self.open_for_write(rel, libc::O_APPEND)?;
        file.write_all(bytes)
            .map_err(|e| DoorError::Io(show(rel), e))
    }

    /// Creates (or truncates) a regular file for streaming writes (agent output logs).
    pub fn create(&self, rel: &Path) -> Result<File, DoorError> {
        self.open_for_write(rel, libc::O_TRUNC)
    }

    pub(super) fn open_for_write(&self, rel: &Path, extra: i32) -> Result<File, DoorError> {
        let shown = show(rel);
        let (dir, name) = self.parent_for_write(rel, &shown)?;
        let fd = openat(
            dir.fd(),
            &name,
            libc::O_WRONLY
                | libc::O_CREAT
                | libc::O_NOFOLLOW
                | libc::O_NONBLOCK
                | libc::O_CLOEXEC
                | extra,
            0o644,
        )
        .map_err(|e| write_error(e, &shown))?;
        check_regular(&fd, &shown)?;
        Ok(File::from(fd))
    }

    /// Takes an exclusive lock on the file `rel` (created if missing), waiting at most
    /// `wait`: nobody holds pagent's locks across anything unbounded, so a lock that stays
    /// taken means a stuck process, and the caller should give up rather than hang.
    pub fn lock(&self, rel: &Path, wait: Duration) -> Result<Lock, DoorError> {
        let shown = show(rel);
        let (dir, name) = self.parent_for_write(rel, &shown)?;
        let started = Instant::now();
        loop {
            let fd = openat(
                dir.fd(),
                &name,
                libc::O_RDWR
                    | libc::O_CREAT
                    | libc::O_NOFOLLOW
                    | libc::O_NONBLOCK
                    | libc::O_CLOEXEC,
                0o644,
            )
            .map_err(|e| write_error(e, &shown))?;
            check_regular(&fd, &shown)?;
            let file = File::from(fd);
            let left = wait.saturating_sub(started.elapsed());
            let lock = Lock::wait_for(file, shown.clone(), left)?;
            // A lock file removed and made again while this one waited (a `git clean`, an
            // agent) locks nothing: whoever opened the new one holds the lock. Lock the file
            // the name holds now.
            if lock.is_at(&dir, &name) {
                return Ok(lock);
            }
            if started.elapsed() >= wait {
                return Err(DoorError::Busy(shown, started.elapsed()));
            }
        }
    }

    /// Renames `rel` to `new_name` in the same folder (setting a file aside).
    pub fn rename_in_place(&self, rel: &Path, new_name: &str) -> Result<(), DoorError> {
        let shown = show(rel);
        let (dir, name) = self.parent_for_write(rel, &shown)?;
        let to = cstring(OsStr::new(new_name), &shown)?;
        renameat(dir.fd(), &name, dir.fd(), &to).map_err(|e| write_error(e, &shown))
    }

    /// Removes the regular file `rel` (a symlink is refused, never followed or removed);
    /// `Ok(false)` when nothing was there.
    pub fn remove_file(&self, rel: &Path) -> Result<bool, DoorError> {
        let shown = show(rel);
        let (dir, name) = match self.parent_for_existing(rel, &shown) {
            Ok(found) => found,
            Err(DoorError::Missing(_)) => return Ok(false),
            Err(err) => return Err(err),
        };
        match fstatat(dir.fd(), &name, libc::AT_SYMLINK_NOFOLLOW) {
            Ok(st) if Kind::of(st.st_mode) == Kind::File => {}
            Ok(st) => return Err(DoorError::NotRegular(shown, Kind::of(st.st_mode))),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(err) => return Err(DoorError::Io(shown, err)),
        }
        match unlinkat(dir.fd(), &name, 0) {
            Ok(()) => Ok(true),
            Err(err) if err.kind() == io::ErrorKind::NotFound => Ok(false),
            Err(err) => Err(DoorError::Io(shown, err)),
        }
    }

    /// The folder holding `rel`, opened without following a symlink anywhere and without
    /// creating anything, and the last name.
    pub(super) fn parent_for_existing(
        &self,
        rel: &Path,
        shown: &str,
    ) -> Result<(Fd, CString), DoorError> {
        let mut parts = normal_components(rel, shown)?;
        let Some(last) = parts.pop() else {
            return Err(DoorError::BadPath(shown.to_owned()));
        };
        let mut dir = self.dup()?;
        for part in &parts {
            let name = cstring(part, shown)?;
            let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
            dir = match openat(dir.fd(), &name, flags, 0) {
                Ok(fd) => Fd(fd),
                Err(err) if err.kind() == io::ErrorKind::NotFound => {
                    return Err(DoorError::Missing(shown.to_owned()));
                }
                Err(err) => return Err(write_error(err, shown)),
            };
        }
        Ok((dir, cstring(&last, shown)?))
    }

    /// Creates the folder `rel` and its parents, never through a symlink.
    pub fn create_dir_all(&self, rel: &Path) -> Result<PathBuf, DoorError> {
        let shown = show(rel);
        let parts = normal_components(rel, &shown)?;
        let mut dir = self.dup()?;
        let mut path = self.root.clone();
        for part in &parts {
            dir = descend_for_write(&dir, part, &shown)?;
            path.push(part);
        }
        Ok(path)
    }

    /// The folder holding `rel` (created as needed, no symlinks anywhere) and the last name.
    pub(super) fn parent_for_write(
        &self,
        rel: &Path,
        shown: &str,
    ) -> Result<(Fd, CString), DoorError> {
        let mut parts = normal_components(rel, shown)?;
        let Some(last) = parts.pop() else {
            return Err(DoorError::BadPath(shown.to_owned()));
        };
        let mut dir = self.dup()?;
        for part in &parts {
            dir = descend_for_write(&dir, part, shown)?;
        }
        Ok((dir, cstring(&last, shown)?))
    }
}

pub(super) fn descend_for_write(dir: &Fd, part: &OsStr, shown: &str) -> Result<Fd, DoorError> {
    let name = cstring(part, shown)?;
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    match openat(dir.fd(), &name, flags, 0) {
        Ok(fd) => return Ok(Fd(fd)),
        Err(err) if err.kind() == io::ErrorKind::NotFound => {}
        Err(err) => return Err(write_error(err, shown)),
    }
    // SAFETY: mkdirat with a valid descriptor and a NUL-terminated name.
    let made = unsafe { libc::mkdirat(dir.fd().as_raw_fd(), name.as_ptr(), 0o755) };
    if made != 0 {
        let err = io::Error::last_os_error();
        if err.kind() != io::ErrorKind::AlreadyExists {
            return Err(DoorError::Io(shown.to_owned(), err));
        }
    }
    openat(dir.fd(), &name, flags, 0)
        .map(Fd)
        .map_err(|e| write_error(e, shown))
}

/// ELOOP and ENOTDIR on an `O_NOFOLLOW` open mean a symlink (or a non-folder) was met.
pub(super) fn write_error(err: io::Error, shown: &str) -> DoorError {
    match err.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) | Some(libc::EMLINK) => {
            DoorError::Symlink(shown.to_owned())
        }
        _ => DoorError::Io(shown.to_owned(), err),
    }
}

/// Creates the temp file `temp` in `dir`: new (`O_EXCL`), never through a link.
pub(super) fn create_temp(dir: &Fd, temp: &CString) -> io::Result<File> {
    let flags = libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    openat(dir.fd(), temp, flags, 0o644).map(File::from)
}

/// `.NAME.PID.NANOS.tmp`: unique per writer, recognisable as NAME's temp file.
pub(super) fn temp_name(name: &CString) -> CString {
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let mut bytes = b".".to_vec();
    bytes.extend_from_slice(name.as_bytes());
    bytes.extend_from_slice(format!(".{}.{nanos}.tmp", std::process::id()).as_bytes());
    CString::new(bytes).unwrap_or_default()
}

/// Removes `.NAME.PID.*.tmp` files whose writer is dead (or that are over an hour old):
/// a writer killed between creating its temp file and renaming it leaves one behind.
pub(super) fn remove_stale_temps(dir: &Fd, name: &CString) {
    let mut prefix = b".".to_vec();
    prefix.extend_from_slice(name.as_bytes());
    prefix.push(b'.');
    let mut candidates: Vec<Vec<u8>> = Vec::new();
    for_each_entry(dir, |entry| {
        if entry.starts_with(&prefix) && entry.ends_with(b".tmp") {
            candidates.push(entry.to_vec());
        }
    });
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    for entry in candidates {
        let rest = &entry[prefix.len()..entry.len() - 4];
        let pid = rest
            .split(|b| *b == b'.')
            .next()
            .and_then(|p| std::str::from_utf8(p).ok())
            .and_then(|p| p.parse::<i32>().ok());
        let owner_dead = pid.is_some_and(|pid| {
            pid > 0
                // SAFETY: kill with signal 0 only asks whether the process exists.
                && unsafe { libc::kill(pid, 0) } != 0
                && io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
        });
        let Ok(entry) = CString::new(entry) else {
            continue;
        };
        let old = fstatat(dir.fd(), &entry, libc::AT_SYMLINK_NOFOLLOW)
            .ok()
            .and_then(|st| u64::try_from(st.st_mtime).ok())
            .is_some_and(|mtime| now.saturating_sub(mtime) > STALE_TEMP.as_secs());
        if owner_dead || old {
            let _ = unlinkat(dir.fd(), &entry, 0);
        }
    }
}

/// A new file written, synced and exchanged with `name`, whose old content becomes
/// `shadow` (or is dropped, if that name will not take it); renamed over `name` when there
/// is nothing to exchange with (a first write, a file system that cannot).
#[cfg(target_os = "linux")]
fn replace_keeping(dir: &Fd, name: &CString, shadow: &CString, bytes: &[u8]) -> io::Result<()> {
    remove_stale_temps(dir, name);
    let temp = temp_name(name);
    let mut file = create_temp(dir, &temp)?;
    let placed = file
        .write_all(bytes)
        .and_then(|()| file.sync_all())
        .and_then(|()| match exchange(dir, &temp, name) {
            Ok(()) => {
                // The old content is at the temp name now: the shadow, or gone.
                if renameat(dir.fd(), &temp, dir.fd(), shadow).is_err() {
                    let _ = unlinkat(dir.fd(), &temp, 0);
                }
                Ok(())
            }
            Err(_) => renameat(dir.fd(), &temp, dir.fd(), name),
        });
    if let Err(err) = placed {
        let _ = unlinkat(dir.fd(), &temp, 0);
        return Err(err);
    }
    sync_durably(dir.fd())
}

/// What [`swap_in`] did.
#[cfg(target_os = "linux")]
enum Swap {
    /// The shadow now holds `bytes` under the name; the folder's fsync said this.
    Swapped(io::Result<()>),
    /// Nothing under the name changed: write another way.
    NotSwapped,
}

/// Writes `bytes` into the shadow and exchanges it with `name`: see
/// [`Dir::write_atomic_swapping`]. Only a shadow that is a regular file of this user's,
/// with one name and a state file's mode (read and write for its owner, nothing more than
/// read for others: its mode becomes the state's), is written; it is looked at before it
/// is opened, so a device is never opened. A file system that cannot exchange names has
/// the shadow removed, so the next write does not fill it in vain.
#[cfg(target_os = "linux")]
fn swap_in(dir: &Fd, shadow: &CString, name: &CString, bytes: &[u8]) -> Swap {
    use std::os::unix::fs::FileExt;
    let usable = |st: &libc::stat| {
        // SAFETY: geteuid has no preconditions.
        let mine = st.st_uid == unsafe { libc::geteuid() };
        let mode = st.st_mode & 0o7777;
        Kind::of(st.st_mode) == Kind::File
            && st.st_nlink == 1
            && mine
            && mode & 0o600 == 0o600
            && mode & !0o644 == 0
    };
    if !fstatat(dir.fd(), shadow, libc::AT_SYMLINK_NOFOLLOW).is_ok_and(|st| usable(&st)) {
        return Swap::NotSwapped;
    }
    let flags = libc::O_WRONLY | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC;
    let Ok(fd) = openat(dir.fd(), shadow, flags, 0) else {
        return Swap::NotSwapped;
    };
    if !fstat(fd.as_fd()).is_ok_and(|st| usable(&st)) {
        return Swap::NotSwapped;
    }
    let file = File::from(fd);
    let filled = file
        .write_all_at(bytes, 0)
        .and_then(|()| file.set_len(bytes.len() as u64))
        .and_then(|()| file.sync_all());
    if filled.is_err() {
        return Swap::NotSwapped;
    }
    match exchange(dir, shadow, name) {
        Ok(()) => Swap::Swapped(sync_durably(dir.fd())),
        Err(err) => {
            if matches!(err.raw_os_error(), Some(libc::EINVAL | libc::ENOSYS)) {
                let _ = unlinkat(dir.fd(), shadow, 0);
            }
            Swap::NotSwapped
        }
    }
}

/// `renameat2(RENAME_EXCHANGE)`: `a` and `b` in `dir` trade places, atomically.
#[cfg(target_os = "linux")]
fn exchange(dir: &Fd, a: &CString, b: &CString) -> io::Result<()> {
    // SAFETY: renameat2 with a valid descriptor and NUL-terminated names.
    let done = unsafe {
        libc::renameat2(
            dir.fd().as_raw_fd(),
            a.as_ptr(),
            dir.fd().as_raw_fd(),
            b.as_ptr(),
            libc::RENAME_EXCHANGE,
        )
    };
    if done != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

//! Files outside any root: a transcript Claude Code names, a PRD the user typed, the
//! user's own folders. Symlinks followed, as the user asked, but still regular files only,
//! non-blocking and capped; plus SIGXFSZ, which decides how a write past a size limit
//! ends.

use super::*;

/// Reads a regular file outside any root (symlinks followed: the user named it), capped
/// and non-blocking.
pub fn read_outside(path: &Path, cap: u64) -> Result<Vec<u8>, DoorError> {
    let (file, len) = open_outside_sized(path)?;
    read_capped(&file, len, cap, &path.display().to_string())
}

/// Opens a regular file outside any root for reading, non-blocking: never a FIFO or device.
pub fn open_outside(path: &Path) -> Result<File, DoorError> {
    open_outside_sized(path).map(|(file, _)| file)
}

/// [`open_outside`], with the file's size as the open file says it.
#[cfg(unix)]
fn open_outside_sized(path: &Path) -> Result<(File, u64), DoorError> {
    let shown = path.display().to_string();
    let fd = open_path(
        path,
        libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        &shown,
    )?;
    let len = check_regular(&fd, &shown)?;
    Ok((File::from(fd), len))
}

/// Opens a regular file outside any root for reading: a disk file, never a pipe, a
/// console or another device (Windows has no FIFOs that could block an open); with its
/// size.
#[cfg(windows)]
fn open_outside_sized(path: &Path) -> Result<(File, u64), DoorError> {
    use std::os::windows::fs::OpenOptionsExt;
    use std::os::windows::io::AsHandle;
    let shown = path.display().to_string();
    if path
        .file_name()
        .is_some_and(|n| names::windows_name_problem(&win::wide(n)).is_some())
    {
        return Err(DoorError::BadPath(shown));
    }
    let file = std::fs::OpenOptions::new()
        .read(true)
        .share_mode(win::SHARE_ALL)
        .open(path)
        .map_err(|e| win::read_error(e, &shown))?;
    if !win::is_disk(file.as_handle()) {
        return Err(DoorError::NotRegular(shown, Kind::Device));
    }
    let meta = file.metadata();
    if meta.as_ref().is_ok_and(std::fs::Metadata::is_dir) {
        return Err(DoorError::NotRegular(shown, Kind::Dir));
    }
    let len = meta.map_or(0, |m| m.len());
    Ok((file, len))
}

/// A folder of this process's own in the system's temporary folder, removed with
/// everything in it when the value drops: where a checker writes what must land neither
/// in the project nor in pagent's config folder (Python's byte code).
#[derive(Debug)]
pub struct PrivateTemp(PathBuf);

impl PrivateTemp {
    pub fn path(&self) -> &Path {
        &self.0
    }

    /// Makes the folder `rel` (relative, no `..`) and its parents inside, each 0700.
    pub fn create_dirs(&self, rel: &Path) -> io::Result<PathBuf> {
        let plain = rel
            .components()
            .all(|c| matches!(c, std::path::Component::Normal(_)));
        if !plain {
            return Err(io::Error::other(format!(
                "{} is not a plain relative path",
                rel.display()
            )));
        }
        let mut builder = std::fs::DirBuilder::new();
        builder.recursive(true);
        #[cfg(unix)]
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        let dir = self.0.join(rel);
        builder.create(&dir)?;
        Ok(dir)
    }
}

impl Drop for PrivateTemp {
    fn drop(&mut self) {
        // remove_dir_all does not follow a symlink found inside; the folder is ours.
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// Makes a [`PrivateTemp`]: a random name (so nobody can have planted it, or a link in
/// its place: mkdir fails on any name that exists), mode 0700 where modes exist.
pub fn private_temp_dir(prefix: &str) -> io::Result<PrivateTemp> {
    // The door's one read of the environment (crates/door/clippy.toml): the system's
    // temporary folder, `TMPDIR` or `/tmp` on Unix, GetTempPath on Windows.
    #[allow(clippy::disallowed_methods, reason = "the system's temporary folder")]
    let base = std::env::temp_dir();
    #[cfg(unix)]
    let builder = {
        let mut builder = std::fs::DirBuilder::new();
        std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
        builder
    };
    // The user's own temporary folder: its access list is theirs.
    #[cfg(windows)]
    let builder = std::fs::DirBuilder::new();
    for _ in 0..8 {
        let name: String = crate::random_bytes::<8>()?
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let path = base.join(format!("{prefix}{name}"));
        match builder.create(&path) {
            Ok(()) => return Ok(PrivateTemp(path)),
            Err(err) if err.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(err) => return Err(err),
        }
    }
    Err(io::Error::new(
        io::ErrorKind::AlreadyExists,
        "no free name for a temporary folder",
    ))
}

/// Writes a private file (0600) outside any project, creating it only if it does not
/// exist: the per-user secret. `Ok(false)` when it existed already.
pub fn create_new_private(path: &Path, bytes: &[u8]) -> Result<bool, DoorError> {
    let shown = path.display().to_string();
    // Written whole under a name of its own, then linked into place: link(2) fails when
    // the name exists (a symlink too), so whoever finds the file finds all of it. Creating
    // it in place and then writing let a concurrent reader see it empty.
    let tag: [u8; 8] = crate::random_bytes().map_err(|e| DoorError::Io(shown.clone(), e))?;
    let mut temp_name = path.file_name().unwrap_or_default().to_os_string();
    temp_name.push(format!(".tmp.{}", crate::hex(&tag)));
    let temp = path.with_file_name(temp_name);
    let written = private_new(&temp)
        .and_then(|mut file| file.write_all(bytes).and_then(|()| file.sync_all()));
    let linked = written.and_then(|()| std::fs::hard_link(&temp, path));
    let _ = std::fs::remove_file(&temp);
    match linked {
        Ok(()) => Ok(true),
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        // A file system without hard links: create in place, as before.
        Err(_) => create_in_place(path, bytes, shown),
    }
}

/// Creates `path` for writing, failing when anything is there (a link too): 0600 on Unix;
/// on Windows the user's folder's inherited permissions (see `Dir::open_or_create_private`).
fn private_new(path: &Path) -> io::Result<File> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    {
        use std::os::unix::fs::OpenOptionsExt;
        options.mode(0o600).custom_flags(libc::O_NOFOLLOW);
    }
    options.open(path)
}

fn create_in_place(path: &Path, bytes: &[u8], shown: String) -> Result<bool, DoorError> {
    match private_new(path) {
        Ok(mut file) => {
            file.write_all(bytes)
                .and_then(|()| file.sync_all())
                .map_err(|e| DoorError::Io(shown, e))?;
            Ok(true)
        }
        Err(err) if err.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(err) => Err(DoorError::Io(shown, err)),
    }
}

/// The size of the regular file at `path` (symlinks followed), `None` when there is none.
pub fn size_outside(path: &Path) -> Option<u64> {
    std::fs::metadata(path)
        .ok()
        .filter(std::fs::Metadata::is_file)
        .map(|m| m.len())
}

/// The first `len` bytes (at most) of the regular file at `path`: a header, never more.
pub fn read_prefix_outside(path: &Path, len: usize) -> Result<Vec<u8>, DoorError> {
    let file = open_outside(path)?;
    let mut out = Vec::with_capacity(len);
    file.take(len as u64)
        .read_to_end(&mut out)
        .map_err(|e| DoorError::Io(path.display().to_string(), e))?;
    Ok(out)
}

/// Whether a path outside the project names an executable regular file (program lookup).
#[cfg(unix)]
pub(crate) fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether a path outside the project names a program Windows starts: a regular file
/// whose extension is `.exe` or `.com`, or a batch file (`.cmd`, `.bat`: npm's shims),
/// which Rust's `Command` starts through `cmd.exe` with its arguments escaped for it.
#[cfg(windows)]
pub(crate) fn is_executable_file(path: &Path) -> bool {
    let runnable = path.extension().and_then(OsStr::to_str).is_some_and(|ext| {
        ["exe", "com", "cmd", "bat"]
            .iter()
            .any(|e| ext.eq_ignore_ascii_case(e))
    });
    runnable && std::fs::metadata(path).is_ok_and(|m| m.is_file())
}

/// Whether anything exists at `path` (no symlink followed).
pub fn exists_no_follow(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Whether the system says nothing is at `path` (no symlink followed): for the hooks'
/// fast path, which may skip work only when the state is surely not there. Any other
/// answer (a file pending deletion, which Windows reports as access denied; a sharing
/// violation; an unreadable folder) is "maybe there".
pub fn surely_absent(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_err_and(|err| err.kind() == io::ErrorKind::NotFound)
}

/// Whether anything is at `path` (symlinks followed): for choosing among paths the user
/// may have meant, never for deciding what to open.
pub fn exists(path: &Path) -> bool {
    path.exists()
}

/// `path` with every symlink resolved. On Windows without the `\\?\` prefix
/// `canonicalize` gives when the path is an ordinary drive or UNC path, so that it reads
/// as the user wrote it, and other programs (git, editors, `cmd`) take it.
pub fn canonical(path: &Path) -> io::Result<PathBuf> {
    let real = path.canonicalize()?;
    #[cfg(windows)]
    let real = win::plain_path(real);
    Ok(real)
}

/// A canonical folder path, or why not.
pub fn canonical_dir(path: &Path) -> io::Result<PathBuf> {
    let real = canonical(path)?;
    if real.is_dir() {
        Ok(real)
    } else {
        Err(io::Error::new(io::ErrorKind::NotADirectory, "not a folder"))
    }
}

/// Ignore SIGXFSZ: a write past `RLIMIT_FSIZE` then fails with `EFBIG`, which the door
/// reports and cleans up after, instead of killing the process mid-write.
pub fn ignore_sigxfsz() {
    // Windows has no SIGXFSZ: a write past a quota fails with an error.
    #[cfg(unix)]
    // SAFETY: setting a signal's disposition to SIG_IGN has no memory-safety preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

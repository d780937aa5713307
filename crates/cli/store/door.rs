//! The one door to files pagent does not own the folder of: every read and write under a
//! project (and under the user's own pagent folder) goes through [`Dir`], and nothing else
//! in the binary opens a path (the root `clippy.toml` bans `std::fs` outside this file).
//!
//! A project is a stranger's until proven otherwise: a cloned repository can hold symlinks
//! to the user's shell start-up files, FIFOs that block whoever opens them, device nodes
//! and sparse files of any size. So the rules are:
//!
//! - **Writes never follow a symlink**, in the last component or in any folder between the
//!   root and the file. Folders are walked with `openat(O_NOFOLLOW | O_DIRECTORY)` one
//!   component at a time (never check-then-open), and only regular files are replaced.
//!   Temp files are created with `O_EXCL`, removed when the write fails, and the stale
//!   ones of killed writers are removed at the next write in the same folder.
//! - **Reads accept only regular files**: the last component is looked at with
//!   `fstatat(AT_SYMLINK_NOFOLLOW)`, opened `O_NONBLOCK` (a FIFO swapped in meanwhile
//!   cannot block) and checked again with `fstat`. Every read has a size cap and says so
//!   when a file is over it. A symlink is followed only while it stays inside the root:
//!   targets are resolved here, component by component, never by the kernel.
//!
//! Paths given to a [`Dir`] are relative, with no `..`; anything else is refused before a
//! system call is made. Files outside any root (a transcript Claude Code names, a PRD the
//! user typed) are read with [`read_outside`] / [`open_outside`]: symlinks followed, as
//! the user asked, but still regular files only, non-blocking and capped.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::collections::VecDeque;
use std::ffi::{CString, OsStr, OsString};
use std::fmt;
use std::fs::File;
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::{OsStrExt, OsStringExt};
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

/// Most symlinks followed while resolving one path for reading (Linux allows 40).
const MAX_HOPS: usize = 40;
/// A temp file left by a writer that is still alive is removed after this long anyway.
const STALE_TEMP: Duration = Duration::from_secs(3600);

/// What kind of thing a path is, for refusals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    File,
    Dir,
    Symlink,
    Fifo,
    Socket,
    Device,
    Other,
}

impl Kind {
    fn of(mode: libc::mode_t) -> Kind {
        match mode & libc::S_IFMT {
            libc::S_IFREG => Kind::File,
            libc::S_IFDIR => Kind::Dir,
            libc::S_IFLNK => Kind::Symlink,
            libc::S_IFIFO => Kind::Fifo,
            libc::S_IFSOCK => Kind::Socket,
            libc::S_IFCHR | libc::S_IFBLK => Kind::Device,
            _ => Kind::Other,
        }
    }

    fn article(self) -> &'static str {
        match self {
            Kind::File => "a file",
            Kind::Dir => "a folder",
            Kind::Symlink => "a symlink",
            Kind::Fifo => "a FIFO",
            Kind::Socket => "a socket",
            Kind::Device => "a device",
            Kind::Other => "not a regular file",
        }
    }
}

/// Why the door refused or failed. Each variant names the path as the caller gave it.
#[derive(Debug)]
pub enum DoorError {
    /// The path is absolute, empty where a file is needed, or has a `..`.
    BadPath(String),
    /// Nothing there.
    Missing(String),
    /// There is something, but not a regular file (or not a folder where one is needed).
    NotRegular(String, Kind),
    /// There is something, but not a folder.
    NotADir(String, Kind),
    /// A symlink where pagent writes, or one that leads out of the root.
    Symlink(String),
    Outside(String),
    TooLarge(String, u64),
    /// The lock stayed taken for longer than the caller would wait.
    Busy(String, Duration),
    Io(String, io::Error),
}

impl DoorError {
    pub fn is_missing(&self) -> bool {
        matches!(self, DoorError::Missing(_))
    }
}

impl fmt::Display for DoorError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            DoorError::BadPath(p) => write!(f, "{p}: not a path inside the folder"),
            DoorError::Missing(p) => write!(f, "{p}: not found"),
            DoorError::NotRegular(p, Kind::Dir) => write!(f, "{p} is a folder, not a file"),
            DoorError::NotRegular(p, kind) => {
                write!(f, "{p} is {}, not a regular file; not read", kind.article())
            }
            DoorError::NotADir(p, kind) => write!(f, "{p} is {}, not a folder", kind.article()),
            DoorError::Symlink(p) => write!(
                f,
                "{p} is (or passes through) a symlink; pagent does not write through symlinks"
            ),
            DoorError::Outside(p) => write!(f, "{p} is a symlink that leads outside the folder"),
            DoorError::TooLarge(p, cap) => write!(f, "{p} is larger than {}; not read", size(*cap)),
            DoorError::Busy(p, waited) => write!(
                f,
                "{p} stayed locked by another pagent process for {} s",
                waited.as_secs()
            ),
            DoorError::Io(p, err) => write!(f, "{p}: {err}"),
        }
    }
}

impl std::error::Error for DoorError {}

fn size(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{} KiB", bytes >> 10)
    }
}

/// A folder pagent reads and writes inside, held open by descriptor: a project root or
/// the user's pagent folder.
#[derive(Debug)]
pub struct Dir {
    root: PathBuf,
    fd: OwnedFd,
}

/// What `lstat` says of a path, for change detection (never for deciding what to open).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stat {
    pub kind: Kind,
    pub size: u64,
    pub ino: u64,
    pub mtime: (i64, i64),
    pub ctime: (i64, i64),
}

/// Holds an exclusive `flock` until dropped.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

/// A walk set up by [`Dir::walk`].
pub type WalkDir = walkdir::WalkDir;

impl Dir {
    /// Opens `root` (a canonical folder path) as the root of every later call.
    pub fn open(root: &Path) -> Result<Dir, DoorError> {
        let shown = root.display().to_string();
        let fd = open_path(
            root,
            libc::O_RDONLY | libc::O_DIRECTORY | libc::O_CLOEXEC,
            &shown,
        )?;
        Ok(Dir {
            root: root.to_path_buf(),
            fd,
        })
    }

    /// Opens `root`, creating it (mode 0700) when it does not exist: the user's folder.
    pub fn open_or_create_private(root: &Path) -> Result<Dir, DoorError> {
        match std::fs::create_dir_all(root) {
            Ok(()) => {}
            Err(err) => return Err(DoorError::Io(root.display().to_string(), err)),
        }
        use std::os::unix::fs::PermissionsExt;
        let _ = std::fs::set_permissions(root, std::fs::Permissions::from_mode(0o700));
        Dir::open(root)
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    /// Reads a whole regular file of at most `cap` bytes; symlinks followed only inside.
    pub fn read(&self, rel: &Path, cap: u64) -> Result<Vec<u8>, DoorError> {
        let file = self.open_read(rel)?;
        read_capped(file, cap, &show(rel))
    }

    /// [`Dir::read`], `None` when the file does not exist.
    pub fn read_if_exists(&self, rel: &Path, cap: u64) -> Result<Option<Vec<u8>>, DoorError> {
        match self.read(rel, cap) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(DoorError::Missing(_)) => Ok(None),
            Err(err) => Err(err),
        }
    }

    /// Opens a regular file for reading (streaming readers: line counts, hashes).
    pub fn open_read(&self, rel: &Path) -> Result<File, DoorError> {
        let shown = show(rel);
        let (parent, name) = self.resolve(rel, &shown, true)?;
        let Some(name) = name else {
            return Err(DoorError::NotRegular(shown, Kind::Dir));
        };
        open_regular_at(&parent, &name, &shown)
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
        let mut parts = self.resolve_components(rel, &shown)?;
        let mut path = self.root.clone();
        let Some(last) = parts.pop() else {
            return Ok(path);
        };
        let parent = self.open_components(&parts, &shown)?;
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

    /// `lstat` of `rel` (bytes, relative), for comparing with what git's index recorded.
    /// Metadata only: the kernel follows links in the folders on the way, which can leak
    /// a size or a time into a digest but never opens anything; `None` when it fails.
    pub fn stat_rel(&self, rel: &[u8]) -> Option<Stat> {
        let name = CString::new(rel).ok()?;
        let st = fstatat(
            std::os::fd::AsFd::as_fd(&self.fd),
            &name,
            libc::AT_SYMLINK_NOFOLLOW,
        )
        .ok()?;
        Some(stat_of(&st))
    }

    /// Walks the whole tree under the root by descriptor, never following a link: calls
    /// `visit` with each entry's path (relative, `/`-separated bytes) and kind, and
    /// descends into a folder only when `visit` returns true for it.
    pub fn walk_tree(&self, visit: &mut dyn FnMut(&[u8], Kind) -> bool) {
        if let Ok(root) = self.dup() {
            walk_fd(&root, &mut Vec::new(), visit, 0);
        }
    }

    /// The names in the folder `rel` (inside the root), unsorted, without `.` and `..`.
    pub fn list(&self, rel: &Path) -> Result<Vec<OsString>, DoorError> {
        let shown = show(rel);
        let parts = self.resolve_components(rel, &shown)?;
        let dir = self.open_components(&parts, &shown)?;
        let mut names = Vec::new();
        for_each_entry(&dir, |name| {
            if name != b"." && name != b".." {
                names.push(OsString::from_vec(name.to_vec()));
            }
        });
        Ok(names)
    }

    /// A walk of the folder `rel` (inside the root), never following links.
    pub fn walk(&self, rel: &Path) -> Result<WalkDir, DoorError> {
        let real = self.real_dir(rel)?;
        Ok(walkdir::WalkDir::new(real).follow_links(false))
    }

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

    fn replace(&self, rel: &Path, bytes: &[u8], durable: bool) -> Result<(), DoorError> {
        let shown = show(rel);
        let (dir, name) = self.parent_for_write(rel, &shown)?;
        refuse_non_regular(&dir, &name, &shown)?;
        remove_stale_temps(&dir, &name);
        let temp = temp_name(&name);
        let result = (|| -> io::Result<()> {
            let fd = openat(
                dir.fd(),
                &temp,
                libc::O_WRONLY | libc::O_CREAT | libc::O_EXCL | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0o644,
            )?;
            let mut file = File::from(fd);
            file.write_all(bytes)?;
            if durable {
                file.sync_all()?;
            }
            renameat(dir.fd(), &temp, dir.fd(), &name)?;
            // Make the rename itself durable.
            if durable { fsync(dir.fd()) } else { Ok(()) }
        })();
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

    fn open_for_write(&self, rel: &Path, extra: i32) -> Result<File, DoorError> {
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
        let fd = openat(
            dir.fd(),
            &name,
            libc::O_RDWR | libc::O_CREAT | libc::O_NOFOLLOW | libc::O_NONBLOCK | libc::O_CLOEXEC,
            0o644,
        )
        .map_err(|e| write_error(e, &shown))?;
        check_regular(&fd, &shown)?;
        let file = File::from(fd);
        let started = Instant::now();
        let mut pause = Duration::from_millis(1);
        loop {
            match file.try_lock() {
                Ok(()) => return Ok(Lock { _file: file }),
                Err(std::fs::TryLockError::WouldBlock) => {}
                Err(std::fs::TryLockError::Error(err)) => return Err(DoorError::Io(shown, err)),
            }
            if started.elapsed() >= wait {
                return Err(DoorError::Busy(shown, started.elapsed()));
            }
            std::thread::sleep(pause);
            pause = (pause * 2).min(Duration::from_millis(50));
        }
    }

    /// Renames `rel` to `new_name` in the same folder (setting a file aside).
    pub fn rename_in_place(&self, rel: &Path, new_name: &str) -> Result<(), DoorError> {
        let shown = show(rel);
        let (dir, name) = self.parent_for_write(rel, &shown)?;
        let to = cstring(OsStr::new(new_name), &shown)?;
        renameat(dir.fd(), &name, dir.fd(), &to).map_err(|e| write_error(e, &shown))
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

    fn dup(&self) -> Result<Fd, DoorError> {
        self.fd
            .try_clone()
            .map(Fd)
            .map_err(|e| DoorError::Io(self.root.display().to_string(), e))
    }

    /// The folder holding `rel` (created as needed, no symlinks anywhere) and the last name.
    fn parent_for_write(&self, rel: &Path, shown: &str) -> Result<(Fd, CString), DoorError> {
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

    /// Resolves `rel` for reading: every folder opened without following links, symlinks
    /// resolved here and only while they stay under the root. Returns the folder that
    /// holds the last component and that component (`None`: `rel` is the root itself, or
    /// resolves to a folder when `last_is_name` is false).
    fn resolve(
        &self,
        rel: &Path,
        shown: &str,
        last_is_name: bool,
    ) -> Result<(Fd, Option<CString>), DoorError> {
        let mut resolved = self.resolve_components(rel, shown)?;
        let last = if last_is_name { resolved.pop() } else { None };
        let dir = self.open_components(&resolved, shown)?;
        match last {
            Some(name) => Ok((dir, Some(cstring(&name, shown)?))),
            None => Ok((dir, None)),
        }
    }

    /// The real components of `rel` under the root: symlinks expanded (inside only).
    fn resolve_components(&self, rel: &Path, shown: &str) -> Result<Vec<OsString>, DoorError> {
        let mut pending: VecDeque<OsString> = normal_components(rel, shown)?.into();
        let mut done: Vec<OsString> = Vec::new();
        let mut hops = 0;
        while let Some(part) = pending.pop_front() {
            if part == ".." {
                if done.pop().is_none() {
                    return Err(DoorError::Outside(shown.to_owned()));
                }
                continue;
            }
            if part == "." || part.is_empty() {
                continue;
            }
            let parent = self.open_components(&done, shown)?;
            let name = cstring(&part, shown)?;
            let st = match fstatat(parent.fd(), &name, libc::AT_SYMLINK_NOFOLLOW) {
                Ok(st) => st,
                Err(err) => return Err(read_error(err, shown)),
            };
            if Kind::of(st.st_mode) != Kind::Symlink {
                done.push(part);
                continue;
            }
            hops += 1;
            if hops > MAX_HOPS {
                return Err(DoorError::Io(
                    shown.to_owned(),
                    io::Error::other("too many levels of symlinks"),
                ));
            }
            let target = readlinkat(parent.fd(), &name).map_err(|e| read_error(e, shown))?;
            let target = PathBuf::from(target);
            let mut spliced: VecDeque<OsString> = VecDeque::new();
            if target.is_absolute() {
                // Absolute targets count only when they point under the root.
                let Ok(inside) = target.strip_prefix(&self.root) else {
                    return Err(DoorError::Outside(shown.to_owned()));
                };
                done.clear();
                spliced.extend(inside.components().map(|c| c.as_os_str().to_owned()));
            } else {
                spliced.extend(target.components().map(|c| match c {
                    Component::ParentDir => OsString::from(".."),
                    other => other.as_os_str().to_owned(),
                }));
            }
            while let Some(item) = spliced.pop_back() {
                pending.push_front(item);
            }
        }
        Ok(done)
    }

    fn open_components(&self, parts: &[OsString], shown: &str) -> Result<Fd, DoorError> {
        let mut dir = self.dup()?;
        for part in parts {
            let name = cstring(part, shown)?;
            dir = Fd(openat(
                dir.fd(),
                &name,
                libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                0,
            )
            .map_err(|e| read_error(e, shown))?);
        }
        Ok(dir)
    }
}

/// Reads a regular file outside any root (symlinks followed: the user named it), capped
/// and non-blocking.
pub fn read_outside(path: &Path, cap: u64) -> Result<Vec<u8>, DoorError> {
    let file = open_outside(path)?;
    read_capped(file, cap, &path.display().to_string())
}

/// Opens a regular file outside any root for reading, non-blocking: never a FIFO or device.
pub fn open_outside(path: &Path) -> Result<File, DoorError> {
    let shown = path.display().to_string();
    let fd = open_path(
        path,
        libc::O_RDONLY | libc::O_NONBLOCK | libc::O_CLOEXEC,
        &shown,
    )?;
    check_regular(&fd, &shown)?;
    Ok(File::from(fd))
}

/// Writes a private file (0600) outside any project, creating it only if it does not
/// exist: the per-user secret. `Ok(false)` when it existed already.
pub fn create_new_private(path: &Path, bytes: &[u8]) -> Result<bool, DoorError> {
    use std::os::unix::fs::OpenOptionsExt;
    let shown = path.display().to_string();
    match std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .custom_flags(libc::O_NOFOLLOW)
        .open(path)
    {
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

/// Whether a path outside the project names an executable regular file (program lookup).
pub fn is_executable_file(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(path).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// Whether anything exists at `path` (no symlink followed): for the hooks' fast path.
pub fn exists_no_follow(path: &Path) -> bool {
    std::fs::symlink_metadata(path).is_ok()
}

/// Whether anything is at `path` (symlinks followed): for choosing among paths the user
/// may have meant, never for deciding what to open.
pub fn exists(path: &Path) -> bool {
    path.exists()
}

/// `path` with every symlink resolved.
pub fn canonical(path: &Path) -> io::Result<PathBuf> {
    path.canonicalize()
}

/// A canonical folder path, or why not.
pub fn canonical_dir(path: &Path) -> io::Result<PathBuf> {
    let real = path.canonicalize()?;
    if real.is_dir() {
        Ok(real)
    } else {
        Err(io::Error::new(io::ErrorKind::NotADirectory, "not a folder"))
    }
}

/// Reads 32 bytes of randomness for secrets and loop ids.
pub fn random_bytes<const N: usize>() -> io::Result<[u8; N]> {
    let mut bytes = [0u8; N];
    File::open("/dev/urandom")?.read_exact(&mut bytes)?;
    Ok(bytes)
}

/// Ignore SIGXFSZ: a write past `RLIMIT_FSIZE` then fails with `EFBIG`, which the door
/// reports and cleans up after, instead of killing the process mid-write.
pub fn ignore_sigxfsz() {
    // SAFETY: setting a signal's disposition to SIG_IGN has no memory-safety preconditions.
    unsafe {
        libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
    }
}

/// An owned descriptor with the helpers below.
#[derive(Debug)]
struct Fd(OwnedFd);

impl Fd {
    fn fd(&self) -> BorrowedFd<'_> {
        use std::os::fd::AsFd;
        self.0.as_fd()
    }
}

fn show(rel: &Path) -> String {
    rel.display().to_string()
}

/// The normal components of a relative path; `..`, roots and prefixes are refused.
fn normal_components(rel: &Path, shown: &str) -> Result<Vec<OsString>, DoorError> {
    let mut parts = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(part) => parts.push(part.to_owned()),
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(DoorError::BadPath(shown.to_owned()));
            }
        }
    }
    Ok(parts)
}

fn cstring(part: &OsStr, shown: &str) -> Result<CString, DoorError> {
    CString::new(part.as_bytes()).map_err(|_| DoorError::BadPath(shown.to_owned()))
}

fn descend_for_write(dir: &Fd, part: &OsStr, shown: &str) -> Result<Fd, DoorError> {
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
fn write_error(err: io::Error, shown: &str) -> DoorError {
    match err.raw_os_error() {
        Some(libc::ELOOP) | Some(libc::ENOTDIR) | Some(libc::EMLINK) => {
            DoorError::Symlink(shown.to_owned())
        }
        _ => DoorError::Io(shown.to_owned(), err),
    }
}

fn read_error(err: io::Error, shown: &str) -> DoorError {
    match err.raw_os_error() {
        Some(libc::ENOENT) => DoorError::Missing(shown.to_owned()),
        Some(libc::ENOTDIR) => DoorError::Missing(shown.to_owned()),
        _ => DoorError::Io(shown.to_owned(), err),
    }
}

fn refuse_non_regular(dir: &Fd, name: &CString, shown: &str) -> Result<(), DoorError> {
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

fn open_regular_at(dir: &Fd, name: &CString, shown: &str) -> Result<File, DoorError> {
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

fn check_regular(fd: &OwnedFd, shown: &str) -> Result<(), DoorError> {
    // SAFETY: fstat on an owned, open descriptor into a zeroed stat buffer.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstat(fd.as_raw_fd(), &raw mut st) } != 0 {
        return Err(DoorError::Io(shown.to_owned(), io::Error::last_os_error()));
    }
    match Kind::of(st.st_mode) {
        Kind::File => Ok(()),
        kind => Err(DoorError::NotRegular(shown.to_owned(), kind)),
    }
}

fn read_capped(file: File, cap: u64, shown: &str) -> Result<Vec<u8>, DoorError> {
    let len = file.metadata().map(|m| m.len()).unwrap_or(0);
    if len > cap {
        return Err(DoorError::TooLarge(shown.to_owned(), cap));
    }
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| DoorError::Io(shown.to_owned(), e))?;
    if bytes.len() as u64 > cap {
        return Err(DoorError::TooLarge(shown.to_owned(), cap));
    }
    Ok(bytes)
}

fn open_path(path: &Path, flags: i32, shown: &str) -> Result<OwnedFd, DoorError> {
    let c = CString::new(path.as_os_str().as_bytes())
        .map_err(|_| DoorError::BadPath(shown.to_owned()))?;
    // SAFETY: open with a NUL-terminated path; the returned descriptor is owned below.
    let fd = unsafe { libc::open(c.as_ptr(), flags) };
    if fd < 0 {
        return Err(read_error(io::Error::last_os_error(), shown));
    }
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn openat(
    dir: BorrowedFd<'_>,
    name: &CString,
    flags: i32,
    mode: libc::c_uint,
) -> io::Result<OwnedFd> {
    // SAFETY: openat with a valid descriptor and a NUL-terminated name.
    let fd = unsafe { libc::openat(dir.as_raw_fd(), name.as_ptr(), flags, mode) };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is a fresh descriptor nobody else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd) })
}

fn fstatat(dir: BorrowedFd<'_>, name: &CString, flags: i32) -> io::Result<libc::stat> {
    // SAFETY: fstatat into a zeroed buffer with a valid descriptor and NUL-terminated name.
    let mut st: libc::stat = unsafe { std::mem::zeroed() };
    if unsafe { libc::fstatat(dir.as_raw_fd(), name.as_ptr(), &raw mut st, flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(st)
}

fn readlinkat(dir: BorrowedFd<'_>, name: &CString) -> io::Result<OsString> {
    let mut buf = vec![0u8; 4096];
    // SAFETY: readlinkat writes at most `buf.len()` bytes into `buf`.
    let n = unsafe {
        libc::readlinkat(
            dir.as_raw_fd(),
            name.as_ptr(),
            buf.as_mut_ptr().cast(),
            buf.len(),
        )
    };
    let n = usize::try_from(n).map_err(|_| io::Error::last_os_error())?;
    buf.truncate(n);
    Ok(OsString::from_vec(buf))
}

fn renameat(
    from_dir: BorrowedFd<'_>,
    from: &CString,
    to_dir: BorrowedFd<'_>,
    to: &CString,
) -> io::Result<()> {
    // SAFETY: renameat with valid descriptors and NUL-terminated names.
    let rc = unsafe {
        libc::renameat(
            from_dir.as_raw_fd(),
            from.as_ptr(),
            to_dir.as_raw_fd(),
            to.as_ptr(),
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn unlinkat(dir: BorrowedFd<'_>, name: &CString, flags: i32) -> io::Result<()> {
    // SAFETY: unlinkat with a valid descriptor and a NUL-terminated name.
    if unsafe { libc::unlinkat(dir.as_raw_fd(), name.as_ptr(), flags) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

fn fsync(fd: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: fsync on a valid descriptor.
    if unsafe { libc::fsync(fd.as_raw_fd()) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(())
}

/// `.NAME.PID.NANOS.tmp`: unique per writer, recognisable as NAME's temp file.
fn temp_name(name: &CString) -> CString {
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
fn remove_stale_temps(dir: &Fd, name: &CString) {
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
        // SAFETY: kill with signal 0 only asks whether the process exists.
        let owner_dead = pid.is_some_and(|pid| {
            pid > 0
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

fn stat_of(st: &libc::stat) -> Stat {
    Stat {
        kind: Kind::of(st.st_mode),
        size: u64::try_from(st.st_size).unwrap_or(0),
        ino: st.st_ino,
        mtime: (st.st_mtime, st.st_mtime_nsec),
        ctime: (st.st_ctime, st.st_ctime_nsec),
    }
}

/// Folders deeper than this are not walked (a loop of bind mounts, a pathological tree).
const MAX_DEPTH: usize = 256;

fn walk_fd(
    dir: &Fd,
    prefix: &mut Vec<u8>,
    visit: &mut dyn FnMut(&[u8], Kind) -> bool,
    depth: usize,
) {
    let mut entries: Vec<(Vec<u8>, u8)> = Vec::new();
    for_each_typed_entry(dir, |name, d_type| {
        if name != b"." && name != b".." {
            entries.push((name.to_vec(), d_type));
        }
    });
    for (name, d_type) in entries {
        let len = prefix.len();
        if !prefix.is_empty() {
            prefix.push(b'/');
        }
        prefix.extend_from_slice(&name);
        let kind = match d_type {
            libc::DT_DIR => Kind::Dir,
            libc::DT_REG => Kind::File,
            libc::DT_LNK => Kind::Symlink,
            libc::DT_FIFO => Kind::Fifo,
            libc::DT_SOCK => Kind::Socket,
            libc::DT_CHR | libc::DT_BLK => Kind::Device,
            _ => CString::new(name.clone())
                .ok()
                .and_then(|c| fstatat(dir.fd(), &c, libc::AT_SYMLINK_NOFOLLOW).ok())
                .map_or(Kind::Other, |st| Kind::of(st.st_mode)),
        };
        if visit(prefix, kind) && kind == Kind::Dir && depth < MAX_DEPTH {
            let opened = CString::new(name).ok().and_then(|c| {
                openat(
                    dir.fd(),
                    &c,
                    libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC,
                    0,
                )
                .ok()
            });
            if let Some(child) = opened {
                walk_fd(&Fd(child), prefix, visit, depth + 1);
            }
        }
        prefix.truncate(len);
    }
}

/// Calls `f` with each name in the folder `dir` (including `.` and `..`).
fn for_each_entry(dir: &Fd, mut f: impl FnMut(&[u8])) {
    for_each_typed_entry(dir, |name, _| f(name));
}

/// Calls `f` with each name in the folder `dir` and its `d_type` (including `.` and `..`).
fn for_each_typed_entry(dir: &Fd, mut f: impl FnMut(&[u8], u8)) {
    let Ok(listing) = dir.0.try_clone() else {
        return;
    };
    // SAFETY: fdopendir takes ownership of the duplicated descriptor; closedir frees both.
    let handle = unsafe { libc::fdopendir(std::os::fd::IntoRawFd::into_raw_fd(listing)) };
    if handle.is_null() {
        return;
    }
    loop {
        // SAFETY: readdir on an open DIR*; the entry stays valid until the next call.
        let entry = unsafe { libc::readdir(handle) };
        if entry.is_null() {
            break;
        }
        // SAFETY: d_name is NUL-terminated within the entry; d_type is a plain byte.
        let (name, d_type) = unsafe {
            (
                std::ffi::CStr::from_ptr((*entry).d_name.as_ptr()),
                (*entry).d_type,
            )
        };
        f(name.to_bytes(), d_type);
    }
    // SAFETY: closes the DIR* opened above (and its descriptor).
    unsafe {
        libc::closedir(handle);
    }
}

#[cfg(test)]
mod tests;

//! The one door to files pagent does not own the folder of: every read and write under a
//! project (and under the user's own pagent folder) goes through [`Dir`], and nothing else
//! in pagent opens a path (the root `clippy.toml` bans `std::fs` outside this crate).
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
//!
//! The rooms: [`read`] (regular files only, capped), [`write`] (atomic replace, append,
//! locks, no symlink followed), [`remove`] (a whole folder, links removed as links),
//! [`walk`] (listing and walking a tree without leaving it),
//! [`resolve`] (paths taken apart and followed inside the root), [`outside`] (files the
//! user named, outside any root) and [`sys`] (the system calls, one safe wrapper each,
//! one file per system where they differ); on Windows `win` in place of the first five
//! and `sys`, with [`names`] (the names Windows reads as something else) and [`os`] (a
//! path's own bytes, for keys, on every system).
//!
//! **Windows** has the same rules, made of handles: `NtCreateFile` relative to a folder
//! handle is its `openat`, `FILE_OPEN_REPARSE_POINT` its `O_NOFOLLOW`, and every file is
//! checked once more by its final path; stream and device names (`file.txt:stream`,
//! `NUL`, `con.txt`) are refused before any call; replace is a rename by handle. Each
//! guarantee is argued in `win/mod.rs`; `docs/windows.md` says what is proven where.
//!
//! **Linux and macOS.** Both have the POSIX calls the rules above are made of, with the
//! same meaning, so one door serves both; `scripts/check-macos.sh` compiles and lints it
//! for macOS on every CI run, and the release workflow tests it on macOS runners. What
//! each guarantee rests on there:
//!
//! - *No symlink followed on write*: `openat(O_NOFOLLOW | O_DIRECTORY)` per component;
//!   both refuse a symlink so with `ELOOP` (FreeBSD says `EMLINK`; all read as a
//!   refusal). Nothing here needs Linux's `O_PATH`, `openat2` or `/proc/self/fd`: folders
//!   are opened for reading, which both allow, and one the user cannot read is refused.
//! - *Regular files only, never a block*: `fstatat(AT_SYMLINK_NOFOLLOW)`, an `O_NONBLOCK`
//!   open, then `fstat`, on both (no `statx`: `struct stat` has all the door reads). A
//!   FIFO so opened returns at once on both; `/dev/stdout` is a symlink on both.
//! - *The index's stat data*: [`Stat`] comes from `struct stat`, whose nanosecond times
//!   the libc crate names `st_mtime_nsec`/`st_ctime_nsec` on both (Linux's `st_mtim`,
//!   macOS's `st_mtimespec`); git fills its index from the same fields (its macOS build
//!   sets `USE_ST_TIMESPEC`), and keeps inode numbers (64-bit on both, APFS's too) and
//!   sizes to their low 32 bits, as the fingerprint compares them.
//! - *Durable replace*: the temp file is synced with `File::sync_all` and the folder
//!   after the rename with `sys::sync_durably`; on macOS both are `F_FULLFSYNC`, since
//!   `fsync` there leaves the data in the drive's cache.
//! - *Locks and limits*: `flock` (`File::try_lock`) is dropped by the kernel when its
//!   holder dies, on both; `SIGXFSZ` means the same on both, so [`ignore_sigxfsz`] turns
//!   a write past `RLIMIT_FSIZE` into an `EFBIG` the door reports.
//! - *Names*: macOS's usual file systems ignore case and Unicode normalisation. The door
//!   never compares names to decide what to open, the kernel resolves each component, so
//!   a symlink is seen as one however it is spelled; an absolute symlink's target is
//!   matched against the root byte for byte, so one spelled in another case reads as
//!   outside: refused, never followed.
//!
//! Outside the door, the same holds: the user's home comes from the password database
//! through `getpwuid_r` (NSS on Linux, Open Directory on macOS; `home.rs`), and
//! children get their own process group through `posix_spawn`'s process-group attribute
//! on both (`Command::process_group`); pagent uses neither `setsid` nor `/proc`.

mod home;
#[cfg_attr(unix, allow(dead_code))] // applied on Windows, tested everywhere
mod names;
mod os;
mod outside;
#[cfg(unix)]
mod read;
#[cfg(unix)]
mod remove;
#[cfg(unix)]
mod resolve;
#[cfg(unix)]
mod sys;
#[cfg(unix)]
mod walk;
#[cfg(windows)]
mod win;
#[cfg(unix)]
mod write;

#[cfg(unix)]
use std::collections::VecDeque;
#[cfg(unix)]
use std::ffi::CString;
use std::ffi::{OsStr, OsString};
use std::fs::File;
use std::io::{self, Read, Write};
#[cfg(unix)]
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
#[cfg(unix)]
use std::os::unix::ffi::{OsStrExt, OsStringExt};
#[cfg(windows)]
use std::os::windows::io::OwnedHandle;
use std::path::{Component, Path, PathBuf};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

pub use home::{absolute_real, passwd_home};
pub use os::*;
pub use outside::*;
#[cfg(unix)]
use read::*;
#[cfg(unix)]
use resolve::*;
#[cfg(unix)]
use sys::*;
#[cfg(unix)]
use walk::*;
#[cfg(windows)]
use win::{KnownFolder, known_folder};

/// What kind of thing a path is, for refusals.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[cfg_attr(windows, allow(dead_code))] // Windows file systems hold no FIFOs or sockets
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
    #[cfg(unix)]
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

    /// The kind as a noun phrase: "a symlink", "a folder".
    pub fn article(self) -> &'static str {
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
#[derive(Debug, thiserror::Error)]
pub enum DoorError {
    /// The path is absolute, empty where a file is needed, or has a `..`.
    #[error("{0}: not a path inside the folder")]
    BadPath(String),
    /// Nothing there.
    #[error("{0}: not found")]
    Missing(String),
    /// There is something, but not a regular file (or not a folder where one is needed).
    #[error("{}", not_regular(.0, *.1))]
    NotRegular(String, Kind),
    /// There is something, but not a folder.
    #[error("{path} is {kind}, not a folder", path = .0, kind = .1.article())]
    NotADir(String, Kind),
    /// A symlink where pagent writes, or one that leads out of the root.
    #[error("{0} is (or passes through) a symlink; pagent does not write through symlinks")]
    Symlink(String),
    #[error("{0} is a symlink that leads outside the folder")]
    Outside(String),
    /// Windows: a symbolic link, junction or mount point (a name-surrogate reparse
    /// point), which the Windows door never follows, inside the root or out of it.
    #[cfg_attr(unix, allow(dead_code))]
    #[error(
        "{0} is (or passes through) a symlink or junction; pagent on Windows does not follow them"
    )]
    Reparse(String),
    #[error("{path} is larger than {cap}; not read", path = .0, cap = size(*.1))]
    TooLarge(String, u64),
    /// The lock stayed taken for longer than the caller would wait.
    #[error("{path} stayed locked by another pagent process for {secs} s", path = .0, secs = .1.as_secs())]
    Busy(String, Duration),
    #[error("{0}: {1}")]
    Io(String, io::Error),
}

impl DoorError {
    pub fn is_missing(&self) -> bool {
        matches!(self, DoorError::Missing(_))
    }
}

fn not_regular(path: &str, kind: Kind) -> String {
    match kind {
        Kind::Dir => format!("{path} is a folder, not a file"),
        kind => format!("{path} is {}, not a regular file; not read", kind.article()),
    }
}

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
    #[cfg(unix)]
    fd: OwnedFd,
    #[cfg(windows)]
    handle: OwnedHandle,
    /// The root's final path as Windows names it, which every file read must be under.
    #[cfg(windows)]
    final_root: Vec<u16>,
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

/// Whole-file reads, the same on every system over its own [`Dir::open_read`] (which
/// follows symlinks only inside the root on Unix, and no link at all on Windows).
impl Dir {
    /// Reads a whole regular file of at most `cap` bytes.
    pub fn read(&self, rel: &Path, cap: u64) -> Result<Vec<u8>, DoorError> {
        let (file, len) = self.open_read_sized(rel)?;
        read_capped(&file, len, cap, &show(rel))
    }

    /// [`Dir::read_if_exists`] for a file [`Dir::write_atomic_swapping`] writes: once
    /// swapped out, the file a reader holds open is the next write's, rewritten in place.
    /// So the file is looked at before and after it is read, and read again (from its name,
    /// where the new one is whole) if it changed meanwhile; a few times at most, then what
    /// was read is returned for the caller's parser to judge.
    pub fn read_settled(&self, rel: &Path, cap: u64) -> Result<Option<Vec<u8>>, DoorError> {
        let shown = show(rel);
        let mut tries = 0;
        loop {
            let (file, len) = match self.open_read_sized(rel) {
                Ok(opened) => opened,
                Err(DoorError::Missing(_)) => return Ok(None),
                Err(err) => return Err(err),
            };
            let before = looked(&file);
            let bytes = read_capped(&file, len, cap, &shown)?;
            tries += 1;
            if tries >= SETTLE_TRIES || before.is_some() && looked(&file) == before {
                return Ok(Some(bytes));
            }
        }
    }

    /// [`Dir::read`], `None` when the file does not exist.
    pub fn read_if_exists(&self, rel: &Path, cap: u64) -> Result<Option<Vec<u8>>, DoorError> {
        match self.read(rel, cap) {
            Ok(bytes) => Ok(Some(bytes)),
            Err(DoorError::Missing(_)) => Ok(None),
            Err(err) => Err(err),
        }
    }
}

/// Markers: a short value kept by name in pagent's own folders (the newest generation of
/// a project's state), replaced on every Stop and read before it.
///
/// On Unix a marker is a symlink whose target is the value, never followed: made beside
/// its name and renamed over it, so a reader sees the old value or the new one, and read
/// in one call. A symlink this short lives in its inode, so replacing one writes no data
/// block; a regular file replaced on every Stop cost ext4 a forced write-back of the new
/// file and a freed block for the old one (190 µs against 21 µs on the machine of
/// BENCHMARKS.md). Like [`Dir::write_atomic_unsynced`], not made durable. On Windows,
/// where a symlink needs a privilege, a marker is a small file.
impl Dir {
    /// Sets the marker `rel` to `value` (up to 255 bytes, not empty, no NUL).
    pub fn write_marker(&self, rel: &Path, value: &str) -> Result<(), DoorError> {
        if value.is_empty() || value.len() > MARKER_MAX || value.contains('\0') {
            return Err(DoorError::BadPath(format!("{} = {value:?}", show(rel))));
        }
        #[cfg(unix)]
        return self.replace_link(rel, value);
        #[cfg(windows)]
        return self.write_atomic_unsynced(rel, value.as_bytes());
    }

    /// The marker `rel`'s value; `None` when there is none (or something else is there).
    pub fn read_marker(&self, rel: &Path) -> Result<Option<String>, DoorError> {
        #[cfg(unix)]
        let value = self.read_link(rel)?;
        #[cfg(windows)]
        let value = self.read_if_exists(rel, MARKER_MAX as u64)?;
        Ok(value.map(|bytes| String::from_utf8_lossy(&bytes).into_owned()))
    }
}

/// The longest value a marker holds.
const MARKER_MAX: usize = 255;

/// Holds an exclusive lock on an open file (`flock`, or `LockFileEx` on Windows) until
/// dropped.
#[derive(Debug)]
pub struct Lock {
    _file: File,
}

impl Lock {
    /// Whether the locked file is the one `name` in `dir` names now.
    #[cfg(unix)]
    fn is_at(&self, dir: &Fd, name: &CString) -> bool {
        let same = |a: &libc::stat, b: &libc::stat| a.st_dev == b.st_dev && a.st_ino == b.st_ino;
        match (
            fstat(self._file.as_fd()),
            fstatat(dir.fd(), name, libc::AT_SYMLINK_NOFOLLOW),
        ) {
            (Ok(held), Ok(named)) => same(&held, &named),
            _ => false,
        }
    }

    /// Takes the lock on `file`, trying again with a growing pause (1 ms up to 50 ms) for
    /// at most `wait`; then [`DoorError::Busy`].
    fn wait_for(file: File, shown: String, wait: Duration) -> Result<Lock, DoorError> {
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
}

/// A walk set up by [`Dir::walk`].
pub type WalkDir = walkdir::WalkDir;

#[cfg(unix)]
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

    /// Opens `root`, creating it when it does not exist, and makes it private (mode 0700):
    /// the user's folder. The hooks open it on every state write: a folder already
    /// private costs an open and a look at it, nothing written.
    pub fn open_or_create_private(root: &Path) -> Result<Dir, DoorError> {
        let shown = || root.display().to_string();
        let dir = match Dir::open(root) {
            Err(DoorError::Missing(_)) => {
                std::fs::create_dir_all(root).map_err(|err| DoorError::Io(shown(), err))?;
                Dir::open(root)?
            }
            opened => opened?,
        };
        // As before this look: a folder pagent cannot make private (another owner's) is
        // still opened.
        if fstat(dir.fd.as_fd()).map_or(true, |st| st.st_mode & 0o7777 != 0o700) {
            let _ = fchmod(dir.fd.as_fd(), 0o700);
        }
        Ok(dir)
    }
}

impl Dir {
    pub fn root(&self) -> &Path {
        &self.root
    }
}

pub(crate) fn show(rel: &Path) -> String {
    rel.display().to_string()
}

/// The normal components of a relative path; `..`, roots and prefixes are refused, and on
/// Windows the names [`names`] refuses (streams, devices, trailing dots).
pub(crate) fn normal_components(rel: &Path, shown: &str) -> Result<Vec<OsString>, DoorError> {
    let mut parts = Vec::new();
    for component in rel.components() {
        match component {
            Component::Normal(part) => {
                #[cfg(windows)]
                {
                    use std::os::windows::ffi::OsStrExt as _;
                    let wide: Vec<u16> = part.encode_wide().collect();
                    if names::windows_name_problem(&wide).is_some() {
                        return Err(DoorError::BadPath(shown.to_owned()));
                    }
                }
                parts.push(part.to_owned());
            }
            Component::CurDir => {}
            Component::ParentDir | Component::RootDir | Component::Prefix(_) => {
                return Err(DoorError::BadPath(shown.to_owned()));
            }
        }
    }
    Ok(parts)
}

/// How many times [`Dir::read_settled`] reads a file that keeps changing.
const SETTLE_TRIES: usize = 3;

/// What tells one version of an open file from the next: its size and its times of
/// change (`None` where they cannot be had).
fn looked(file: &File) -> Option<(u64, Option<SystemTime>, Option<SystemTime>)> {
    let meta = file.metadata().ok()?;
    #[cfg(unix)]
    let changed = {
        use std::os::unix::fs::MetadataExt;
        u64::try_from(meta.ctime())
            .ok()
            .and_then(|s| UNIX_EPOCH.checked_add(Duration::new(s, 0)))
            .and_then(|t| t.checked_add(Duration::from_nanos(meta.ctime_nsec().unsigned_abs())))
    };
    #[cfg(windows)]
    let changed = None;
    Some((meta.len(), meta.modified().ok(), changed))
}

/// Reads `file` whole, at most `cap` bytes; `len` is its size when opened (the buffer's
/// first size: a file that grew meanwhile is still read to its end, or to the cap).
pub(crate) fn read_capped(
    file: &File,
    len: u64,
    cap: u64,
    shown: &str,
) -> Result<Vec<u8>, DoorError> {
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

// The Unix door against symlinks, FIFOs and devices; the Windows door's own are in
// `win/tests.rs`.
#[cfg(test)]
#[cfg(unix)]
mod tests;

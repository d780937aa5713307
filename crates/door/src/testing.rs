//! The raw system calls pagent's test suites make, as safe functions (the `testing`
//! feature): planting a FIFO, signalling a child or its group, asking whether a process
//! is still there, running a command under a file size limit, reaping a child with its
//! peak memory. So the test crates, like every crate but this one, forbid `unsafe`.
//!
//! Unix only: the suites that need these run on Linux and macOS (the Windows build is
//! tested through its own door tests and under Wine, driven from Linux).

#![cfg(unix)]

use std::ffi::CString;
use std::io;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::Command;

/// A signal number (`libc`'s).
pub type Signal = libc::c_int;
pub use libc::{SIGHUP, SIGINT, SIGKILL, SIGTERM};

/// Starts `command` with SIGHUP at its default action, whatever this process has it at:
/// a test run under `nohup` ignores it, and a child inherits that.
pub fn with_default_hangup(command: &mut Command) {
    // SAFETY: `signal` is async-signal-safe, called in the child between fork and exec,
    // touching nothing of the parent's.
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGHUP, libc::SIG_DFL);
            Ok(())
        });
    }
}

/// Creates a FIFO at `path` with `mode` (what a hostile repository plants).
pub fn make_fifo(path: &Path, mode: u32) -> io::Result<()> {
    let c = CString::new(path.as_os_str().as_bytes())?;
    let mode = libc::mode_t::try_from(mode).map_err(io::Error::other)?;
    // SAFETY: `c` is a NUL-terminated path that outlives the call; mkfifo reads it only.
    if unsafe { libc::mkfifo(c.as_ptr(), mode) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// Sends `signal` to the process `pid`, or to the process group `-pid` when `pid` is
/// negative (`kill(2)`); whether it was sent.
pub fn signal(pid: i32, signal: Signal) -> bool {
    // SAFETY: kill(2) takes two integers and touches no memory of ours.
    unsafe { libc::kill(pid, signal) == 0 }
}

/// Whether a process `pid` is there to be signalled (`kill(pid, 0)`; a zombie counts).
pub fn is_alive(pid: i32) -> bool {
    signal(pid, 0)
}

/// Whether the tests run as root (who ignores file permissions).
pub fn is_root() -> bool {
    // SAFETY: geteuid(2) takes nothing, cannot fail and touches no memory.
    unsafe { libc::geteuid() == 0 }
}

/// Makes `command` start with files limited to `bytes` (`RLIMIT_FSIZE`) and SIGXFSZ
/// ignored, so a write past the limit fails with `EFBIG` (as a full disk fails one).
pub fn limit_file_size(command: &mut Command, bytes: u64) {
    let limit = libc::rlimit {
        rlim_cur: bytes as libc::rlim_t,
        rlim_max: bytes as libc::rlim_t,
    };
    let in_child = move || {
        // SAFETY: signal(2) and setrlimit(2) are async-signal-safe, as the code between
        // fork and exec must be; `limit` is a copy owned by this closure.
        unsafe {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            if libc::setrlimit(libc::RLIMIT_FSIZE, &raw const limit) != 0 {
                return Err(io::Error::last_os_error());
            }
        }
        Ok(())
    };
    // SAFETY: the closure makes only async-signal-safe calls and allocates nothing.
    unsafe {
        command.pre_exec(in_child);
    }
}

/// Makes `command` start with at most `files` open file descriptors (`RLIMIT_NOFILE`):
/// a process that runs out of them, as one flooded with connections does.
pub fn limit_open_files(command: &mut Command, files: u64) {
    let limit = libc::rlimit {
        rlim_cur: files as libc::rlim_t,
        rlim_max: files as libc::rlim_t,
    };
    let in_child = move || {
        // SAFETY: setrlimit(2) is async-signal-safe, as the code between fork and exec
        // must be; `limit` is a copy owned by this closure.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &raw const limit) } != 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    };
    // SAFETY: the closure makes only an async-signal-safe call and allocates nothing.
    unsafe {
        command.pre_exec(in_child);
    }
}

/// How a reaped child ended, and the most memory it held.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reaped {
    /// Its exit code; `None` when a signal ended it.
    pub code: Option<i32>,
    /// Its peak resident memory in KiB (`ru_maxrss`, which macOS counts in bytes).
    pub max_rss_kb: i64,
}

/// Reaps the child `pid` once it has ended (`wait4`): `None` while it runs, unless
/// `block`, which waits for its end.
pub fn reap(pid: i32, block: bool) -> Option<Reaped> {
    let mut status = 0;
    // SAFETY: all-zero is a valid `rusage` (plain integers and timevals).
    let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
    let flags = if block { 0 } else { libc::WNOHANG };
    // SAFETY: both out-pointers are valid for the call and point at values we own.
    let done = unsafe { libc::wait4(pid, &raw mut status, flags, &raw mut usage) };
    if done != pid {
        return None;
    }
    #[allow(clippy::useless_conversion)] // a C long: i64 where pagent is tested
    let max_rss = i64::from(usage.ru_maxrss);
    Some(Reaped {
        code: libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status)),
        max_rss_kb: if cfg!(target_os = "macos") {
            max_rss / 1024
        } else {
            max_rss
        },
    })
}

#[cfg(test)]
mod tests {
    use std::os::unix::fs::FileTypeExt;

    use super::*;

    #[test]
    fn a_fifo_is_made_and_a_child_is_signalled_and_reaped() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        make_fifo(&fifo, 0o600).unwrap();
        assert!(
            std::fs::symlink_metadata(&fifo)
                .unwrap()
                .file_type()
                .is_fifo()
        );
        // Reaped below by `reap`, not by `Child::wait`.
        #[allow(clippy::zombie_processes)]
        let child = Command::new("sleep").arg("30").spawn().unwrap();
        let pid = i32::try_from(child.id()).unwrap();
        assert!(is_alive(pid));
        assert!(signal(pid, SIGKILL));
        let reaped = reap(pid, true).unwrap();
        assert_eq!(reaped.code, None);
        assert!(!is_alive(pid));
    }
}

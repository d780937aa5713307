//! The system side of the process door, each call behind a small safe wrapper: the
//! shell's path, the neutral folder, process groups and their signals, and `poll` on
//! output pipes. This is the one file a macOS or Windows (job objects) branch needs.

use std::os::fd::{AsRawFd, BorrowedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;
use std::time::Duration;

/// The POSIX shell, by absolute path.
pub(super) const SHELL: &str = "/bin/sh";
/// A folder every system has and no project can write into.
pub(super) const NEUTRAL_DIR: &str = "/";

pub use libc::{SIGINT, SIGKILL, SIGTERM};

/// Starts the child as the leader of a new process group, so its whole group can be
/// signalled (and a terminal's Ctrl-C reaches pagent, which stops it deliberately).
pub(super) fn own_group(command: &mut Command) {
    command.process_group(0);
}

/// Sends `signal` to the process group `pgid` (a child started with [`own_group`]).
pub fn signal_group(pgid: u32, signal: libc::c_int) {
    if let Ok(pgid) = i32::try_from(pgid)
        && pgid > 0
    {
        // SAFETY: kill(2) with a negative pid signals a process group; it has no
        // memory-safety preconditions.
        unsafe {
            libc::kill(-pgid, signal);
        }
    }
}

/// Sends `signal` to the one process `pid` (a child left in the caller's group).
pub(super) fn signal_process(pid: u32, signal: libc::c_int) {
    if let Ok(pid) = i32::try_from(pid)
        && pid > 0
    {
        // SAFETY: kill(2) of our own child's pid; no memory-safety preconditions.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// What `poll` said of one pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Ready {
    /// Bytes to read, or the end (a read returns 0).
    Readable,
    Idle,
}

/// Waits up to `timeout` until one of `fds` can be read (or has ended); one answer per
/// descriptor. An interrupted or failed `poll` reads as idle.
pub(super) fn poll_readable(fds: &[BorrowedFd<'_>], timeout: Duration) -> Vec<Ready> {
    let mut polled: Vec<libc::pollfd> = fds
        .iter()
        .map(|fd| libc::pollfd {
            fd: fd.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        })
        .collect();
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    let Ok(count) = libc::nfds_t::try_from(polled.len()) else {
        return vec![Ready::Idle; fds.len()];
    };
    // SAFETY: poll(2) reads and writes exactly `count` pollfd structs of `polled`.
    let rc = unsafe { libc::poll(polled.as_mut_ptr(), count, millis) };
    if rc <= 0 {
        return vec![Ready::Idle; fds.len()];
    }
    polled
        .iter()
        .map(|p| {
            if p.revents & (libc::POLLIN | libc::POLLHUP | libc::POLLERR | libc::POLLNVAL) != 0 {
                Ready::Readable
            } else {
                Ready::Idle
            }
        })
        .collect()
}

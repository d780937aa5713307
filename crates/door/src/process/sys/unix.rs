//! The process door on Linux and macOS, each call behind a small safe wrapper: the
//! shell's path, the neutral folder, process groups and their signals, and `poll` on
//! output pipes.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::process::{Child, Command};
use std::time::Duration;

use std::os::unix::process::CommandExt;

use super::Ready;

/// The POSIX shell, by absolute path (never looked up: `sh` on a `PATH` of `.` would be
/// the project's).
pub(in crate::process) fn shell(_path: &super::super::SearchPath) -> std::path::PathBuf {
    std::path::PathBuf::from("/bin/sh")
}
/// A folder every system has and no project can write into.
pub(in crate::process) const NEUTRAL_DIR: &str = "/";

pub use libc::{SIGINT, SIGKILL, SIGTERM};

/// A signal's number.
pub type Signal = libc::c_int;
/// A pipe as `poll` takes it.
pub type Raw<'a> = BorrowedFd<'a>;

/// The pipe `poll_readable` waits on.
pub(in crate::process) fn raw(pipe: &std::io::PipeReader) -> Raw<'_> {
    pipe.as_fd()
}

/// A child's stdout or stderr as a pipe reader.
pub(in crate::process) fn pipe_reader(stream: impl Into<OwnedFd>) -> std::io::PipeReader {
    std::io::PipeReader::from(stream.into())
}

/// Nothing to do once a child runs: its group was made by `posix_spawn`.
pub(in crate::process) fn adopt(_child: &Child, _own_group: bool) {}

/// Starts the child as the leader of a new process group, so its whole group can be
/// signalled (and a terminal's Ctrl-C reaches pagent, which stops it deliberately).
pub(in crate::process) fn own_group(command: &mut Command) {
    command.process_group(0);
}

/// Sends `signal` to the process group `pgid` (a child started with [`own_group`]).
pub fn signal_group(pgid: u32, signal: Signal) {
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
pub(in crate::process) fn signal_process(pid: u32, signal: Signal) {
    if let Ok(pid) = i32::try_from(pid)
        && pid > 0
    {
        // SAFETY: kill(2) of our own child's pid; no memory-safety preconditions.
        unsafe {
            libc::kill(pid, signal);
        }
    }
}

/// Waits up to `timeout` until one of `fds` can be read (or has ended); one answer per
/// descriptor. An interrupted or failed `poll` reads as idle.
pub(in crate::process) fn poll_readable(fds: &[BorrowedFd<'_>], timeout: Duration) -> Vec<Ready> {
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

/// What [`wait_relay`] saw.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::process) enum Relay {
    /// `from` has bytes, or its end (a read will not wait).
    Readable,
    /// The other end of `to` has gone entirely: closed, or shut both ways.
    Gone,
    Idle,
}

/// Waits up to `timeout` until the socket `from` can be read or the other end of `to`
/// has gone entirely (`POLLHUP`; a peer that only shut its writing half is not gone,
/// that is `POLLRDHUP`). An interrupted or failed `poll` reads as idle.
pub(in crate::process) fn wait_relay(
    from: BorrowedFd<'_>,
    to: BorrowedFd<'_>,
    timeout: Duration,
) -> Relay {
    let mut polled = [
        libc::pollfd {
            fd: from.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        },
        // No event asked: POLLHUP and POLLERR are always reported.
        libc::pollfd {
            fd: to.as_raw_fd(),
            events: 0,
            revents: 0,
        },
    ];
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: poll(2) reads and writes exactly the two pollfd structs of `polled`.
    let rc = unsafe { libc::poll(polled.as_mut_ptr(), 2, millis) };
    let ended = libc::POLLHUP | libc::POLLERR | libc::POLLNVAL;
    if rc <= 0 {
        Relay::Idle
    } else if polled[0].revents & (libc::POLLIN | ended) != 0 {
        Relay::Readable
    } else if polled[1].revents & ended != 0 {
        Relay::Gone
    } else {
        Relay::Idle
    }
}

/// Every address of this machine's interfaces (`getifaddrs`): loopback, the LAN's, a
/// container bridge's. Empty when the system will not say.
pub(in crate::process) fn own_addresses() -> Vec<std::net::IpAddr> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    let mut head: *mut libc::ifaddrs = std::ptr::null_mut();
    // SAFETY: getifaddrs(3) points `head` at a list it allocated, freed below by
    // freeifaddrs(3) and read only before that.
    if unsafe { libc::getifaddrs(&raw mut head) } != 0 {
        return Vec::new();
    }
    let mut out = Vec::new();
    let mut at = head;
    while !at.is_null() {
        // SAFETY: `at` is a node of the list getifaddrs made, not freed yet.
        let node = unsafe { &*at };
        let addr = node.ifa_addr;
        if !addr.is_null() {
            // SAFETY: a non-null ifa_addr points at a sockaddr of its node.
            let family = libc::c_int::from(unsafe { (*addr).sa_family });
            if family == libc::AF_INET {
                // SAFETY: an AF_INET sockaddr is a sockaddr_in (read unaligned).
                let v4 = unsafe { addr.cast::<libc::sockaddr_in>().read_unaligned() };
                out.push(IpAddr::V4(Ipv4Addr::from(u32::from_be(v4.sin_addr.s_addr))));
            } else if family == libc::AF_INET6 {
                // SAFETY: an AF_INET6 sockaddr is a sockaddr_in6 (read unaligned).
                let v6 = unsafe { addr.cast::<libc::sockaddr_in6>().read_unaligned() };
                out.push(IpAddr::V6(Ipv6Addr::from(v6.sin6_addr.s6_addr)));
            }
        }
        at = node.ifa_next;
    }
    // SAFETY: `head` is the list getifaddrs allocated, freed once, not read after.
    unsafe { libc::freeifaddrs(head) };
    out
}

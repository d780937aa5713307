//! The system side of the process door, one file per system: [`unix`] (Linux and macOS:
//! process groups, signals, `poll`) and [`windows`] (job objects, console control
//! events, pipes peeked). Both give the door the same few calls: start a child as the
//! head of its own group ([`own_group`], then [`adopt`] once it is running), signal or
//! kill that whole group ([`signal_group`]), one process ([`signal_process`]), and wait
//! for output on pipes without blocking ([`poll_readable`]).

#[cfg(unix)]
mod unix;
#[cfg(unix)]
pub use unix::*;

#[cfg(windows)]
mod windows;
#[cfg(windows)]
pub use windows::*;

/// What `poll` said of one pipe.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ready {
    /// Bytes to read, or the end (a read returns 0).
    Readable,
    Idle,
}

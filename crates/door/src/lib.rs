//! pagent's doors to the system: the one way in to project files ([`files`]), the one
//! way to start a child ([`process`]), and the few other system calls pagent makes
//! ([`terminal`]'s console mode and window size, [`random_bytes`]). The rest of pagent
//! reaches the system only through this crate.
//!
//! Why a crate: the doors are the house's safety (a cloned repository is hostile: no
//! symlink followed out, no FIFO that blocks, no program of the project's own started
//! unless trusted), and a crate lets the compiler keep their boundary. Every `unsafe` of
//! the project lives here, each block with a `SAFETY` comment that says why it holds
//! (`clippy::undocumented_unsafe_blocks` denies one without); every other crate says
//! `#![forbid(unsafe_code)]`. Outside this crate the root `clippy.toml` bans `std::fs`,
//! `std::process::Command` and `walkdir`, so no file is opened and no child started
//! around the doors; this crate's own `clippy.toml` leaves them to it.
//!
//! The API is what the rest of pagent calls and nothing more: each door's errors are a
//! type of their own ([`files::DoorError`], [`process::ProgramError`],
//! [`process::StartError`]), each naming the path or the program it is about. The doors
//! print nothing, read no clock for a decision and know no command line: they are at the
//! bottom of the stack, and depend on no other crate of pagent's.
//!
//! Per system: Linux and macOS share one door made of the POSIX `*at` calls
//! (`files/sys/`), Windows has its own made of NT handles (`files/win/`); the process
//! door has one `sys` file per system (process groups and `poll`; job objects and peeked
//! pipes). Each module says what its guarantees rest on, system by system.
//!
//! [`testing`] (the `testing` feature) gives the test suites the raw calls they need (a
//! FIFO, a signal, a file size limit, a child's peak memory) as safe functions, so that
//! no test crate needs `unsafe` either.

// Function length is kept by clippy (issue 31): at most 80 lines (clippy.toml).
#![warn(clippy::too_many_lines)]

pub mod files;
pub mod process;
mod random;
pub mod terminal;
#[cfg(feature = "testing")]
pub mod testing;

pub use random::random_bytes;

/// `bytes` as lowercase hex: names of temp files.
fn hex(bytes: &[u8]) -> String {
    use std::fmt::Write;
    bytes.iter().fold(String::new(), |mut out, b| {
        let _ = write!(out, "{b:02x}");
        out
    })
}

/// Whether a system call failed for want of file descriptors, the process's or the
/// system's (the dashboard's acceptor then closes its oldest idle connection).
pub fn out_of_descriptors(err: &std::io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(err.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
    }
    #[cfg(windows)]
    {
        // WSAEMFILE: Windows sockets' own "too many open sockets".
        err.raw_os_error() == Some(10024)
    }
}

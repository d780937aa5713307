//! Ctrl-C for long-running commands (`pagent loop`, `pagent parallel`).
//!
//! The handler only sets a flag (the one thing a signal handler may safely do); the
//! runner polls it between reads, stops its child, saves the state and exits 130. Agents
//! run in their own process group, so a terminal's Ctrl-C reaches pagent, not them:
//! pagent decides how they stop.

use std::sync::atomic::{AtomicBool, Ordering};

static INTERRUPTED: AtomicBool = AtomicBool::new(false);

extern "C" fn on_signal(_: libc::c_int) {
    INTERRUPTED.store(true, Ordering::SeqCst);
}

/// Routes SIGINT and SIGTERM to the flag, and SIGHUP (the terminal closed, an SSH
/// session lost) unless it was ignored when pagent started (`nohup`: the user's choice),
/// so a hangup stops the agent and removes the loop's private folders as Ctrl-C does
/// (the default action ended pagent there and then, leaving a contained Codex's copy of
/// its credentials behind).
pub fn install() {
    let handler = on_signal as extern "C" fn(libc::c_int);
    // SAFETY: the handler is async-signal-safe (one atomic store) and lives for the
    // whole program.
    unsafe {
        libc::signal(libc::SIGINT, handler as libc::sighandler_t);
        libc::signal(libc::SIGTERM, handler as libc::sighandler_t);
        #[cfg(unix)]
        if libc::signal(libc::SIGHUP, handler as libc::sighandler_t) == libc::SIG_IGN {
            libc::signal(libc::SIGHUP, libc::SIG_IGN);
        }
    }
}

pub fn interrupted() -> bool {
    INTERRUPTED.load(Ordering::SeqCst)
}

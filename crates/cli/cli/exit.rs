//! The binary's exit statuses. There is deliberately no variant for 2: Claude Code treats
//! a hook's exit code 2 as "block the stop", so pagent never uses it, even for usage
//! errors (clap's default).

use std::process::ExitCode;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ExitStatus {
    /// Done what was asked (including "nothing to do").
    Success,
    /// An error was reported on stderr. For hooks this is Claude Code's "non-blocking
    /// error": the stop is allowed.
    Failure,
    /// `pagent loop`: the loop ended without meeting its conditions (iterations or no
    /// progress ran out).
    GaveUp,
    /// `pagent loop`: stopped by Ctrl-C (SIGINT) or SIGTERM; the state is saved.
    Interrupted,
}

impl ExitStatus {
    /// The process exit code.
    pub fn code(self) -> u8 {
        match self {
            ExitStatus::Success => 0,
            ExitStatus::Failure => 1,
            ExitStatus::GaveUp => 3,
            ExitStatus::Interrupted => 130,
        }
    }
}

impl From<ExitStatus> for ExitCode {
    fn from(status: ExitStatus) -> Self {
        ExitCode::from(status.code())
    }
}

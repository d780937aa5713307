//! What the event log says happened: one [`Action`] per line.
//!
//! The log is for people and for `pagent status`, which counts checks since a loop
//! started; both read these names back, so they are one closed set, written snake_case,
//! never strings assembled at the call site.

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Action {
    /// A pipeline was set up (`pagent run`, `pagent loop run`).
    Run,
    /// A Ralph loop was set up.
    Ralph,
    /// A stories loop was set up (`--stories FILE`, `--issues QUERY`).
    Stories,
    /// The stage is not done: the model was prompted again.
    Block,
    /// A stage was met and the next one began.
    Advance,
    /// The last stage was met.
    Complete,
    /// An iteration or no-progress limit ended the loop.
    GaveUp,
    /// A stop of a session that does not own the loop was allowed.
    OtherSession,
    /// A state not sealed by this user was ignored.
    Unsealed,
    /// A stop of a paused loop was allowed (said once).
    Paused,
    /// The user wrote in the loop's session: the loop paused.
    Pause,
    /// The user resumed a paused loop.
    Resume,
    /// The user cancelled the loop.
    Cancel,
    /// A PostToolUse check of an edited file ran.
    Check,
    /// A reviewer (a `review` condition) gave its verdict.
    Review,
    /// `pagent loop` was stopped by a signal; its state is saved.
    Interrupted,
    /// `pagent loop`'s agent crashed or hit an API error: run again (not an iteration).
    Retry,
    /// `pagent loop`'s agent kept failing (its retries, or the outage's time, spent): the
    /// runner stopped, the state saved.
    Failed,
    /// The agent hit a usage limit: the loop waits for it to reset (not an iteration).
    LimitWait,
    /// A usage limit was waited out: the same iteration runs again.
    LimitResumed,
}

impl Action {
    /// The name the log and `--json` use.
    pub fn as_str(self) -> &'static str {
        match self {
            Action::Run => "run",
            Action::Ralph => "ralph",
            Action::Stories => "stories",
            Action::Block => "block",
            Action::Advance => "advance",
            Action::Complete => "complete",
            Action::GaveUp => "gave_up",
            Action::OtherSession => "other_session",
            Action::Unsealed => "unsealed",
            Action::Paused => "paused",
            Action::Pause => "pause",
            Action::Resume => "resume",
            Action::Cancel => "cancel",
            Action::Check => "check",
            Action::Review => "review",
            Action::Interrupted => "interrupted",
            Action::Retry => "retry",
            Action::Failed => "failed",
            Action::LimitWait => "limit_wait",
            Action::LimitResumed => "limit_resumed",
        }
    }
}

impl std::fmt::Display for Action {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn serde_names_are_the_names_people_read() {
        for action in [
            Action::Run,
            Action::Ralph,
            Action::Stories,
            Action::Block,
            Action::Advance,
            Action::Complete,
            Action::GaveUp,
            Action::OtherSession,
            Action::Unsealed,
            Action::Paused,
            Action::Pause,
            Action::Resume,
            Action::Cancel,
            Action::Check,
            Action::Review,
            Action::Interrupted,
            Action::Retry,
            Action::Failed,
            Action::LimitWait,
            Action::LimitResumed,
        ] {
            let json = serde_json::to_string(&action).unwrap();
            assert_eq!(json, format!("\"{}\"", action.as_str()));
            assert_eq!(serde_json::from_str::<Action>(&json).unwrap(), action);
            assert_eq!(action.to_string(), action.as_str());
        }
        assert!(serde_json::from_str::<Action>("\"error\"").is_err());
    }
}

//! What the event log says happened: one [`Action`] per line.
//!
//! The log is for people and for `pagent status`, which counts checks since a loop
//! started; both read these names back, so they are one closed set, written snake_case,
//! never strings assembled at the call site. The names are the machine's (the log file,
//! `--json`); where a person reads an action, it is in its [`Action::words`].

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

impl Action {
    /// The action in a person's words, for every place a person reads it (`pagent log`,
    /// the dashboard's timeline, a checkpoint's commit message, `parallel`'s lines): the
    /// names above stay the machine's (`--json`, the event log file). At most 13
    /// characters, `pagent log`'s column.
    pub fn words(self) -> &'static str {
        match self {
            Action::Run | Action::Ralph | Action::Stories => "started",
            Action::Block => "not done",
            Action::Advance => "stage done",
            Action::Complete => "complete",
            Action::GaveUp => "gave up",
            Action::OtherSession => "other session",
            Action::Unsealed => "not yours",
            Action::Paused => "while paused",
            Action::Pause => "paused",
            Action::Resume => "resumed",
            Action::Cancel => "cancelled",
            Action::Check => "file checked",
            Action::Review => "reviewed",
            Action::Interrupted => "interrupted",
            Action::Retry => "retried",
            Action::Failed => "run failed",
            Action::LimitWait => "usage limit",
            Action::LimitResumed => "limit over",
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

    const ALL: [Action; 20] = [
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
    ];

    #[test]
    fn serde_names_are_the_names_scripts_read() {
        for action in ALL {
            let json = serde_json::to_string(&action).unwrap();
            assert_eq!(json, format!("\"{}\"", action.as_str()));
            assert_eq!(serde_json::from_str::<Action>(&json).unwrap(), action);
            assert_eq!(action.to_string(), action.as_str());
        }
        assert!(serde_json::from_str::<Action>("\"error\"").is_err());
    }

    /// `gave_up` reached `pagent log`, `block` the dashboard's timeline and checkpoint
    /// commits: every action has words of its own, none of them an identifier.
    #[test]
    fn issue_30_every_action_has_words_for_people() {
        for action in ALL {
            let words = action.words();
            assert!(
                !words.is_empty() && words.len() <= 13 && !words.contains('_'),
                "{action:?}: {words:?}"
            );
        }
        assert_eq!(Action::GaveUp.words(), "gave up");
        assert_eq!(Action::Block.words(), "not done");
    }
}

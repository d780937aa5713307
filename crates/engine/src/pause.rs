//! The user always wins: a message typed in the loop's session pauses the loop.
//!
//! Claude Code's Esc interrupts a turn without a Stop, so a loop used to stay active and
//! hijack the user's next, unrelated message with its task. Now the UserPromptSubmit hook
//! asks [`decide_prompt`] about every prompt typed in the loop's session: anything but one
//! of pagent's own commands pauses the loop. A paused loop's stops are allowed (the first
//! with one line saying why and how to go on) and count no iteration, until
//! [`resume`] (`/pagent:resume`, `pagent resume`). `/pagent:status` pauses quietly, so
//! asking how the loop is doing never sets it going again; cancel ends it; set-up
//! replaces it.

use serde::{Deserialize, Serialize};

use crate::{Kind, State, Timestamp};

/// Why and since when a loop is paused.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Pause {
    pub since: Timestamp,
    /// In words, for the user: "you wrote a message".
    pub why: String,
    /// Whether the user was told at a stop (said once).
    #[serde(default)]
    pub told: bool,
}

/// What a typed prompt is, as far as the loop is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    /// Anything the user writes that is not one of pagent's commands.
    Other,
    /// `/pagent:status` (or `/pagent-status`): pauses without a notice.
    Status,
    /// Resume, cancel or a new loop's set-up: leaves the pause to that command.
    OwnCommand,
}

/// The commands pagent installs: the plugin's (always namespaced) and the short names.
const OWN: &[&str] = &[
    "/pagent-run",
    "/pagent-cancel",
    "/pagent-resume",
    "/ralph",
    "/ralph-cancel",
];
const STATUS: &[&str] = &["/pagent:status", "/pagent-status"];

/// Classifies the prompt exactly as typed (Claude Code sends it before expanding a
/// command).
pub fn classify(prompt: &str) -> Prompt {
    let word = prompt.split_whitespace().next().unwrap_or("");
    if STATUS.contains(&word) {
        Prompt::Status
    } else if word.starts_with("/pagent:") || OWN.contains(&word) {
        Prompt::OwnCommand
    } else {
        Prompt::Other
    }
}

/// The state to write when the prompt `prompt`, typed in the session `session`, pauses the
/// loop; `None` when it leaves the loop alone (another session's loop, not active, driven
/// by `pagent loop`, already paused, or one of pagent's own commands).
pub fn decide_prompt(
    state: &State,
    session: Option<&str>,
    prompt: &str,
    now: Timestamp,
) -> Option<State> {
    if !state.is_active()
        || state.paused.is_some()
        || crate::whose_loop(state, session) != crate::Whose::This
    {
        return None;
    }
    let told = match classify(prompt) {
        Prompt::Other => false,
        Prompt::Status => true,
        Prompt::OwnCommand => return None,
    };
    let mut next = state.clone();
    next.paused = Some(Pause {
        since: now,
        why: "you wrote a message".to_owned(),
        told,
    });
    next.updated_at = now;
    Some(next)
}

/// The one line shown at the first stop of a paused loop.
pub fn pause_notice(state: &State) -> String {
    let what = match state.kind {
        Kind::Ralph => "Ralph loop".to_owned(),
        Kind::Pipeline => format!(
            "{} pipeline (stage {})",
            state.workflow,
            state.current().name
        ),
    };
    let why = state
        .paused
        .as_ref()
        .map_or("you wrote a message", |p| p.why.as_str());
    format!(
        "pagent: paused the {what} because {why}. /pagent:resume continues it, /pagent:cancel ends it."
    )
}

/// The state after `pagent resume`: not paused, the no-progress count started afresh
/// (the pause was the user's time, not the loop's).
pub fn resume(state: &State, now: Timestamp) -> State {
    let mut next = state.clone();
    next.paused = None;
    next.no_progress_count = 0;
    next.fingerprint = None;
    next.full_prompt_due = false;
    next.updated_at = now;
    next
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SetupOptions;

    fn ralph(session: Option<&str>) -> State {
        State::new_ralph(
            "Fix it".into(),
            "DONE".into(),
            SetupOptions {
                session_id: session.map(str::to_owned),
                ..SetupOptions::default()
            },
            None,
            Timestamp(0),
        )
    }

    #[test]
    fn prompts_table() {
        let cases = [
            ("What is 2+2?", Prompt::Other),
            ("  /pagent:status", Prompt::Status),
            ("/pagent-status now", Prompt::Status),
            ("/pagent:resume", Prompt::OwnCommand),
            ("/pagent:cancel", Prompt::OwnCommand),
            ("/ralph Fix the tests", Prompt::OwnCommand),
            ("/ralph-cancel", Prompt::OwnCommand),
            ("/pagent-run prd.md", Prompt::OwnCommand),
            ("/ralphy", Prompt::Other),
            ("/compact", Prompt::Other),
            ("Please run /pagent:cancel", Prompt::Other),
        ];
        for (prompt, want) in cases {
            assert_eq!(classify(prompt), want, "{prompt:?}");
        }
    }

    #[test]
    fn only_the_loops_own_session_pauses_it_and_only_once() {
        let state = ralph(Some("s1"));
        assert_eq!(decide_prompt(&state, Some("s2"), "hi", Timestamp(5)), None);
        assert_eq!(decide_prompt(&state, None, "hi", Timestamp(5)), None);
        assert_eq!(
            decide_prompt(&ralph(None), Some("s1"), "hi", Timestamp(5)),
            None
        );
        assert_eq!(
            decide_prompt(&state, Some("s1"), "/pagent:cancel", Timestamp(5)),
            None
        );
        let paused = decide_prompt(&state, Some("s1"), "hi", Timestamp(5)).unwrap();
        let pause = paused.paused.clone().unwrap();
        assert_eq!((pause.since, pause.told), (Timestamp(5), false));
        assert_eq!(
            decide_prompt(&paused, Some("s1"), "again", Timestamp(6)),
            None
        );
        let quiet = decide_prompt(&state, Some("s1"), "/pagent:status", Timestamp(5)).unwrap();
        assert!(quiet.paused.unwrap().told);
        let resumed = resume(&paused, Timestamp(9));
        assert_eq!(resumed.paused, None);
        assert!(
            pause_notice(&paused).contains("/pagent:resume continues it, /pagent:cancel ends it")
        );
    }
}

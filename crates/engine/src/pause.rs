//! The user always wins: a message typed in the loop's session pauses the loop.
//!
//! Claude Code's Esc interrupts a turn without a Stop, so a loop used to stay active and
//! hijack the user's next, unrelated message with its task. Now the UserPromptSubmit hook
//! asks [`decide_prompt`] about every prompt of the loop's session: what the user wrote
//! pauses the loop. A paused loop's stops are allowed (the first with one line saying why
//! and how to go on) and count no iteration, until [`resume`] (`/pagent:resume`,
//! `pagent resume`).
//!
//! Not everything that reaches UserPromptSubmit was written by the user. pagent's own
//! commands leave the loop alone: status and cancel are answered by the
//! UserPromptExpansion hook (status never pauses, so asking how the loop is doing never
//! stops it), resume and a new loop's set-up act themselves. Claude Code 2.1.330 also
//! submits prompts of its own: `<task-notification>` when a background task finishes, and
//! the note that a usage limit has reset when it continues a session by itself. Both carry
//! the loop's work on, so neither pauses it.

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
    /// The loop's Claude Code session ended (it was quit, or cleared): nothing drives the
    /// loop until that session is resumed (`claude --resume`), or another session of the
    /// project takes it over with `/pagent:resume`.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub session_gone: bool,
}

impl Pause {
    /// A pause since `since` because of `why`, not told yet.
    pub fn new(since: Timestamp, why: &str) -> Pause {
        Pause {
            since,
            why: why.to_owned(),
            told: false,
            session_gone: false,
        }
    }
}

/// What a prompt is, as far as the loop is concerned.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Prompt {
    /// Anything the user writes that is not one of pagent's commands.
    Other,
    /// One of pagent's commands (status, cancel, resume, a new loop's set-up).
    OwnCommand,
    /// Not the user's words: a prompt Claude Code submits by itself (it goes on after a
    /// usage limit reset, a background task finished). Leaves the loop alone.
    Automatic,
}

/// The prompts Claude Code 2.1.330 submits by itself through UserPromptSubmit, by their
/// opening (`research/cc-facts.md`, A2 and B6): the continuation after a usage limit
/// reset (the loop goes on, see `limit.rs`), and a background task's notification.
const AUTOMATIC: &[&str] = &[
    "Your claude.ai usage limit has reset. Continue the task",
    "<task-notification>",
];

/// Whether `prompt` is one Claude Code submitted by itself rather than the user's words:
/// the one place both the pause and the usage-limit wait ask.
pub fn is_automatic(prompt: &str) -> bool {
    let prompt = prompt.trim_start();
    AUTOMATIC.iter().any(|opening| prompt.starts_with(opening))
}

/// The commands pagent installs: the plugin's (always namespaced) and the short names.
const OWN: &[&str] = &[
    "/pagent-run",
    "/pagent-status",
    "/pagent-cancel",
    "/pagent-resume",
    "/ralph",
    "/ralph-cancel",
];

/// Classifies the prompt exactly as typed (Claude Code sends it before expanding a
/// command).
pub fn classify(prompt: &str) -> Prompt {
    if is_automatic(prompt) {
        return Prompt::Automatic;
    }
    let word = prompt.split_whitespace().next().unwrap_or("");
    if word.starts_with("/pagent:") || OWN.contains(&word) {
        Prompt::OwnCommand
    } else {
        Prompt::Other
    }
}

/// The state to write when the prompt `prompt`, typed in the session `session`, pauses the
/// loop; `None` when it leaves the loop alone (another session's loop, not active, driven
/// by `pagent loop`, already paused, one of pagent's own commands, or a prompt Claude Code
/// wrote itself).
pub fn decide_prompt(
    state: &State,
    session: Option<&str>,
    prompt: &str,
    now: Timestamp,
) -> Option<State> {
    if !state.is_active()
        || state.paused.is_some()
        || crate::belongs(state, session) != crate::Belongs::Owner
    {
        return None;
    }
    if classify(prompt) != Prompt::Other {
        return None;
    }
    let mut next = state.clone();
    next.paused = Some(Pause::new(now, "you wrote a message"));
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

/// The state after the user paused the loop from outside its session (`pagent pause`, the
/// dashboard): any active loop of theirs, whoever drives it. The Stop hook then allows
/// the session's stops; `pagent loop` finishes the iteration it is in and waits.
/// `None` when there is nothing to pause (ended, or paused already).
pub fn pause(state: &State, why: &str, now: Timestamp) -> Option<State> {
    if !state.is_active() || state.paused.is_some() {
        return None;
    }
    let mut next = state.clone();
    next.paused = Some(Pause::new(now, why));
    next.updated_at = now;
    Some(next)
}

/// `next`, decided on `decided_on`, made to apply over `on_disk` when the only writes
/// between the two were the user's pause or resume: the decision stands and the user's
/// pause is kept. `None` when anything else changed (a cancel, another decision, a new
/// loop): then the decision is void, as for any writer that lost.
pub fn carry_pause(decided_on: &State, on_disk: &State, next: &State) -> Option<State> {
    let mut before = decided_on.clone();
    let mut after = on_disk.clone();
    for state in [&mut before, &mut after] {
        // What a pause and a resume write (and every write's bookkeeping).
        state.paused = None;
        state.updated_at = Timestamp(0);
        state.generation = 0;
        state.seal = None;
        state.no_progress_count = 0;
        state.fingerprint = None;
        state.full_prompt_due = false;
    }
    if before != after || !on_disk.is_active() {
        return None;
    }
    let mut carried = next.clone();
    carried.paused.clone_from(&on_disk.paused);
    Some(carried)
}

/// The state after `pagent resume`: not paused, not waiting for a usage limit any more
/// (the user says it has reset, or wants to try now), the no-progress count started
/// afresh (the pause was the user's time, not the loop's).
pub fn resume(state: &State, now: Timestamp) -> State {
    let mut next = crate::limit::end_wait(state, now);
    next.paused = None;
    next.continuations = 0;
    next.no_progress_count = 0;
    next.fingerprint = None;
    next.full_prompt_due = false;
    next.updated_at = now;
    next
}

/// The state when the Claude Code session `session` ended (`reason` as Claude Code gives
/// it): its active loop waits, paused, for the session to come back (`claude --resume`,
/// then `/pagent:resume`) or for another session of the project to take it over. `None`
/// for anything that is not this session's active loop (another session's, one `pagent
/// loop` drives, one nobody claimed, an ended loop).
pub fn session_ended(
    state: &State,
    session: Option<&str>,
    reason: Option<&str>,
    now: Timestamp,
) -> Option<State> {
    if !state.is_active()
        || session_gone(state)
        || crate::belongs(state, session) != crate::Belongs::Owner
    {
        return None;
    }
    let ended = match reason {
        Some("clear") => "its Claude Code session was cleared (/clear)",
        _ => "its Claude Code session was quit",
    };
    // A loop paused before keeps its reason (Claude Code's cap, the user's message) and
    // says what came after; the session that comes back hears it all at its first stop.
    let why = match &state.paused {
        Some(pause) if pause.why.ends_with(ended) => pause.why.clone(),
        Some(pause) => format!("{}, and then {ended}", pause.why),
        None => ended.to_owned(),
    };
    let mut next = state.clone();
    next.paused = Some(Pause {
        session_gone: true,
        ..Pause::new(state.paused.as_ref().map_or(now, |p| p.since), &why)
    });
    next.continuations = 0;
    next.updated_at = now;
    Some(next)
}

/// The state when the loop's own session, quit before, calls a hook again (it was
/// resumed with `claude --resume`): still paused, no longer waiting for that session.
pub fn session_back(state: &State, session: Option<&str>, now: Timestamp) -> Option<State> {
    if !session_gone(state) || crate::belongs(state, session) != crate::Belongs::Owner {
        return None;
    }
    let mut next = state.clone();
    if let Some(pause) = &mut next.paused {
        pause.session_gone = false;
    }
    next.updated_at = now;
    Some(next)
}

/// The state after `/pagent:resume` in the session `session`, which takes over a loop
/// whose own session ended (quit, or cleared): resumed, and bound to `session`.
pub fn take_over(state: &State, session: &str, now: Timestamp) -> State {
    let mut next = resume(state, now);
    next.session_id = Some(session.to_owned());
    next
}

/// Whether the loop waits because its Claude Code session ended.
pub fn session_gone(state: &State) -> bool {
    state.paused.as_ref().is_some_and(|p| p.session_gone)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::SetupOptions;
    use crate::testing::ralph;

    #[test]
    fn prompts_table() {
        let cases = [
            ("What is 2+2?", Prompt::Other),
            ("  /pagent:status", Prompt::OwnCommand),
            ("/pagent-status now", Prompt::OwnCommand),
            ("/pagent:resume", Prompt::OwnCommand),
            ("/pagent:cancel", Prompt::OwnCommand),
            ("/ralph Fix the tests", Prompt::OwnCommand),
            ("/ralph-cancel", Prompt::OwnCommand),
            ("/pagent-run prd.md", Prompt::OwnCommand),
            ("/ralphy", Prompt::Other),
            ("/compact", Prompt::Other),
            ("Please run /pagent:cancel", Prompt::Other),
            (
                "<task-notification>\n<task-id>b4jptpqcw</task-id>",
                Prompt::Automatic,
            ),
            (
                "Your claude.ai usage limit has reset. Continue the task you were working on \
                 when the limit was reached; do not repeat work that is already complete.",
                Prompt::Automatic,
            ),
            ("Tell me about <task-notification>", Prompt::Other),
            (
                "Your claude.ai usage limit has reset? I wonder",
                Prompt::Other,
            ),
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
        for own in [
            "/pagent:status",
            "/pagent-status",
            "<task-notification>\n<task-id>x",
        ] {
            assert_eq!(decide_prompt(&state, Some("s1"), own, Timestamp(5)), None);
        }
        let resumed = resume(&paused, Timestamp(9));
        assert_eq!(resumed.paused, None);
        assert!(
            pause_notice(&paused).contains("/pagent:resume continues it, /pagent:cancel ends it")
        );
    }

    #[test]
    fn a_finished_or_runner_driven_loop_is_never_paused() {
        let mut done = ralph(Some("s1"));
        done.finish(crate::Status::Complete, "done".into(), Timestamp(3));
        assert_eq!(decide_prompt(&done, Some("s1"), "hi", Timestamp(5)), None);
        let mut driven = ralph(Some("s1"));
        driven.driver = crate::Driver::Loop;
        assert_eq!(decide_prompt(&driven, Some("s1"), "hi", Timestamp(5)), None);
        let paused = decide_prompt(&ralph(Some("s1")), Some("s1"), "hi", Timestamp(5)).unwrap();
        assert_eq!(paused.updated_at, Timestamp(5));
        assert_eq!(paused.paused.unwrap().why, "you wrote a message");
    }

    #[test]
    fn the_user_pauses_any_active_loop_once() {
        let mut driven = ralph(None);
        driven.driver = crate::Driver::Loop;
        let paused = pause(&driven, "you paused it", Timestamp(7)).unwrap();
        assert_eq!(paused.paused.as_ref().unwrap().why, "you paused it");
        assert_eq!(paused.updated_at, Timestamp(7));
        assert_eq!(pause(&paused, "again", Timestamp(8)), None);
        let mut done = ralph(None);
        done.finish(crate::Status::Cancelled, "x".into(), Timestamp(3));
        assert_eq!(pause(&done, "late", Timestamp(8)), None);
    }

    /// A runner's iteration that ends while the user paused (or paused and resumed) still
    /// counts; anything else written meanwhile voids the decision.
    #[test]
    fn a_decision_is_carried_over_a_pause_and_nothing_else() {
        let mut decided_on = ralph(None);
        decided_on.generation = 4;
        let mut next = decided_on.clone();
        next.iterations[0] = 2;
        let mut paused = pause(&decided_on, "you paused it", Timestamp(9)).unwrap();
        paused.generation = 5;
        let carried = carry_pause(&decided_on, &paused, &next).unwrap();
        assert_eq!(carried.iterations[0], 2);
        assert_eq!(carried.paused, paused.paused);
        let resumed = resume(&paused, Timestamp(10));
        assert_eq!(
            carry_pause(&decided_on, &resumed, &next).unwrap().paused,
            None
        );
        let mut cancelled = paused.clone();
        cancelled.finish(crate::Status::Cancelled, "by you".into(), Timestamp(11));
        assert_eq!(carry_pause(&decided_on, &cancelled, &next), None);
        let mut advanced = paused;
        advanced.iterations[0] = 3;
        assert_eq!(carry_pause(&decided_on, &advanced, &next), None);
    }

    /// Issue 30, §4 (d): a quit session's loop waits, paused, and says why; only the
    /// loop's own session, and only an active loop it drives.
    #[test]
    fn item_d_a_quit_sessions_loop_waits_for_it_or_another_session() {
        let state = ralph(Some("s1"));
        let ended = session_ended(&state, Some("s1"), Some("other"), Timestamp(7)).unwrap();
        let pause = ended.paused.clone().unwrap();
        assert!(pause.session_gone && !pause.told);
        assert_eq!(pause.why, "its Claude Code session was quit");
        assert!(session_gone(&ended));
        let cleared = session_ended(&state, Some("s1"), Some("clear"), Timestamp(7)).unwrap();
        assert_eq!(
            cleared.paused.unwrap().why,
            "its Claude Code session was cleared (/clear)"
        );
        // Paused before: since then, for its reason and then the session's end, said
        // again to the session that comes back; a second end changes nothing.
        let mut typed = decide_prompt(&state, Some("s1"), "hi", Timestamp(5)).unwrap();
        if let Some(pause) = &mut typed.paused {
            pause.told = true;
        }
        let ended_later = session_ended(&typed, Some("s1"), None, Timestamp(9)).unwrap();
        let pause = ended_later.paused.clone().unwrap();
        assert_eq!(pause.since, Timestamp(5));
        assert_eq!(
            pause.why,
            "you wrote a message, and then its Claude Code session was quit"
        );
        assert!(pause.session_gone && !pause.told);
        assert_eq!(
            session_ended(&ended_later, Some("s1"), None, Timestamp(10)),
            None
        );
        let mut came_back = session_back(&ended_later, Some("s1"), Timestamp(11)).unwrap();
        came_back = session_ended(&came_back, Some("s1"), None, Timestamp(12)).unwrap();
        assert_eq!(came_back.paused.unwrap().why, pause.why);
        for (state, session) in [
            (&state, Some("s2")),
            (&state, None),
            (&ralph(None), Some("s1")),
        ] {
            assert_eq!(session_ended(state, session, None, Timestamp(7)), None);
        }
        let mut driven = ralph(Some("s1"));
        driven.driver = crate::Driver::Loop;
        assert_eq!(session_ended(&driven, Some("s1"), None, Timestamp(7)), None);
        let mut done = ralph(Some("s1"));
        done.finish(crate::Status::Cancelled, "x".into(), Timestamp(3));
        assert_eq!(session_ended(&done, Some("s1"), None, Timestamp(7)), None);

        // The session comes back: still paused (its first stop says why), not gone.
        assert_eq!(session_back(&ended, Some("s2"), Timestamp(8)), None);
        let back = session_back(&ended, Some("s1"), Timestamp(8)).unwrap();
        assert!(back.paused.is_some() && !session_gone(&back));
        assert_eq!(session_back(&back, Some("s1"), Timestamp(9)), None);
        // Another session takes it over.
        let taken = take_over(&ended, "s2", Timestamp(8));
        assert_eq!(
            (taken.paused, taken.session_id.as_deref()),
            (None, Some("s2"))
        );
    }

    #[test]
    fn any_namespaced_command_is_pagents_own() {
        assert_eq!(classify("/pagent:anything"), Prompt::OwnCommand);
        assert_eq!(classify("/pagent-resume"), Prompt::OwnCommand);
        assert_eq!(classify(""), Prompt::Other);
    }

    /// The pause was the user's time: resuming forgets the tree seen before it, so the
    /// first stop after it cannot count as "no progress".
    #[test]
    fn resume_starts_the_no_progress_count_afresh() {
        let mut state = ralph(Some("s1"));
        state.no_progress_count = 2;
        state.fingerprint = Some("tree".into());
        state.full_prompt_due = true;
        let paused = decide_prompt(&state, Some("s1"), "hi", Timestamp(5)).unwrap();
        let resumed = resume(&paused, Timestamp(9));
        assert_eq!(resumed.paused, None);
        assert_eq!(resumed.no_progress_count, 0);
        assert_eq!(resumed.fingerprint, None);
        assert!(!resumed.full_prompt_due);
        assert_eq!(resumed.updated_at, Timestamp(9));
        assert_eq!(resumed.stages, state.stages);
    }

    #[test]
    fn the_notice_names_the_loop_and_why() {
        let paused = decide_prompt(&ralph(Some("s1")), Some("s1"), "hi", Timestamp(5)).unwrap();
        assert_eq!(
            pause_notice(&paused),
            "pagent: paused the Ralph loop because you wrote a message. /pagent:resume continues it, /pagent:cancel ends it."
        );
        let workflow = crate::Workflow::from_json(
            &serde_json::json!({"stages": [{"name": "architect", "prompt": "p", "exit_when": {"promise_in_output": "X"}}]}),
            "default",
        )
        .unwrap();
        let mut pipeline = State::new_pipeline(
            &workflow,
            vec!["p".into()],
            SetupOptions::default(),
            None,
            Timestamp(0),
        );
        pipeline.paused = Some(Pause::new(Timestamp(1), "you asked for the status"));
        assert_eq!(
            pause_notice(&pipeline),
            "pagent: paused the default pipeline (stage architect) because you asked for the status. /pagent:resume continues it, /pagent:cancel ends it."
        );
    }
}

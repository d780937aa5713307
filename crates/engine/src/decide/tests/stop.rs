//! [`decide_stop`]: whose stop it is, seals, pauses, and the caps of what it says.

use super::*;
use crate::testing::MemoryWorld;
use crate::{Action, REASON_CAP, State, Status};

#[test]
fn finished_and_loop_driven_states_allow_silently() {
    for status in [Status::Complete, Status::Cancelled, Status::GaveUp] {
        let mut state = ralph(5);
        state.status = status;
        let outcome = decide_stop(&event(Some("s1")), &state, &mut MemoryWorld::default());
        assert_eq!(outcome, Outcome::silent(), "{status:?}");
    }
    let mut state = ralph(5);
    state.driver = crate::Driver::Loop;
    assert_eq!(
        decide_stop(&event(Some("s1")), &state, &mut MemoryWorld::default()),
        Outcome::silent()
    );
}

#[test]
fn another_session_is_never_blocked_or_written() {
    let state = ralph(5);
    for session in [Some("s2"), None] {
        let mut world = MemoryWorld::default().message("no promise");
        let outcome = decide_stop(&event(session), &state, &mut world);
        assert_eq!(outcome.decision, Decision::Allow);
        assert_eq!(outcome.write, None);
        assert_eq!(outcome.log.unwrap().action, Action::OtherSession);
    }
}

#[test]
fn an_unclaimed_state_is_claimed_by_the_first_session_that_stops() {
    let mut state = ralph(5);
    state.session_id = None;
    let outcome = decide_stop(
        &event(Some("s9")),
        &state,
        &mut MemoryWorld::default().message("working"),
    );
    let claimed = outcome.write.unwrap();
    assert_eq!(claimed.session_id.as_deref(), Some("s9"));
    let later = decide_stop(&event(Some("s1")), &claimed, &mut MemoryWorld::default());
    assert_eq!(later.decision, Decision::Allow);
}

/// A stop that names no session (a hook input of `{}`) neither claims an unclaimed loop
/// nor is blocked by it; the loop stays free for the first named session.
#[test]
fn a_stop_without_a_session_never_claims_or_blocks() {
    for state in [ralph(5), pipeline()] {
        let mut state = state;
        state.session_id = None;
        for seal_valid in [true, false] {
            let nameless = StopEvent {
                seal_valid,
                ..event(None)
            };
            let mut world = MemoryWorld::default().message("working");
            let outcome = decide_stop(&nameless, &state, &mut world);
            assert_eq!(outcome.decision, Decision::Allow, "{:?}", state.kind);
            assert_eq!(outcome.write, None);
            assert_eq!(outcome.log.unwrap().action, Action::OtherSession);
            assert!(world.checks_run.is_empty());
        }
        let named = decide_stop(
            &event(Some("s9")),
            &state,
            &mut MemoryWorld::default().message("working"),
        );
        block_reason(&named.decision);
    }
}

#[test]
fn an_unsealed_state_never_runs_a_command_never_blocks_and_warns_once() {
    let mut state = ralph(5);
    state.stages[0].exit_when = crate::Condition::Command(crate::Check {
        shape: crate::CheckShape::Shell("touch pwned".into()),
        timeout_secs: 5,
    });
    let mut world = MemoryWorld::default();
    let first = StopEvent {
        seal_valid: false,
        ..event(Some("s1"))
    };
    let outcome = decide_stop(&first, &state, &mut world);
    assert!(matches!(&outcome.decision, Decision::Notify(m) if m.contains("not set up by you")));
    assert_eq!(outcome.write, None);
    let again = StopEvent {
        unsealed_warned: true,
        ..first
    };
    assert_eq!(
        decide_stop(&again, &state, &mut world).decision,
        Decision::Allow
    );
    assert!(world.checks_run.is_empty());
}

#[test]
fn a_paused_loop_allows_its_stops_says_so_once_and_counts_nothing() {
    let state = ralph(5);
    let paused = crate::pause::decide_prompt(&state, Some("s1"), "What is 2+2?", NOW).unwrap();
    let outcome = decide_stop(
        &event(Some("s1")),
        &paused,
        &mut MemoryWorld::default().tree("a"),
    );
    let Decision::Notify(message) = &outcome.decision else {
        panic!("{outcome:?}")
    };
    assert!(
        message.contains("paused the Ralph loop because you wrote a message"),
        "{message}"
    );
    let told = outcome.write.unwrap();
    assert_eq!(told.iterations, paused.iterations);
    assert_eq!(outcome.log.unwrap().action, Action::Paused);
    let outcome = decide_stop(
        &event(Some("s1")),
        &told,
        &mut MemoryWorld::default().tree("b"),
    );
    assert_eq!(outcome, Outcome::silent());
    // Resumed, it re-prompts and counts again.
    let resumed = crate::pause::resume(&told, NOW);
    let outcome = decide_stop(
        &event(Some("s1")),
        &resumed,
        &mut MemoryWorld::default().tree("c"),
    );
    assert_eq!(outcome.write.unwrap().iterations, [2]);
}

/// Every text of an outcome besides the reason is built from names a workflow or a hook
/// input chose; each fits `MESSAGE_CAP` whatever their size (a 130 KB `systemMessage`
/// was seen), and so does what the state keeps (`last_feedback`, `end_reason`).
#[test]
fn messages_feedback_and_log_details_are_capped() {
    let huge = "n".repeat(130_000);
    let with_promise = |max: u32| {
        let mut state = ralph(max);
        state.stages[0].exit_when = crate::Condition::Promise(huge.clone());
        state
    };
    let mut named = pipeline();
    named.session_id = Some("s1".into());
    named.workflow = huge.clone();
    named.stages[0].name = huge.clone();
    named.stages[1].name = huge.clone();
    let mut last_stage = named.clone();
    last_stage.stage = 4;
    last_stage.stages[4].name = huge.clone();
    let mut no_progress = with_promise(25);
    no_progress.no_progress_count = 2;
    let cases: Vec<(&str, State, StopEvent<'_>, MemoryWorld)> = vec![
        (
            "block",
            with_promise(25),
            event(Some("s1")),
            MemoryWorld::default().message("no"),
        ),
        (
            "gave up",
            with_promise(1),
            event(Some("s1")),
            MemoryWorld::default().message("no"),
        ),
        (
            "no progress",
            no_progress,
            event(Some("s1")),
            MemoryWorld::default().message("no").tree("tree0"),
        ),
        (
            "advance",
            named.clone(),
            event(Some("s1")),
            MemoryWorld::default().file("architecture.md", 50),
        ),
        (
            "complete",
            last_stage,
            event(Some("s1")),
            MemoryWorld::default().message("<promise>DONE</promise>"),
        ),
        (
            "other session",
            ralph(5),
            event(Some(&huge)),
            MemoryWorld::default(),
        ),
    ];
    for (name, state, event, mut world) in cases {
        assert_capped(name, &decide_stop(&event, &state, &mut world));
    }
}

/// Each text of the outcome fits `MESSAGE_CAP` (the reason `REASON_CAP`), and one of them
/// was cut.
fn assert_capped(name: &str, outcome: &Outcome) {
    use crate::render::MESSAGE_CAP;
    let mut texts: Vec<&str> = Vec::new();
    match &outcome.decision {
        Decision::Allow => {}
        Decision::Notify(message) => texts.push(message),
        Decision::Block { reason, message } => {
            assert!(reason.chars().count() <= REASON_CAP, "{name}: reason");
            texts.push(message);
        }
    }
    if let Some(next) = &outcome.write {
        texts.extend(next.last_feedback.as_deref());
        texts.extend(next.end_reason.as_deref());
    }
    let log = outcome.log.as_ref().unwrap();
    texts.push(&log.detail);
    texts.push(&log.stage);
    assert!(
        texts.iter().any(|t| t.ends_with("characters cut ...]")),
        "{name}: nothing was cut"
    );
    for text in texts {
        assert!(
            text.chars().count() <= MESSAGE_CAP,
            "{name}: {} characters: {}...",
            text.chars().count(),
            text.chars().take(80).collect::<String>()
        );
    }
}

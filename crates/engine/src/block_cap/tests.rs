//! Claude Code's cap on continuations: how the environment sets it, how pagent counts, and
//! the pause that replaces the continuation Claude Code would drop.

use super::*;
use crate::testing::{MemoryWorld, ralph};
use crate::{Decision, SetupOptions, StopEvent, Workflow, decide_stop};

#[test]
fn the_cap_is_read_as_claude_code_reads_its_variable() {
    let cases: [(Option<&str>, Option<u32>); 17] = [
        (None, Some(8)),
        (Some(""), Some(8)),
        (Some("   "), Some(8)),
        (Some("abc"), Some(8)),
        (Some("3"), Some(3)),
        (Some(" 12 "), Some(12)),
        (Some("+7"), Some(7)),
        (Some(" 4x"), Some(4)),
        (Some("0"), None),
        (Some("00"), None),
        (Some("-0"), None),
        (Some("-5"), None),
        (Some("1e1"), Some(1)),
        (Some("1,000"), Some(1)),
        (Some("5.9"), Some(5)),
        (Some("99999999999999999999"), Some(u32::MAX)),
        (Some("- 3"), Some(8)),
    ];
    for (value, want) in cases {
        assert_eq!(BlockCap::from_env(value).limit(), want, "{value:?}");
    }
    let cap = BlockCap::from_env(None);
    assert!(!cap.overrides(8));
    assert!(cap.overrides(9));
    assert!(!BlockCap::from_env(Some("0")).overrides(u32::MAX));
}

#[test]
fn the_count_starts_afresh_after_a_prompt_a_tool_call_or_an_unread_turn() {
    let mut state = ralph(Some("s1"));
    state.continuations = 5;
    let turn = |continued, tool_called| TurnSoFar {
        continued,
        tool_called,
    };
    assert_eq!(streak_before(&state, turn(true, Some(false))), 5);
    assert_eq!(streak_before(&state, turn(false, Some(false))), 0);
    assert_eq!(streak_before(&state, turn(true, Some(true))), 0);
    assert_eq!(streak_before(&state, turn(true, None)), 0);
}

/// The Stops of one turn whose model never calls a tool, each decided on what the last
/// wrote; returns every outcome.
fn stops(state: State, turns: &[TurnSoFar], cap: BlockCap) -> Vec<crate::Outcome> {
    let mut state = state;
    let mut outcomes = Vec::new();
    for (i, turn) in turns.iter().enumerate() {
        let event = StopEvent {
            session_id: Some("s1"),
            seal_valid: true,
            unsealed_warned: false,
            now: Timestamp(100 + i as u64),
            turn: *turn,
            block_cap: cap,
        };
        let mut world = MemoryWorld::default().message("Still thinking.");
        let outcome = decide_stop(&event, &state, &mut world);
        if let Some(next) = &outcome.write {
            state = next.clone();
        }
        outcomes.push(outcome);
    }
    outcomes
}

fn no_tool(continued: bool) -> TurnSoFar {
    TurnSoFar {
        continued,
        tool_called: Some(false),
    }
}

fn looping(max_iterations: u32) -> State {
    let mut state = State::new_ralph(
        "Fix it".into(),
        "DONE".into(),
        SetupOptions {
            session_id: Some("s1".into()),
            max_iterations: Some(max_iterations),
            no_progress_limit: Some(0),
            ..SetupOptions::default()
        },
        None,
        Timestamp(0),
    );
    state.loop_id = "l".into();
    state
}

/// Claude Code drops the 9th continuation in a row without a tool call (issue 30, §3):
/// pagent makes 8, then pauses the loop at the 9th stop and says why and what to type,
/// instead of a continuation that would leave the loop "active" and the session idle.
#[test]
fn item_3_the_ninth_continuation_without_a_tool_call_pauses_the_loop_and_says_so() {
    let mut turns = vec![no_tool(false)];
    turns.extend(std::iter::repeat_n(no_tool(true), 8));
    let outcomes = stops(looping(20), &turns, BlockCap::default());
    for (i, outcome) in outcomes[..8].iter().enumerate() {
        assert!(
            matches!(outcome.decision, Decision::Block { .. }),
            "stop {i}: {outcome:?}"
        );
        assert_eq!(outcome.write.as_ref().unwrap().continuations, i as u32 + 1);
    }
    let last = &outcomes[8];
    assert_eq!(
        last.decision,
        Decision::Notify(
            "pagent: paused the Ralph loop because Claude called no tool in its last 8 turns, \
             and Claude Code ends a turn that a hook continued 8 times in a row without one \
             (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP). /pagent:resume continues it, /pagent:cancel \
             ends it."
                .into()
        )
    );
    let paused = last.write.as_ref().unwrap();
    let pause = paused.paused.as_ref().unwrap();
    assert!(pause.told, "said now, not again at the next stop");
    assert_eq!(pause.since, Timestamp(108));
    assert_eq!(paused.continuations, 0);
    // The iteration the model gets when the user resumes is counted already.
    assert_eq!(paused.iterations, [10]);
    let log = last.log.as_ref().unwrap();
    assert_eq!(log.action, Action::Pause);
    assert!(
        log.detail.starts_with("paused: Claude called no tool"),
        "{log:?}"
    );
    // The next stop of the session is the user's: allowed, silently.
    let after = stops(paused.clone(), &[no_tool(true)], BlockCap::default());
    assert_eq!(after[0].decision, Decision::Allow);
}

#[test]
fn item_3_a_tool_call_or_a_new_prompt_starts_the_count_afresh() {
    let tool = TurnSoFar {
        continued: true,
        tool_called: Some(true),
    };
    let mut turns = vec![no_tool(false)];
    turns.extend(std::iter::repeat_n(no_tool(true), 6));
    turns.push(tool);
    turns.extend(std::iter::repeat_n(no_tool(true), 7));
    turns.push(no_tool(false));
    turns.extend(std::iter::repeat_n(no_tool(true), 7));
    let outcomes = stops(looping(40), &turns, BlockCap::default());
    for (i, outcome) in outcomes.iter().enumerate() {
        assert!(
            matches!(outcome.decision, Decision::Block { .. }),
            "stop {i}: {outcome:?}"
        );
    }
    let counts: Vec<u32> = outcomes
        .iter()
        .map(|o| o.write.as_ref().unwrap().continuations)
        .collect();
    assert_eq!(counts[6..9], [7, 1, 2]);
    assert_eq!(counts[15..], [1, 2, 3, 4, 5, 6, 7, 8]);
}

#[test]
fn item_3_the_cap_of_the_environment_is_the_one_kept() {
    let mut turns = vec![no_tool(false)];
    turns.extend(std::iter::repeat_n(no_tool(true), 3));
    let outcomes = stops(looping(20), &turns, BlockCap::from_env(Some("3")));
    let Decision::Notify(said) = &outcomes[3].decision else {
        panic!("{:?}", outcomes[3]);
    };
    assert!(
        said.contains(
            "in its last 3 turns, and Claude Code ends a turn that a hook continued 3 times"
        ),
        "{said}"
    );
    // No cap, or a turn pagent could not read: never paused on that account.
    let mut long = vec![no_tool(false)];
    long.extend(std::iter::repeat_n(no_tool(true), 15));
    let outcomes = stops(looping(20), &long, BlockCap::from_env(Some("0")));
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o.decision, Decision::Block { .. }))
    );
    let unread = vec![
        TurnSoFar {
            continued: true,
            tool_called: None,
        };
        15
    ];
    let outcomes = stops(looping(20), &unread, BlockCap::default());
    assert!(
        outcomes
            .iter()
            .all(|o| matches!(o.decision, Decision::Block { .. }))
    );
}

/// A stage met at the stop past the cap still advances: the pause keeps the decision,
/// and `/pagent:resume` hands the model the next stage's prompt.
#[test]
fn item_3_a_stage_met_past_the_cap_advances_and_then_pauses() {
    let workflow = Workflow::from_json(
        &serde_json::json!({"stages": [
            {"name": "think", "prompt": "think", "exit_when": {"promise_in_output": "THOUGHT"}},
            {"name": "write", "prompt": "write", "exit_when": {"promise_in_output": "DONE"}}
        ]}),
        "two",
    )
    .unwrap();
    let mut state = State::new_pipeline(
        &workflow,
        vec!["think".into(), "write".into()],
        SetupOptions {
            session_id: Some("s1".into()),
            ..SetupOptions::default()
        },
        None,
        Timestamp(0),
    );
    state.continuations = 8;
    let event = StopEvent {
        session_id: Some("s1"),
        seal_valid: true,
        unsealed_warned: false,
        now: Timestamp(50),
        turn: no_tool(true),
        block_cap: BlockCap::default(),
    };
    let mut world = MemoryWorld::default().message("<promise>THOUGHT</promise>");
    let outcome = decide_stop(&event, &state, &mut world);
    let written = outcome.write.unwrap();
    assert_eq!(written.stage, 1);
    assert!(written.paused.is_some());
    assert!(
        matches!(outcome.decision, Decision::Notify(ref m) if m.contains("pipeline (stage write)"))
    );
}

//! Table tests of the loop policy over an in-memory world: one file per decision, the
//! helpers and the owner predicate's table here.

use serde_json::json;

use super::*;
use crate::{SetupOptions, Timestamp, Workflow};

mod iteration;
mod post_tool_use;
mod stop;

pub(crate) const NOW: Timestamp = Timestamp(1_000);

pub(crate) fn event(session: Option<&str>) -> StopEvent<'_> {
    StopEvent {
        session_id: session,
        seal_valid: true,
        unsealed_warned: false,
        now: NOW,
        turn: Default::default(),
        block_cap: Default::default(),
    }
}

pub(crate) fn ralph(max_iterations: u32) -> State {
    let options = SetupOptions {
        max_iterations: Some(max_iterations),
        session_id: Some("s1".into()),
        ..SetupOptions::default()
    };
    State::new_ralph(
        "Fix it's \"parser\"; $(rm -rf x)".into(),
        "DONE".into(),
        options,
        Some("tree0".into()),
        Timestamp(0),
    )
}

pub(crate) fn pipeline() -> State {
    let value = json!({
        "name": "prd-to-code",
        "stages": [
            {"name": "architect", "prompt": "write architecture.md", "exit_when": {"file_exists": "architecture.md", "min_lines": 50}},
            {"name": "qa", "prompt": "write test-plan.md", "exit_when": {"file_exists": "test-plan.md", "min_lines": 30}},
            {"name": "security", "prompt": "write security-assessment.md", "exit_when": {"file_exists": "security-assessment.md", "min_lines": 20}},
            {"name": "implementer", "prompt": "write src/", "exit_when": {"directory_exists": "src", "min_files": 3}},
            {"name": "verifier", "prompt": "verify", "exit_when": {"promise_in_output": "DONE"}}
        ]
    });
    let workflow = Workflow::from_json(&value, "x").unwrap();
    let prompts = workflow.stages.iter().map(|s| match &s.prompt {
        crate::workflow::PromptSource::Inline(text) => text.clone(),
        crate::workflow::PromptSource::File(_) => unreachable!(),
    });
    State::new_pipeline(
        &workflow,
        prompts.collect(),
        SetupOptions::default(),
        None,
        Timestamp(0),
    )
}

pub(crate) fn block_reason(decision: &Decision) -> &str {
    match decision {
        Decision::Block { reason, .. } => reason,
        other => panic!("expected a block, got {other:?}"),
    }
}

/// The one owner predicate, for every kind of asker: the hooks (a named session, or a
/// client that names none), set-up, and the runner (which names none).
#[test]
fn whose_loop_has_one_answer_per_state_and_asker() {
    let mut unclaimed = ralph(5);
    unclaimed.session_id = None;
    let mut driven = ralph(5);
    driven.driver = crate::Driver::Loop;
    let claimed = ralph(5);
    let cases: [(&State, Option<&str>, Whose<'_>); 8] = [
        (&claimed, Some("s1"), Whose::This),
        (&claimed, Some("s2"), Whose::Other("s1")),
        (&claimed, None, Whose::Other("s1")),
        (&unclaimed, Some("s1"), Whose::Unclaimed),
        (&unclaimed, None, Whose::Unclaimed),
        (&driven, Some("s1"), Whose::Runner),
        (&driven, Some("s2"), Whose::Runner),
        (&driven, None, Whose::Runner),
    ];
    for (state, session, whose) in cases {
        assert_eq!(whose_loop(state, session), whose, "{session:?}");
    }
}

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

/// The hooks' one rule: which session a hook belongs to, for every state and asker, and
/// each hook's policy over it the same as the per-hook tests over [`whose_loop`] it
/// replaced (the expressions each hook used before, kept here as the reference).
#[test]
fn issue_31_one_rule_says_which_session_a_hook_belongs_to() {
    use crate::{Belongs, belongs};
    let mut unclaimed = ralph(5);
    unclaimed.session_id = None;
    let mut driven = ralph(5);
    driven.driver = crate::Driver::Loop;
    let claimed = ralph(5);
    let cases: [(&State, Option<&str>, Belongs<'_>); 9] = [
        (&claimed, Some("s1"), Belongs::Owner),
        (&claimed, Some("s2"), Belongs::OtherSession("s1")),
        (&claimed, None, Belongs::NoSessionId { owner: Some("s1") }),
        (&unclaimed, Some("s1"), Belongs::Unclaimed),
        (&unclaimed, None, Belongs::NoSessionId { owner: None }),
        (&driven, Some("s1"), Belongs::Runner),
        (&driven, Some("s2"), Belongs::Runner),
        (&driven, None, Belongs::Runner),
        (&unclaimed, Some("s2"), Belongs::Unclaimed),
    ];
    for (state, session, expected) in cases {
        let rule = belongs(state, session);
        assert_eq!(rule, expected, "{session:?}");
        let whose = whose_loop(state, session);
        // Stop: continues (and claims) the loop of a named session that owns it or finds
        // it unclaimed; another session's, or a nameless stop of a claimed loop, is
        // "the loop belongs to ..."; a nameless stop of an unclaimed one claims nothing.
        let before = match (whose, session) {
            (Whose::Runner, _) => "silent",
            (Whose::Other(_), _) => "belongs to another",
            (Whose::Unclaimed | Whose::This, Some(_)) => "goes on",
            (Whose::Unclaimed | Whose::This, None) => "no session id",
        };
        let now = match (rule, session) {
            (Belongs::Runner, _) => "silent",
            (Belongs::OtherSession(_) | Belongs::NoSessionId { owner: Some(_) }, _) => {
                "belongs to another"
            }
            (Belongs::Unclaimed | Belongs::Owner, Some(_)) => "goes on",
            (Belongs::NoSessionId { owner: None } | Belongs::Unclaimed | Belongs::Owner, _) => {
                "no session id"
            }
        };
        assert_eq!(now, before, "stop, {session:?}");
        // PostToolUse: who gets checks, and whose loop remembers them.
        assert_eq!(
            matches!(
                rule,
                Belongs::Runner
                    | Belongs::Owner
                    | Belongs::Unclaimed
                    | Belongs::NoSessionId { owner: None }
            ),
            matches!(whose, Whose::Runner | Whose::This | Whose::Unclaimed),
            "checks, {session:?}"
        );
        assert_eq!(
            matches!(
                rule,
                Belongs::Owner | Belongs::Unclaimed | Belongs::NoSessionId { owner: None }
            ),
            matches!(whose, Whose::This | Whose::Unclaimed),
            "check recorded, {session:?}"
        );
        // StopFailure: a named session's own or unclaimed loop.
        assert_eq!(
            matches!(rule, Belongs::Owner | Belongs::Unclaimed),
            session.is_some() && matches!(whose, Whose::This | Whose::Unclaimed),
            "stop failure, {session:?}"
        );
        // The prompt, the compaction, SessionEnd, a session coming back, its notice: the
        // owner only.
        assert_eq!(
            rule == Belongs::Owner,
            session.is_some() && whose == Whose::This,
            "owner only, {session:?}"
        );
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

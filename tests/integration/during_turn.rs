//! A status or cancel the user types while Claude works (issue 20, item 4): Claude Code
//! holds it in its queue until the turn ends, so the Stop hook reads the queue from the
//! transcript and answers at once; a status sent at once (2.1.330's send-now) lets the
//! command expand so the model goes on. Texts snapshotted whole.

use serde_json::json;

use crate::own_voice::{answer, expand_with, snapshot};
use crate::util::*;

/// A transcript whose last lines queue `prompt`, typed while the model worked.
fn queued(prompt: &str) -> String {
    format!(
        "{}\n{}\n",
        json!({"type": "user", "timestamp": "2026-01-01T00:00:00.000Z", "message": {"role": "user", "content": "/ralph Fix it"}}),
        json!({"type": "queue-operation", "operation": "enqueue", "timestamp": "2100-01-01T00:00:00.000Z", "content": prompt}),
    )
}

fn stop_with_queue(env: &TestEnv, prompt: &str) -> Run {
    std::fs::write(env.home.join("transcript.jsonl"), queued(prompt)).unwrap();
    env.stop(&env.stop_input("Still working."))
}

#[test]
fn item_4_a_status_typed_during_the_turn_is_answered_at_the_next_stop() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let run = stop_with_queue(&env, "/pagent-status");
    run.blocked();
    let message = run.decision().unwrap()["systemMessage"]
        .as_str()
        .unwrap()
        .to_owned();
    snapshot!(&env, "stop_answers_a_queued_status", message);
    assert_eq!(env.state().get("paused"), None);
    // Read once: the next stop says nothing more about it.
    let run = env.stop(&env.stop_input("Still working."));
    let message = run.decision().unwrap()["systemMessage"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(!message.contains("pagent ralph loop ·"), "{message}");
}

#[test]
fn item_4_a_cancel_typed_during_the_turn_ends_the_loop_at_the_next_stop() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let message = stop_with_queue(&env, "/pagent:cancel").allowed().unwrap();
    snapshot!(&env, "stop_ends_the_loop_for_a_queued_cancel", message);
    assert_eq!(env.state()["status"], "cancelled");
}

#[test]
fn item_4_a_status_sent_at_once_lets_the_command_expand_and_the_model_go_on() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix the parser"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let shown = answer(&expand_with(
        &env,
        "pagent-status",
        "",
        Some(&queued("/pagent-status")),
    ))
    .unwrap()
    .unwrap();
    assert!(shown.starts_with("pagent ralph loop · active"), "{shown}");
    let out = env
        .cmd(&["status", "--slash"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    snapshot!(&env, "bang_status_goes_on", out.stdout);
    // Without a running loop of this session, the `!` line hands the model the status.
    let out = env.cmd(&["status", "--slash"]).success();
    assert!(
        out.stdout.contains("inside a plain fenced code block"),
        "{out}"
    );
}

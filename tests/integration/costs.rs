//! Issue 30, point 1: what pagent says about who pays for the agents it starts. A separate
//! Agent SDK credit for `claude -p`, announced for 2026-06-15, never took effect, and
//! `pagent loop` and a reviewer's set-up said it did. They now say only what stays true:
//! which account the agent runs on. Each text is snapshotted as the user meets it, the
//! whole output of the command that says it; `docs/costs.md` holds the policy facts, with
//! their dates and sources.

use crate::util::*;

/// `pagent loop --agent KIND` through one iteration of a fake agent that prints `stream`
/// (one of the agent's real streams, ending on the promise): its whole output.
fn one_iteration(kind: &str, stream: &str) -> String {
    let env = TestEnv::new();
    std::fs::write(env.home.join("stream.jsonl"), stream).unwrap();
    let bin = env.fake_tool("bin", kind, "cat > /dev/null\ncat \"$HOME/stream.jsonl\"");
    let out = env
        .cmd(&[
            "loop",
            "--agent",
            kind,
            "--agent-bin",
            &bin.join(kind).display().to_string(),
            "ralph",
            "Fix the parser",
        ])
        .success();
    assert_eq!(env.state()["status"], "complete", "{out}");
    out.stdout
}

#[test]
fn issue_30_1_pagent_loop_with_claude_says_only_which_account_pays() {
    let stream = r#"{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"Done.\n<promise>DONE</promise>","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":5}}"#;
    assert_text!(one_iteration("claude", &format!("{stream}\n")));
}

#[test]
fn issue_30_1_pagent_loop_with_codex_says_only_which_account_pays() {
    assert_text!(one_iteration(
        "codex",
        include_str!("../fixtures/agents/codex-0.171.0/e2e-ralph-ralph-003.jsonl")
    ));
}

#[test]
fn issue_30_1_pagent_loop_with_opencode_says_only_which_account_pays() {
    // Recorded when the promise could end a line; the rule now wants it on a line alone.
    let stream = include_str!("../fixtures/agents/opencode-1.18.33/e2e-ralph-ralph-003.jsonl")
        .replace("All done. <promise>", "All done.\\n<promise>");
    assert_text!(one_iteration("opencode", &stream));
}

/// What `ralph --review` says at set-up with each agent as the reviewer, one snapshot.
#[test]
fn issue_30_1_each_agent_reviewer_says_only_which_account_pays() {
    let mut said = Said::new();
    for reviewer in ["claude", "codex", "opencode"] {
        let env = TestEnv::new();
        let out = env
            .cmd(&[
                "ralph",
                "Parse the input",
                "--review",
                "the parser handles the empty input",
                "--reviewer",
                reviewer,
            ])
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .success();
        said.say(&format!("--reviewer {reviewer}"), &out.stdout);
    }
    assert_text!(said.text());
}

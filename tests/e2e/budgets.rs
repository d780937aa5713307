//! Budgets end to end (issue 13): a `--max-tokens` loop ends on its budget with the
//! figures, in a session through the Stop hook (tokens from Claude Code's transcript) and
//! through `pagent loop` (tokens from each run's `result`). The mock reports 10 input and
//! 5 output tokens per reply.

use crate::harness::{E2e, claude_binary};
use crate::mock::Reply;

/// In a session: the Stop hook reads the transcript's usage since the last Stop.
#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn a_max_tokens_ralph_loop_ends_on_its_budget_with_the_figures() {
    let e2e = E2e::start(
        (1..=10)
            .map(|n| Reply::text(&format!("Pass {n}.")))
            .collect(),
    );
    let run = e2e
        .claude("/pagent:ralph Endless task --max-tokens 40 --no-progress-limit 0")
        .run();
    assert_eq!(run.code, Some(0));
    let status = e2e.status();
    assert_eq!(status["status"], "gave_up", "{status}");
    // 15 tokens a reply: the third crosses 40. But the client may not have written a
    // turn's latest replies to the transcript when its Stop hook runs (2.1.197 writes in
    // batches): those are counted at a later Stop, a reply or two late. Whatever the lag,
    // the loop ends on the figures it had read, and says them.
    let replies = e2e.mock.requests().len();
    let used = status["usage"]["total_tokens"].as_u64().unwrap();
    assert!((3..=6).contains(&replies), "{replies} replies: {status}");
    assert!(
        used >= 40 && used <= 15 * replies as u64,
        "{used} tokens: {status}"
    );
    let outputs = run.stop_hook_outputs();
    let message = outputs.last().unwrap()["systemMessage"].as_str().unwrap();
    assert!(
        message.contains(&format!(
            "gave up: reached the token budget ({used} tokens used of 40) at stage ralph, iteration {replies}"
        )),
        "{message}"
    );
    assert_eq!(
        status["usage"]["cost_source"],
        "estimated from pagent's list prices"
    );
}

/// The same budget through `pagent loop`: the tokens come from each run's `result`.
#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn a_max_tokens_pagent_loop_ends_on_its_budget_with_the_figures() {
    let e2e = E2e::start(
        (1..=4)
            .map(|n| Reply::text(&format!("Pass {n}.")))
            .collect(),
    );
    let claude = claude_binary();
    let out = e2e.pagent_loop(&[
        "--agent",
        "claude",
        "--agent-bin",
        claude.to_str().unwrap(),
        "--max-tokens",
        "40",
        "ralph",
        "--no-progress-limit",
        "0",
        "Endless task",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(3), "{stdout}");
    assert_eq!(e2e.mock.requests().len(), 3, "{stdout}");
    assert!(
        stdout.contains(
            "reached the token budget (45 tokens used of 40) at stage ralph, iteration 3"
        ),
        "{stdout}"
    );
    let status = e2e.status();
    assert_eq!(status["usage"]["total_tokens"], 45, "{status}");
    assert_eq!(status["usage"]["cost_source"], "reported by the agent");
}

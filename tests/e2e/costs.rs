//! Issue 30, point 1, as the user meets it with the real CLI: the start line of a loop with
//! a Claude reviewer in Claude Code's terminal UI (80x24), and `pagent loop`'s note before
//! its first iteration with Claude Code as the agent, say only which account pays. Until
//! issue 30 both named a separate Agent SDK credit that never took effect.

use serde_json::Value;

use crate::harness::{E2e, claude_agent_args};
use crate::mock::Reply;
use crate::tmux::{Tmux, flat};

/// Who pays for a `claude -p` run, as pagent says it.
const CLAUDE_PAYS: &str = "on the account Claude Code is logged in with: a Claude \
                           subscription's usage limits, or an API key's account \
                           (docs/costs.md)";

#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn issue_30_1_the_reviewers_start_line_on_screen_says_only_which_account_pays() {
    let e2e = E2e::start(vec![
        Reply::text("Working on it."),
        Reply::text("Still working."),
        Reply::text("pong"),
    ]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    // Short enough to fit one line of 80 columns, as `type_line` reads it back.
    ui.type_line("/ralph Parse it --review 'empty input handled' --max-iterations 2");
    let screen = ui.wait_for(&format!(
        "pagent: the reviewer runs `claude -p` {CLAUDE_PAYS}"
    ));
    assert!(!flat(&screen).contains("Agent SDK"), "{screen}");
    // Two answers without the promise: the loop ends on its limit, the reviewer never ran.
    ui.wait_until("the loop to end on its limit", |_| {
        e2e.state()["status"] == "gave_up"
    });
    ui.type_line("ping");
    ui.wait_until("the model's pong", |_| e2e.mock.requests().len() > 2);
    ui.wait_for("pong");
    assert_eq!(e2e.mock.requests().len(), 3, "only the worker was asked");
    for index in 0..3 {
        let told = e2e.mock.all_text(index);
        assert!(
            !told.contains("the reviewer runs"),
            "request {index}: {told}"
        );
    }
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn issue_30_1_pagent_loop_with_claude_code_says_only_which_account_pays() {
    let e2e = E2e::start(vec![Reply::text("Done.\n<promise>DONE</promise>")]);
    let out = e2e.pagent_loop(&claude_agent_args(&["ralph", "Fix the parser"]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(0), "{stdout}");
    let notes: Vec<String> = stdout
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["event"] == "note")
        .filter_map(|e| e["text"].as_str().map(str::to_owned))
        .collect();
    assert_eq!(
        notes,
        [format!(
            "pagent loop: each iteration runs `claude -p` {CLAUDE_PAYS}"
        )],
        "{stdout}"
    );
    assert_eq!(e2e.status()["status"], "complete");
}

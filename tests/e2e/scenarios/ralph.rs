//! Ralph loops driven by the Stop hook inside one Claude Code session: the re-prompt, the
//! task kept byte for byte, the limits, a second session, a cancel, an API error.

use super::*;

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn ralph_reprompts_with_the_task_until_the_promise() {
    let e2e = E2e::start(vec![
        Reply::text("First attempt."),
        Reply::text("Second attempt."),
        Reply::text("All fixed.\n<promise>DONE</promise>"),
    ]);
    let run = e2e
        .claude("/pagent:ralph Fix the parser --promise DONE --max-iterations 5")
        .run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 3);
    // pagent's UserPromptExpansion hook set the loop up and showed the user its start line
    // (2.1.330 prints it in the stream too); the model got its task, not the start line.
    let first = e2e.mock.all_text(0);
    assert!(!first.contains("pagent: started"), "{first}");
    assert!(first.contains("Work on the task below."), "{first}");
    if crate::harness::claude_at_least("2.1.330") {
        let shown = run.shown();
        assert!(
            shown.iter().any(|l| l.starts_with(
                "UserPromptExpansion says: pagent: started a Ralph loop: up to 5 iterations"
            )),
            "{shown:?}"
        );
    }
    assert!(
        first.contains("pagent · ralph loop · iteration 1 of 5\n\nFix the parser"),
        "{first}"
    );
    for (request, iteration) in [(1, 2), (2, 3)] {
        let told = e2e.mock.stop_feedback(request);
        assert!(
            told.starts_with(&format!(
                "pagent · ralph loop · iteration {iteration} of 5\n"
            )),
            "{told}"
        );
        assert!(told.ends_with("\n\nFix the parser"), "{told}");
    }
    assert_eq!(
        run.result()["result"],
        "All fixed.
<promise>DONE</promise>"
    );
    let costs = crate::harness::context_costs(&e2e, &run, "ralph");
    assert_eq!(costs.len(), 2);
    for cost in &costs {
        assert_eq!(cost.copies, crate::harness::reason_copies(), "{cost:?}");
    }
    let status = e2e.status();
    assert_eq!(status["status"], "complete");
    assert_eq!(status["iterations"], 3);
    assert_eq!(status["session_id"], run.init()["session_id"]);
}

/// Everything issue 3 lists (quotes, an apostrophe, `$()`, backticks, `;`, parentheses, a
/// newline) plus a backslash. Claude Code 2.1.197 itself refuses a `!` block whose text has
/// a backslash followed by whitespace ("Contains backslash-escaped whitespace"), so the
/// backslash here is followed by a letter; see docs/limitations.md.
const NASTY: &str = "Fix it's \"parser\"; run $(touch pwned) `touch pwned2` (x) C:\\temp; echo done\nsecond line: 'quoted' $HOME";

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn ralph_keeps_a_task_with_shell_characters_byte_for_byte() {
    let e2e = E2e::start(vec![
        Reply::text("Working."),
        Reply::text("<promise>DONE</promise>"),
    ]);
    let run = e2e.claude(&format!("/pagent:ralph {NASTY}")).run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.state()["stages"][0]["prompt"], NASTY);
    let told = e2e.mock.stop_feedback(1);
    assert!(told.ends_with(&format!("\n\n{NASTY}")), "{told}");
    for file in ["pwned", "pwned2"] {
        assert!(
            !e2e.path(file).exists(),
            "{file} was created: user text reached a shell"
        );
    }
    assert_eq!(e2e.status()["status"], "complete");
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn max_iterations_ends_the_run_normally_and_says_why() {
    let e2e = E2e::start(vec![Reply::text("One."), Reply::text("Two.")]);
    let run = e2e
        .claude("/pagent:ralph Endless task --max-iterations 2 --no-progress-limit 0")
        .run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 2);
    let status = e2e.status();
    assert_eq!(status["status"], "gave_up");
    let outputs = run.stop_hook_outputs();
    let message = outputs.last().unwrap()["systemMessage"].as_str().unwrap();
    assert!(
        message.contains("gave up: stage ralph used all 2 iterations"),
        "{message}"
    );
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn cancelling_in_the_middle_lets_the_next_stop_through() {
    // The model itself runs `pagent cancel` through Bash in the middle of the loop.
    let e2e = E2e::start(vec![
        Reply::text("Working."),
        Reply::bash("\"$PAGENT_BIN\" cancel"),
        Reply::text("Cancelled."),
    ]);
    let run = e2e
        .claude("/pagent:ralph Long task")
        .arg("--allowedTools")
        .arg("Bash")
        .run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 3);
    assert!(
        e2e.mock
            .told_text(2)
            .contains("pagent: cancelled the Ralph loop"),
        "{}",
        e2e.mock.told_text(2)
    );
    assert_eq!(
        run.stop_hook_outputs().last().unwrap(),
        &serde_json::Value::Null
    );
    assert_eq!(e2e.status()["status"], "cancelled");
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn a_second_session_is_not_blocked_by_another_sessions_loop() {
    let e2e = E2e::start(vec![Reply::text("Unrelated answer.")]);
    let out = e2e.pagent_as(Some("first-session"), &["ralph", "First session's task"]);
    assert!(out.status.success(), "{out:?}");
    let run = e2e.claude("An unrelated question").run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 1);
    assert_eq!(run.stop_hook_outputs(), [serde_json::Value::Null]);
    let state = e2e.state();
    assert_eq!(
        (state["status"].as_str(), state["session_id"].as_str()),
        (Some("active"), Some("first-session"))
    );
    assert_eq!(state["iterations"], json!([1]));
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn answering_without_changing_anything_ends_the_loop() {
    let e2e = E2e::start(vec![
        Reply::text("Thinking."),
        Reply::text("Still thinking."),
        Reply::text("Hmm."),
    ]);
    let run = e2e.claude("/pagent:ralph Improve the docs").run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 3);
    let status = e2e.status();
    assert_eq!(status["status"], "gave_up");
    assert!(
        status["end_reason"]
            .as_str()
            .unwrap()
            .starts_with("3 turns in a row changed no file"),
        "{status}"
    );
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn an_api_error_ends_the_run_and_leaves_the_loop_visible() {
    // A 500, not a 400: since 2.1.219 Claude Code re-sends a 400 up to five times with
    // request features stripped; a 500 ends the run on every supported version (with
    // CLAUDE_CODE_MAX_RETRIES=0).
    let e2e = E2e::start(vec![Reply::text("Working."), Reply::Error(500)]);
    let run = e2e.claude("/pagent:ralph Some task").run();
    // The Stop hook is not consulted for a failed turn.
    assert_eq!(run.code, Some(1));
    assert_eq!(e2e.mock.requests().len(), 2);
    assert!(
        e2e.mock
            .stop_feedback(1)
            .starts_with("pagent · ralph loop · iteration 2 of 25")
    );
    let status = e2e.status();
    assert_eq!(
        (status["status"].as_str(), status["iterations"].as_u64()),
        (Some("active"), Some(2))
    );
    // The owner can end it; a new session would not be blocked by it anyway.
    assert!(e2e.pagent(&["cancel"]).status.success());
}

/// One rule for replacing a loop (item 7), in `-p` mode too: a second `/pagent:ralph` in
/// the session of an active loop is refused without `--force`, shown by pagent with no
/// model turn; with it, the replacement is announced and the new task runs.
#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn item_7_a_second_ralph_in_the_loops_session_needs_force() {
    const SESSION: &str = "5b0f4c2e-7d1a-4f3e-9a2b-8c6d0e1f2a3b";
    let e2e = E2e::start(vec![Reply::text("Done.\n<promise>DONE</promise>")]);
    let out = e2e.pagent_as(Some(SESSION), &["ralph", "First task"]);
    assert!(out.status.success(), "{out:?}");
    let run = e2e
        .claude("/pagent:ralph Second task")
        .arg("--session-id")
        .arg(SESSION)
        .run();
    assert_eq!(run.code, Some(0));
    let result = run.result()["result"].as_str().unwrap().to_owned();
    assert!(
        result.starts_with(
            "UserPromptExpansion operation blocked by hook:\npagent: error: a ralph loop is \
             already active in this project (this session's"
        ),
        "{result}"
    );
    assert!(
        result.contains("or add --force to replace it\nNothing was started."),
        "{result}"
    );
    assert_eq!(e2e.mock.requests().len(), 0);
    assert_eq!(e2e.state()["stages"][0]["prompt"], "First task");
    let run = e2e
        .claude("/pagent:ralph Second task --force")
        .arg("--resume")
        .arg(SESSION)
        .run();
    assert_eq!(run.code, Some(0));
    if crate::harness::claude_at_least("2.1.330") {
        let shown = run.shown();
        assert!(
            shown.iter().any(|l| l
                .starts_with("UserPromptExpansion says: pagent: replaced the active ralph loop")),
            "{shown:?}"
        );
    }
    assert_eq!(e2e.state()["stages"][0]["prompt"], "Second task");
    assert_eq!(e2e.status()["status"], "complete");
}

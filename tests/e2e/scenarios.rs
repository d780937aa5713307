//! The user-facing flows of pagent, each driven to its end through the real CLI.

use std::process::Command;

use serde_json::json;

use crate::harness::{E2e, claude_binary, repo_root};
use crate::mock::Reply;

const STOP_FEEDBACK: &str = "Stop hook feedback:\n";

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn plugin_validates_and_loads_with_its_commands_and_agent() {
    for target in [repo_root(), repo_root().join(".claude-plugin/plugin.json")] {
        let out = Command::new(claude_binary())
            .args(["plugin", "validate", "--strict"])
            .arg(&target)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "validate {}: {}{}",
            target.display(),
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    let e2e = E2e::start(vec![Reply::text("Hello.")]);
    let run = e2e.claude("Say hello").run();
    assert_eq!(run.code, Some(0));
    let init = run.init();
    let plugins: Vec<&str> = init["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(plugins.contains(&"pagent"), "{plugins:?}");
    let commands: Vec<&str> = init["slash_commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_str())
        .collect();
    for command in [
        "pagent:run",
        "pagent:status",
        "pagent:cancel",
        "pagent:ralph",
        "pagent:ralph-cancel",
        "pagent:parallel",
        "pagent:resume",
    ] {
        assert!(
            commands.contains(&command),
            "{command} missing from {commands:?}"
        );
    }
    let agents = init["agents"].to_string();
    assert!(agents.contains("ralph-worker"), "{agents}");
    // No loop: the Stop hook ran and allowed silently.
    assert_eq!(run.stop_hook_outputs(), [serde_json::Value::Null]);
    assert_eq!(e2e.mock.requests().len(), 1);
}

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
    let first = e2e.mock.all_text(0);
    assert!(first.contains("pagent: started a Ralph loop"), "{first}");
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
/// backslash here is followed by a letter; see the README's known limitations.
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

fn lines(n: usize, what: &str) -> String {
    (1..=n).map(|i| format!("{what} line {i}\n")).collect()
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn the_prd_to_code_pipeline_runs_all_five_stages_in_order() {
    let e2e_paths = |e2e: &E2e, rel: &str| e2e.path(rel);
    let e2e = E2e::start_with(|e2e| {
        vec![
            Reply::write(
                &e2e_paths(e2e, "architecture.md"),
                &lines(60, "architecture"),
            ),
            Reply::text("Architecture written."),
            Reply::write(&e2e_paths(e2e, "test-plan.md"), &lines(10, "test")),
            Reply::text("Test plan written."),
            Reply::write(&e2e_paths(e2e, "test-plan.md"), &lines(35, "test")),
            Reply::text("Test plan extended."),
            Reply::write(
                &e2e_paths(e2e, "security-assessment.md"),
                &lines(25, "threat"),
            ),
            Reply::text("Assessment written."),
            Reply::write(&e2e_paths(e2e, "src/main.rs"), "fn main() {}\n"),
            Reply::write(&e2e_paths(e2e, "src/lib.rs"), "pub fn todo() {}\n"),
            Reply::write(&e2e_paths(e2e, "src/store.rs"), "pub struct Store;\n"),
            Reply::text("Implemented."),
            Reply::text("Verified against the PRD; tests pass.\n<promise>DONE</promise>"),
        ]
    });
    e2e.write(
        "prd.md",
        "# PRD\nA command-line todo list with add, list and done.\n",
    );
    let run = e2e.claude("/pagent:run prd.md").run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 13);

    let first = e2e.mock.all_text(0);
    assert!(
        first.contains("pagent · stage 1 of 5: architect · iteration 1 of 25"),
        "{first}"
    );
    assert!(
        first.contains("prd.md") && !first.contains("{{prd_path}}"),
        "{first}"
    );
    let expectations = [
        (2, "pagent · stage 2 of 5: qa · iteration 1 of 25"),
        (4, "pagent · stage 2 of 5: qa · iteration 2 of 25"),
        (6, "pagent · stage 3 of 5: security · iteration 1 of 25"),
        (8, "pagent · stage 4 of 5: implementer · iteration 1 of 25"),
        (12, "pagent · stage 5 of 5: verifier · iteration 1 of 25"),
    ];
    for (request, header) in expectations {
        let told = e2e.mock.stop_feedback(request);
        assert!(told.starts_with(header), "request {request}: {told}");
    }
    let costs = crate::harness::context_costs(&e2e, &run, "prd-to-code");
    assert_eq!(costs.len(), 5);
    for cost in &costs {
        assert_eq!(cost.copies, crate::harness::reason_copies(), "{cost:?}");
    }
    let missing = e2e.mock.stop_feedback(4);
    assert!(
        missing.contains("- test-plan.md has 10 of the 30 non-blank lines it needs"),
        "{missing}"
    );
    assert!(missing.contains("test-plan.md"), "{missing}");
    let status = e2e.status();
    assert_eq!(status["status"], "complete", "{status}");
    assert_eq!(status["iterations"], 6);
    let last = run.stop_hook_outputs().pop().unwrap();
    assert!(
        last["systemMessage"]
            .as_str()
            .unwrap()
            .starts_with("pagent: prd-to-code complete: all 5 stages done"),
        "{last}"
    );
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn a_failing_check_command_feeds_its_output_back_until_it_passes() {
    let e2e = E2e::start_with(|e2e| {
        vec![
            Reply::text("Tried."),
            Reply::write(&e2e.path("fixed.txt"), "ok\n"),
            Reply::text("Fixed it."),
        ]
    });
    e2e.write("prd.md", "# PRD\nMake the check pass.\n");
    e2e.write("check.sh", "#!/bin/sh\ngrep -q ok fixed.txt 2>/dev/null && exit 0\necho 'CHECK FAILED: fixed.txt does not say ok'\nexit 3\n");
    e2e.write(
        ".claude/pagent/workflows/checked.json",
        &json!({"stages": [{"name": "fix", "prompt": "Make check.sh pass (see {{prd_path}}).", "exit_when": {"custom": "sh check.sh", "timeout": 20}}]}).to_string(),
    );
    let run = e2e
        .claude("/pagent:run prd.md --workflow checked --trust")
        .run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 3);
    let told = e2e.mock.stop_feedback(1);
    assert!(
        told.contains("- `sh check.sh` exited with code 3"),
        "{told}"
    );
    assert!(
        told.contains("CHECK FAILED: fixed.txt does not say ok"),
        "{told}"
    );
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
            .contains("pagent: cancelled the ralph loop"),
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
fn the_cancel_and_status_commands_run_the_binary() {
    // A loop of another session, inspected and cancelled from new sessions.
    let e2e = E2e::start(vec![
        Reply::text("Status relayed."),
        Reply::text("Cancel relayed."),
    ]);
    let out = e2e.pagent_as(Some("first-session"), &["ralph", "Some task"]);
    assert!(out.status.success(), "{out:?}");
    let run = e2e.claude("/pagent:status").run();
    assert_eq!(run.code, Some(0));
    assert!(
        e2e.mock
            .all_text(0)
            .contains("pagent ralph loop · active · 1 iteration"),
        "{}",
        e2e.mock.all_text(0)
    );
    let run = e2e.claude("/pagent:ralph-cancel").run();
    assert_eq!(run.code, Some(0));
    assert!(
        e2e.mock
            .all_text(1)
            .contains("pagent: cancelled the ralph loop"),
        "{}",
        e2e.mock.all_text(1)
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
fn without_the_binary_the_session_ends_normally_and_says_so() {
    let e2e = E2e::start(vec![Reply::text("Nothing to do.")]);
    let plugin = e2e.home.join("plugin-copy");
    crate::harness::stage_plugin(&plugin);
    let run = e2e
        .claude("/pagent:ralph Some task")
        .plugin_dir(Some(plugin))
        .env_remove("PAGENT_BIN")
        .env("PATH", "/usr/bin:/bin")
        .run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 1);
    let told = e2e.mock.all_text(0);
    assert!(
        told.contains("pagent: the pagent binary is not installed"),
        "{told}"
    );
    let stop = run.hook_responses("Stop");
    assert_eq!(stop.len(), 1);
    let stderr = stop[0]["stderr"].as_str().unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("pagent: the pagent binary is not installed"),
        "{stderr}"
    );
    assert_eq!(stop[0]["exit_code"], 0);
    assert!(!e2e.path(".claude/pagent-pipeline.json").exists());
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn installed_from_a_local_marketplace_the_hook_fires_without_plugin_dir() {
    let e2e = E2e::start(vec![Reply::text("One."), Reply::text("Two.")]);
    let market = e2e.home.join("market");
    crate::harness::stage_plugin(&market);
    for args in [
        vec!["plugin", "marketplace", "add", market.to_str().unwrap()],
        vec!["plugin", "install", "pagent@pagent"],
    ] {
        let out = Command::new(claude_binary())
            .args(&args)
            .env("HOME", &e2e.home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // As scripts/install.sh does: the binary in the plugin's data folder.
    let data_bin = e2e
        .home
        .join(".claude/plugins/data/pagent-pagent/bin/pagent");
    std::fs::create_dir_all(data_bin.parent().unwrap()).unwrap();
    std::fs::copy(crate::harness::pagent_bin(), &data_bin).unwrap();

    let run = e2e
        .claude("/pagent:ralph Task --max-iterations 2")
        .plugin_dir(None)
        .env_remove("PAGENT_BIN")
        .env("PATH", "/usr/bin:/bin")
        .run();
    assert_eq!(run.code, Some(0));
    let plugins = run.init()["plugins"].to_string();
    assert!(plugins.contains("pagent"), "{plugins}");
    assert_eq!(e2e.mock.requests().len(), 2);
    assert!(
        e2e.mock
            .stop_feedback(1)
            .starts_with("pagent · ralph loop · iteration 2 of 2")
    );
    assert_eq!(e2e.status()["status"], "gave_up");
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

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn backpressure_feeds_a_json_error_back_at_once_and_goes_quiet_when_fixed() {
    let e2e = E2e::start_with(|e2e| {
        vec![
            Reply::write(
                &e2e.path("config.json"),
                "{\n  \"name\": \"demo\",\n  \"port\": \n}\n",
            ),
            Reply::write(
                &e2e.path("config.json"),
                "{\n  \"name\": \"demo\",\n  \"port\": 8080\n}\n",
            ),
            Reply::text("Config fixed.\n<promise>DONE</promise>"),
        ]
    });
    let run = e2e.claude("/pagent:ralph Write config.json").run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 3);
    let after_bad_write = e2e.mock.told_text(1);
    assert!(
        after_bad_write.contains(
            "PostToolUse:Write hook additional context: pagent checked config.json after your edit"
        ),
        "{after_bad_write}"
    );
    assert!(
        after_bad_write.contains("config.json: line 4, column 1: expected value"),
        "{after_bad_write}"
    );
    let after_fix = e2e.mock.told_text(2);
    assert!(
        !after_fix.contains("hook additional context"),
        "a clean file must add no context: {after_fix}"
    );
    assert_eq!(run.hook_responses("PostToolUse").len(), 2);
    let status = e2e.pagent(&["status"]);
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains("JSON syntax config.json: passed"),
        "{status}"
    );
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn pagent_loop_drives_fresh_claude_processes_to_the_promise() {
    let e2e = E2e::start(vec![
        Reply::text("First look."),
        Reply::text("Made progress."),
        Reply::text("Done.\n<promise>DONE</promise>"),
    ]);
    let claude = claude_binary();
    let plugin = repo_root();
    let out = e2e.pagent_loop(&[
        "--json",
        "--agent",
        "claude",
        "--agent-bin",
        claude.to_str().unwrap(),
        "--agent-arg=--plugin-dir",
        &format!("--agent-arg={}", plugin.display()),
        "--agent-arg=--include-hook-events",
        "ralph",
        "--no-progress-limit",
        "0",
        "Tidy the README",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(e2e.mock.requests().len(), 3);
    for (index, iteration) in [(0, 1), (1, 2), (2, 3)] {
        // A fresh process each time: one user turn, no Stop hook feedback in between.
        let request = &e2e.mock.requests()[index];
        let users = request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .count();
        assert_eq!(users, 1, "request {index} is not a fresh conversation");
        let told = e2e.mock.all_text(index);
        assert!(
            !told.contains(STOP_FEEDBACK),
            "request {index}: the Stop hook interfered: {told}"
        );
        assert!(
            told.contains(&format!(
                "pagent · ralph loop · iteration {iteration} of 25"
            )),
            "request {index}: {told}"
        );
        assert!(told.contains("Tidy the README"), "{told}");
    }
    // The plugin was loaded in each agent, and its Stop hook stood aside every time.
    let runs = e2e.path(".claude/pagent/runs");
    let mut logs: Vec<_> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    assert_eq!(logs.len(), 3);
    for log in &logs {
        let text = std::fs::read_to_string(log).unwrap();
        let stops: Vec<serde_json::Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e["subtype"] == "hook_response" && e["hook_event"] == "Stop")
            .collect();
        assert_eq!(stops.len(), 1, "{}: {text}", log.display());
        assert_eq!(stops[0]["stdout"], "", "{}", log.display());
    }
    let status = e2e.status();
    assert_eq!(
        (status["status"].as_str(), status["iterations"].as_u64()),
        (Some("complete"), Some(3))
    );
    let last: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap())
        .unwrap_or_else(|e| panic!("the last line is not JSON ({e}): {stdout}"));
    assert_eq!(last["outcome"], "complete", "{stdout}");
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn ralph_parallel_shows_the_plan_and_the_command_to_run() {
    let e2e = E2e::start(vec![Reply::text("I will run it in the background.")]);
    e2e.write(
        "tasks.txt",
        "alpha: Fix the 'login' bug\nbeta: Add a README\n",
    );
    let run = e2e
        .claude("/pagent:parallel tasks.txt -j 2 --max-iterations 5")
        .run();
    assert_eq!(run.code, Some(0));
    let told = e2e.mock.all_text(0);
    assert!(told.contains("pagent parallel: 2 task(s) from"), "{told}");
    assert!(
        told.contains("alpha  (branch pagent/alpha, up to 5 iterations): Fix the 'login' bug"),
        "{told}"
    );
    assert!(
        told.contains(" parallel ") && told.contains(" -j 2 --max-iterations 5 --json"),
        "{told}"
    );
    // A plan only: nothing ran.
    assert!(!e2e.path(".claude/pagent/worktrees").exists());
}

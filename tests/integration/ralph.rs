//! Ralph loops through the binary: set-up, blocks, the promise, the transcript fallback.

use std::fs;

use serde_json::json;

use crate::util::*;

#[test]
fn ralph_blocks_with_the_task_until_the_promise_then_completes() {
    let env = TestEnv::new();
    let out = env.cmd(&["ralph", "--promise", "DONE", "Fix it"]).success();
    let mut said = Said::new();
    said.say("pagent ralph --promise DONE 'Fix it'", &out.stdout);

    let reason = env.stop(&env.stop_input("First pass done.")).blocked();
    said.say("stop without the promise", &reason);

    let message = env
        .stop(&env.stop_input("Finished.\n<promise>DONE</promise>"))
        .allowed()
        .unwrap();
    said.say("stop with the promise", &message);
    assert_text!(said.text());
    let status: serde_json::Value = env.status();
    assert_eq!(status["status"], "complete");
    assert_eq!(status["iterations"], 2);
    // A finished loop never blocks again.
    assert_eq!(env.stop(&env.stop_input("more")).allowed(), None);
}

#[test]
fn a_promise_in_the_injected_prompt_or_a_tool_result_never_completes_the_loop() {
    let env = TestEnv::new();
    env.cmd(&[
        "ralph",
        "--max-iterations",
        "10",
        "--no-progress-limit",
        "0",
        "Fix it",
    ])
    .success();
    let transcript = env.home.join("transcript.jsonl");
    let mut input = env.stop_input("");
    input
        .as_object_mut()
        .unwrap()
        .remove("last_assistant_message");

    let cases = [
        // Stop hook feedback (isMeta) quoting the promise, after the model's last words.
        vec![
            transcript_line_text("m1", "working on it"),
            transcript_line_user(
                "Stop hook feedback:\nend with <promise>DONE</promise>",
                true,
            ),
        ],
        // A tool result holding the promise text.
        vec![
            transcript_line_text("m1", "reading"),
            transcript_line_tool_result("docs say <promise>DONE</promise>"),
        ],
        // The set-up command's output (the first prompt) holds it, the model did not say it.
        vec![
            transcript_line_user("<promise>DONE</promise> when complete", false),
            transcript_line_text("m2", "started"),
        ],
        // The model quotes the instruction in code, which is not a promise.
        vec![transcript_line_text(
            "m3",
            "I will print `<promise>DONE</promise>` at the end",
        )],
    ];
    for lines in cases {
        fs::write(&transcript, lines.join("\n") + "\n").unwrap();
        let reason = env.stop(&input).blocked();
        assert!(reason.contains("<promise>DONE</promise>"), "{reason}");
    }
    fs::write(
        &transcript,
        [transcript_line_text(
            "m4",
            "All done.\n<promise>DONE</promise>",
        )]
        .join("\n")
            + "\n",
    )
    .unwrap();
    assert!(env.stop(&input).allowed().unwrap().contains("complete"));
}

#[test]
fn without_last_assistant_message_the_captured_transcripts_are_read_from_the_end() {
    let fixtures =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/claude-code-2.1.197");
    for name in ["sample_transcript.jsonl", "transcript_runB.jsonl"] {
        let env = TestEnv::new();
        env.cmd(&["ralph", "Create hello.txt"]).success();
        // The captured model wrote the promise mid-line, which no longer counts (issue
        // 10): put it on a line of its own.
        let full = fs::read_to_string(fixtures.join(name))
            .unwrap()
            .replace("Finished. <promise>", "Finished.\\n<promise>");
        // Cut the transcript just after the first "First pass done." line: no promise yet.
        let cut = full.find("First pass done.").unwrap();
        let first = &full[..cut + full[cut..].find('\n').unwrap() + 1];
        let transcript = env.home.join("t.jsonl");
        let input = json!({"session_id": SESSION, "transcript_path": transcript, "cwd": env.root, "hook_event_name": "Stop"});
        fs::write(&transcript, first).unwrap();
        env.stop(&input).blocked();
        fs::write(&transcript, &full).unwrap();
        assert!(
            env.stop(&input).allowed().unwrap().contains("complete"),
            "{name}"
        );
    }
}

#[test]
fn a_missing_transcript_is_not_a_promise() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    let input =
        json!({"session_id": SESSION, "transcript_path": "/nonexistent/t.jsonl", "cwd": env.root});
    let reason = env.stop(&input).blocked();
    assert_text!(reason);
}

const NASTY: &str =
    "Fix it's \"parser\"; run $(rm -rf x) `id` (x) \\ back\\slash\nsecond line\ttab; done";

#[test]
fn prompts_with_shell_characters_are_stored_and_reinjected_byte_for_byte() {
    let by_argument = TestEnv::new();
    by_argument.cmd(&["ralph", NASTY]).success();
    let by_stdin = TestEnv::new();
    by_stdin
        .cmd(&["ralph"])
        .stdin(format!("{NASTY}\n"))
        .success();
    let by_slash_command = TestEnv::new();
    by_slash_command
        .cmd(&["ralph", "--stdin-args"])
        .stdin(format!("{NASTY} --max-iterations 7\n"))
        .success();

    for env in [&by_argument, &by_stdin, &by_slash_command] {
        assert_eq!(env.state()["stages"][0]["prompt"], NASTY, "{}", env.dump());
        let reason = env.stop(&env.stop_input("working")).blocked();
        assert!(reason.ends_with(&format!("\n\n{NASTY}")), "{reason}");
        assert!(!env.exists("x") && !env.exists("pwned"));
    }
    assert_eq!(by_slash_command.state()["max_iterations"], 7);
}

#[test]
fn slash_command_options_come_at_the_end() {
    let env = TestEnv::new();
    let out = env
        .cmd(&["ralph", "--stdin-args"])
        .stdin("\"Make the tests pass\" --promise 'ALL GREEN' --max-iterations=4\n")
        .success();
    assert_text!(out.stdout);
    let state = env.state();
    assert_eq!(state["stages"][0]["prompt"], "Make the tests pass");
    assert_eq!(
        state["stages"][0]["exit_when"],
        json!({"promise_in_output": "ALL GREEN"})
    );
    assert_eq!(state["max_iterations"], 4);
    assert!(
        env.stop(&env.stop_input("<promise>ALL   GREEN</promise>"))
            .allowed()
            .unwrap()
            .contains("complete")
    );
}

#[test]
fn ralph_usage_errors_are_reported_and_start_nothing() {
    let env = TestEnv::new();
    let mut said = Said::new();
    for args in [
        vec!["ralph"],
        vec!["ralph", "--promise", "<b>", "task"],
        vec!["ralph", "--max-iterations", "0", "task"],
    ] {
        let out = env.cmd(&args).stdin("").failure();
        said.say(&args.join(" "), &out.stderr);
        assert!(!env.exists(".claude/pagent-pipeline.json"), "{args:?}");
    }
    assert_text!(said.text());
}

#[test]
fn the_session_that_starts_a_loop_owns_it() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", "owner")
        .success();
    assert_eq!(env.state()["session_id"], "owner");
    // Another session stops freely; the owner is blocked.
    assert_eq!(env.stop(&env.stop_input("hi")).allowed(), None);
    let mut input = env.stop_input("hi");
    input["session_id"] = json!("owner");
    env.stop(&input).blocked();
    // The owner may restart its own loop (with --force, item 7); another session may not
    // clobber it.
    env.cmd(&["ralph", "--force", "New task"])
        .env("CLAUDE_CODE_SESSION_ID", "owner")
        .success();
    let out = env
        .cmd(&["ralph", "Other"])
        .env("CLAUDE_CODE_SESSION_ID", "intruder")
        .failure();
    assert_text!(out.stderr);
    env.cmd(&["ralph", "--force", "Other"])
        .env("CLAUDE_CODE_SESSION_ID", "intruder")
        .success();
    assert_eq!(env.state()["stages"][0]["prompt"], "Other");
}

#[test]
fn slash_command_errors_are_text_with_exit_0_and_start_nothing() {
    let env = TestEnv::new();
    let mut said = Said::new();
    for stdin in ["\n", "--max-iterations 5", "task --promise <B>"] {
        let out = env.cmd(&["ralph", "--stdin-args"]).stdin(stdin).success();
        said.say(&format!("/ralph {stdin:?}"), &out.stdout);
        assert!(!env.exists(".claude/pagent-pipeline.json"), "{stdin:?}");
    }
    assert_text!(said.text());
}

/// Issue 10: `/ralph Remove the --force flag from deploy.sh` replaced another session's
/// loop and mangled the task. A slash command never replaces another session's loop,
/// `--force` or not, and options count only at the end of the text.
#[test]
fn a_slash_command_never_replaces_another_sessions_loop() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Theirs"])
        .env("CLAUDE_CODE_SESSION_ID", "owner")
        .success();
    let mut said = Said::new();
    for text in [
        "Remove the --force flag from deploy.sh",
        "Mine --force",
        "--force -- Mine",
    ] {
        let out = env
            .cmd(&["ralph", "--stdin-args"])
            .env("CLAUDE_CODE_SESSION_ID", "intruder")
            .stdin(text)
            .success();
        said.say(&format!("/ralph {text}"), &out.stdout);
        assert_eq!(env.state()["stages"][0]["prompt"], "Theirs", "{text:?}");
    }
    assert_text!(said.text());
    // The owner's own slash command replaces its loop with --force (item 7), and the task
    // keeps its words.
    env.cmd(&["ralph", "--stdin-args"])
        .env("CLAUDE_CODE_SESSION_ID", "owner")
        .stdin("Remove the --force flag from deploy.sh --force")
        .success();
    assert_eq!(
        env.state()["stages"][0]["prompt"],
        "Remove the --force flag from deploy.sh"
    );
    env.cmd(&["ralph", "--stdin-args"])
        .env("CLAUDE_CODE_SESSION_ID", "owner")
        .stdin("Document the --promise option --force")
        .success();
    let state = env.state();
    assert_eq!(
        state["stages"][0]["prompt"],
        "Document the --promise option"
    );
    assert_eq!(state["stages"][0]["exit_when"]["promise_in_output"], "DONE");
}

/// Issue 12: set-up compared only session ids, so the session that started a loop could
/// replace it without --force after `pagent loop` took it over, under a runner in the
/// middle of an iteration. A loop a runner drives is no session's: replacing it takes
/// --force, from any session or terminal.
#[test]
fn a_loop_pagent_loop_drives_is_replaced_only_with_force() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Theirs"])
        .env("CLAUDE_CODE_SESSION_ID", "owner")
        .success();
    // `pagent loop` takes the loop over; its agent crashes, so the runner gives up for
    // now and leaves the loop active, driven by a runner, still naming its session.
    env.cmd(&[
        "loop",
        "--retries",
        "0",
        "--command",
        "cat >/dev/null; exit 7",
    ])
    .failure();
    let state = env.state();
    assert_eq!(
        (&state["driver"], &state["status"]),
        (&"loop".into(), &"active".into())
    );
    assert_eq!(state["session_id"], "owner");
    let out = env
        .cmd(&["ralph", "Mine"])
        .env("CLAUDE_CODE_SESSION_ID", "owner")
        .failure();
    assert_text!(out.stderr);
    assert_eq!(env.state()["stages"][0]["prompt"], "Theirs");
    env.cmd(&["ralph", "--force", "Mine"])
        .env("CLAUDE_CODE_SESSION_ID", "owner")
        .success();
    assert_eq!(env.state()["stages"][0]["prompt"], "Mine");
}

/// A Stop waits up to a second for a transcript Claude Code has not created yet (2.1.197's
/// `claude -p` creates it after the first Stop hook starts); one that never comes
/// (`claude --no-session-persistence` keeps none) costs that wait once per loop, not at
/// every Stop.
#[test]
fn a_transcript_that_never_comes_is_waited_for_once_per_loop() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "--no-progress-limit", "0", "Fix it"])
        .success();
    let transcript = env.home.join("never.jsonl");
    let input = json!({"session_id": SESSION, "transcript_path": transcript, "cwd": env.root,
        "hook_event_name": "Stop", "stop_hook_active": true, "last_assistant_message": "Not yet."});
    let started = std::time::Instant::now();
    env.stop(&input).blocked();
    let first = started.elapsed();
    assert!(first >= std::time::Duration::from_millis(900), "{first:?}");
    for _ in 0..3 {
        let started = std::time::Instant::now();
        env.stop(&input).blocked();
        let later = started.elapsed();
        assert!(later < std::time::Duration::from_millis(900), "{later:?}");
    }
    assert!(!transcript.exists());
}

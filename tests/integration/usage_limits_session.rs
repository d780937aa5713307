//! Issue 21, item 2, in the session: Claude Code's StopFailure hook marks a loop waiting
//! on a usage limit (no iteration counted, the no-progress count untouched, the user told
//! once), Claude Code's own "limit has reset" prompt does not pause it, and the next Stop
//! goes on. The hook inputs are the ones Claude Code 2.1.197 and 2.1.330 sent
//! (`tests/fixtures/agents/limits/*stopfailure*`), with this test's session and project.

use serde_json::{Value, json};

use crate::util::*;

fn fixture(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/agents/limits")
        .join(name);
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// The captured StopFailure input, sent from this test's session in this project.
fn stop_failure_input(env: &TestEnv, name: &str) -> Value {
    let mut input = fixture(name);
    input["session_id"] = json!(SESSION);
    input["cwd"] = json!(env.root);
    input["transcript_path"] = json!(env.home.join("transcript.jsonl"));
    input
}

fn stop_failure(env: &TestEnv, input: &Value) -> Run {
    stop_failure_from(env, input, None)
}

/// The hook as Claude Code `client` runs it: its version in `AI_AGENT`, as observed.
fn stop_failure_from(env: &TestEnv, input: &Value, client: Option<&str>) -> Run {
    let mut cmd = env
        .cmd(&["hook", "stop-failure"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .env("TZ", "UTC0");
    if let Some(version) = client {
        cmd = cmd.env(
            "AI_AGENT",
            format!("claude-code_{}_harness", version.replace('.', "-")),
        );
    }
    cmd.stdin(serde_json::to_vec(input).unwrap()).success()
}

fn user_prompt(env: &TestEnv, prompt: &str) {
    env.cmd(&["hook", "user-prompt-submit"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(
            json!({
                "session_id": SESSION,
                "cwd": env.root,
                "hook_event_name": "UserPromptSubmit",
                "prompt": prompt,
            })
            .to_string(),
        )
        .success();
}

#[test]
fn issue_21_stop_failure_marks_the_loop_waiting_and_the_next_stop_continues_it() {
    for (capture, client, then) in [
        (
            "claude-2.1.197-stopfailure-429.json",
            "2.1.197",
            "Claude Code 2.1.197 does not go on by itself: once the limit has reset, type /pagent:resume in the session (nothing runs until then)",
        ),
        (
            "claude-2.1.330-stopfailure-429.json",
            "2.1.330",
            "Claude Code 2.1.330 goes on by itself after the reset (if its settings let it continue at a usage limit; otherwise type /pagent:resume once it has reset)",
        ),
    ] {
        let env = TestEnv::new();
        env.cmd(&["ralph", "Fix it"]).success();
        env.stop(&env.stop_input("working")).blocked();
        let before = env.state();
        assert_eq!(before["iterations"], json!([2]));
        assert_eq!(before["no_progress_count"], 1);

        let input = stop_failure_input(&env, capture);
        let out = stop_failure_from(&env, &input, Some(client));
        let said: Value = serde_json::from_str(out.stdout.trim()).unwrap();
        let message = said["systemMessage"].as_str().unwrap();
        assert!(
            message.starts_with("pagent: You've hit your ")
                && message.contains("The loop waits for the reset, in about ")
                && message.ends_with(&format!(
                    "; {then}. The turn the limit cut short counts no iteration."
                )),
            "{capture}: {message}"
        );
        assert!(said.get("decision").is_none(), "{capture}: never a block");
        let waiting = env.state();
        assert_eq!(waiting["iterations"], json!([2]), "{capture}");
        assert_eq!(waiting["no_progress_count"], 1, "{capture}");
        assert_eq!(waiting["status"], "active");
        assert!(
            waiting["limit_wait"]["until"].is_string(),
            "{capture}: {waiting}"
        );
        assert_eq!(waiting["limit_wait"]["reset_known"], true);

        // Told once: the same failure again writes and says nothing.
        let again = stop_failure(&env, &stop_failure_input(&env, capture));
        assert_eq!(again.stdout, "", "{capture}");
        assert_eq!(env.state(), waiting, "{capture}");

        let status = env.cmd(&["status"]).success();
        assert!(
            status.stdout.contains("· waiting ·")
                && status
                    .stdout
                    .contains("waiting for a usage limit to reset: ")
                && status.stdout.contains("): You've hit your ")
                && status.stdout.contains(&format!("\nthen: {then}\n")),
            "{capture}: {status}"
        );

        // Claude Code 2.1.330 goes on by itself with a prompt of its own: not the user's.
        user_prompt(
            &env,
            "Your claude.ai usage limit has reset. Continue the task you were working on when the limit was reached; do not repeat work that is already complete.",
        );
        assert!(env.state().get("paused").is_none(), "{capture}");

        // The next Stop goes on as if the limit had not been, and says the wait is over.
        let next = env.stop(&env.stop_input("worked on"));
        next.blocked();
        let said: Value = serde_json::from_str(next.stdout.trim()).unwrap();
        let message = said["systemMessage"].as_str().unwrap();
        assert!(
            message.starts_with("pagent: Ralph loop, iteration 3 of 25: ")
                && message.contains(" · waited ")
                && message.ends_with(" for the usage limit to reset"),
            "{capture}: {message}"
        );
        let after = env.state();
        assert!(after.get("limit_wait").is_none(), "{capture}");
        assert_eq!(after["iterations"], json!([3]), "{capture}");
        assert_eq!(
            env.actions(),
            ["ralph", "block", "limit_wait", "block"],
            "{capture}"
        );
    }
}

#[test]
fn issue_21_other_api_errors_never_touch_the_loop() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    env.stop(&env.stop_input("working")).blocked();
    let before = env.read(".claude/pagent-pipeline.json");
    // A 500 (`server_error`, Claude Code 2.1.330's capture), an unknown error, and a
    // usage limit of another session: nothing is written, nothing is said.
    let server_error = stop_failure_input(&env, "claude-2.1.330-stopfailure-500.json");
    let mut unknown = server_error.clone();
    unknown["error"] = json!("invalid_request");
    let mut other = stop_failure_input(&env, "claude-2.1.330-stopfailure-429.json");
    other["session_id"] = json!("another-session");
    for input in [server_error, unknown, other] {
        let out = stop_failure(&env, &input);
        assert_eq!(out.stdout, "", "{input}");
        assert_eq!(env.read(".claude/pagent-pipeline.json"), before, "{input}");
    }
    // The loop goes on at the next stop as before.
    env.stop(&env.stop_input("working")).blocked();
    assert_eq!(env.state()["iterations"], json!([3]));
}

#[test]
fn issue_21_a_typed_message_still_pauses_a_waiting_loop_and_resume_goes_on() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    env.stop(&env.stop_input("working")).blocked();
    stop_failure(
        &env,
        &stop_failure_input(&env, "claude-2.1.197-stopfailure-429.json"),
    );
    // 2.1.197 does not go on by itself: what the user types is theirs.
    user_prompt(&env, "what happened?");
    assert_eq!(env.state()["paused"]["why"], "you wrote a message");
    let resumed = env.cmd(&["resume"]).success();
    assert!(
        resumed.stdout.starts_with("pagent: resumed the Ralph loop"),
        "{resumed}"
    );
    let state = env.state();
    assert!(
        state.get("paused").is_none() && state.get("limit_wait").is_none(),
        "{state}"
    );
    env.stop(&env.stop_input("working")).blocked();
    assert_eq!(env.state()["iterations"], json!([3]));
}

#[test]
fn issue_21_the_stop_failure_hook_without_a_loop_reads_nothing() {
    let env = TestEnv::new();
    // The binary's fast path: no state file, so stdin (not even JSON) is never read.
    let out = env
        .bin(&["hook", "stop-failure"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin("not json")
        .success();
    assert_eq!((out.stdout.as_str(), out.stderr.as_str()), ("", ""));
    assert!(!env.exists(".claude"));
}

#[test]
fn issue_21_stop_failure_is_registered_like_the_other_hooks() {
    let hooks: Value = serde_json::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks/hooks.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let entry = &hooks["hooks"]["StopFailure"][0];
    assert_eq!(entry["matcher"], "rate_limit");
    let stop = hooks["hooks"]["Stop"][0]["hooks"][0]["command"]
        .as_str()
        .unwrap();
    assert_eq!(
        entry["hooks"][0]["command"].as_str().unwrap(),
        stop.replace("hook stop", "hook stop-failure")
    );
    assert_eq!(entry["hooks"][0]["type"], "command");
}

/// Issue 30, §2 in the session: a StopFailure whose text is one no wait ends (out of
/// credits, a seat or admin setting; Claude Code sends them all as `rate_limit`) ends the
/// loop at once, saying why and what to do, instead of waiting "until the session goes
/// on", which nothing would ever do.
#[test]
fn issue_30_stop_failure_of_a_limit_no_wait_ends_ends_the_loop() {
    for text in [
        "Your seat type doesn't include usage credits",
        "You're out of usage credits",
        "Your usage allocation has been disabled by your admin · ask your admin for a higher limit",
    ] {
        let env = TestEnv::new();
        env.cmd(&["ralph", "Fix it"]).success();
        env.stop(&env.stop_input("working")).blocked();
        let mut input = stop_failure_input(&env, "claude-2.1.330-stopfailure-429.json");
        input["last_assistant_message"] = json!(text);
        let out = stop_failure_from(&env, &input, Some("2.1.332"));
        let said: Value = serde_json::from_str(out.stdout.trim()).unwrap();
        let message = said["systemMessage"].as_str().unwrap();
        assert!(
            message.starts_with("pagent: gave up: ")
                && message.contains(&format!("{text}: waiting will not end this; ")),
            "{text}: {message}"
        );
        let state = env.state();
        assert_eq!(state["status"], "gave_up", "{text}");
        assert!(state.get("limit_wait").is_none(), "{text}");
        assert_eq!(state["iterations"], json!([2]), "{text}: not counted");
        assert_eq!(env.actions(), ["ralph", "block", "gave_up"], "{text}");
        let status = env.cmd(&["status"]).success();
        assert!(
            status.stdout.contains("· gave up ·") && status.stdout.contains("ended: "),
            "{text}: {status}"
        );
        // Claude Code shows no StopFailure message: the user's next prompt shows it, once.
        let prompt = |text: &str| {
            env.cmd(&["hook", "user-prompt-submit"])
                .env("CLAUDE_PROJECT_DIR", &env.root)
                .stdin(
                    json!({"session_id": SESSION, "cwd": env.root,
                        "hook_event_name": "UserPromptSubmit", "prompt": text})
                    .to_string(),
                )
                .success()
                .stdout
        };
        let told: Value = serde_json::from_str(prompt("what now?").trim()).unwrap();
        assert_eq!(told["systemMessage"].as_str(), Some(message), "{text}");
        assert_eq!(prompt("and now?").trim(), "", "{text}: said once");
        // The next Stop of the session is free.
        env.stop(&env.stop_input("ok")).allowed();
    }
}

/// Issue 30, §2: a `rate_limit` StopFailure whose words are the server's own throttle or
/// an API key's rate limit is an outage, not a usage limit: the loop is not marked
/// waiting (status would say "waiting for a usage limit" that nobody's plan hit).
#[test]
fn issue_30_a_throttle_in_the_session_is_not_a_usage_limit() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    env.stop(&env.stop_input("working")).blocked();
    let before = env.read(".claude/pagent-pipeline.json");
    for text in [
        "API Error: Server is temporarily limiting requests (not your usage limit) · limit",
        "API Error: Request rejected (429) · This request would exceed your account's rate limit. Please try again later.",
    ] {
        let mut input = stop_failure_input(&env, "claude-2.1.330-stopfailure-429.json");
        input["last_assistant_message"] = json!(text);
        let out = stop_failure_from(&env, &input, Some("2.1.332"));
        assert_eq!(out.stdout, "", "{text}");
        assert_eq!(env.read(".claude/pagent-pipeline.json"), before, "{text}");
    }
    env.stop(&env.stop_input("working")).blocked();
    assert_eq!(env.state()["iterations"], json!([3]));
}

/// Issue 30, §4: `pagent status` and `status --all` of a session on Claude Code 2.1.197
/// waiting for a limit say what the user must do (2.1.197 will not go on by itself),
/// never "then the same iteration runs again".
#[test]
fn issue_30_status_of_a_2_1_197_session_says_what_the_user_must_do() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    env.stop(&env.stop_input("working")).blocked();
    let input = stop_failure_input(&env, "claude-2.1.197-stopfailure-429.json");
    stop_failure_from(&env, &input, Some("2.1.197"));
    let status = env.cmd(&["status"]).success();
    let all = env.cmd(&["status", "--all"]).success();
    assert!(!status.stdout.contains("then the same iteration runs again"));
    let filters = vec![
        // The Windows build under Wine spells it `Z:\tmp\.tmpX\project`.
        (r"(?:/tmp/|[A-Z]:\\tmp\\)[^ \n]*[/\\]project", "[PROJECT]"),
        (
            r"\(until (?:[A-Z][a-z]{2} \d{1,2} )?\d\d:\d\d\)",
            "(until [CLOCK])",
        ),
        (r"\b\d+h\d\dm\b", "[DURATION]"),
        (r"\b\d+m\d\ds\b", "[DURATION]"),
        (r"\b\d+s\b", "[DURATION]"),
        // Waited 0s or 1s by now: the header says so only from 1s on.
        (
            r"\[DURATION\] worked, \[DURATION\] waited for usage limits",
            "[DURATION]",
        ),
        (r"session: [0-9a-f-]+", "session: [SESSION]"),
        // The logs line has its own snapshots (`status::`).
        (r"(?m)^logs: .*$", "logs: [LOGS]"),
    ];
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!(format!("{}\n=== status --all\n{}", status.stdout, all.stdout));
    });
}

//! Issue 21, item 2, `pagent loop`: how a usage-limit wait ends besides waiting it out
//! (Ctrl-C and `pagent cancel` within a second, `pagent resume` at once), a credit limit
//! that gives up, and the errors that are not limits at all (outages, `--no-limit-wait`).
//! The fake agents are `usage_limits.rs`'s.

use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::usage_limits::{CLAUDE_DONE, CLAUDE_LIMIT, limited_agent, runs, snapshot_of_a_wait};
use crate::util::snapshot::regex_escape;
use crate::util::*;
use pagent_door::testing;

/// Starts the loop on an agent whose limit resets in an hour, and returns once the wait
/// is written (read from `--json` events, never after a fixed sleep).
fn start_waiting_an_hour(env: &TestEnv) -> (Child, Lines) {
    let agent = limited_agent(env, 3600, CLAUDE_LIMIT, CLAUDE_DONE);
    let mut child = env
        .bin(&[
            "loop",
            "--json",
            "--agent",
            "claude",
            "--agent-bin",
            &agent,
            "ralph",
            "Do it",
        ])
        .command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Lines::of(child.stdout.take().unwrap());
    let line = lines.wait_for(Duration::from_secs(20), "a limit_wait event", |l| {
        serde_json::from_str::<Value>(l).is_ok_and(|e| e["event"] == "limit_wait")
    });
    let event: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(event["reset_known"], true, "{line}");
    assert!(
        (3600..=3662).contains(&event["wait_secs"].as_u64().unwrap()),
        "{line}"
    );
    (child, lines)
}

/// Waits (under a deadline far past any limit a test sets) for the child's exit code.
fn exit_code(child: &mut Child) -> Option<i32> {
    wait_until(Duration::from_secs(60), "the loop's exit", || {
        child.try_wait().unwrap().map(|status| status.code())
    })
}

#[test]
fn issue_21_cancel_during_the_wait_ends_it_within_a_second() {
    let env = TestEnv::new();
    let (mut child, mut lines) = start_waiting_an_hour(&env);
    assert!(env.state()["limit_wait"]["until"].is_string());
    let baseline = env.baseline();
    let cancelled = Instant::now();
    env.cmd(&["cancel"]).success();
    let code = exit_code(&mut child);
    // The wait is an hour long; a second on a quiet machine.
    baseline.assert_within(
        cancelled.elapsed(),
        20,
        Duration::from_secs(1),
        "the wait after a cancel",
    );
    assert_eq!(code, Some(130));
    let rest = lines.to_end(Duration::from_secs(20));
    let last: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert_eq!(last["outcome"], "stopped", "{rest:?}");
    assert_eq!(env.state()["status"], "cancelled");
    assert_eq!(runs(&env), 1);
}

#[test]
fn issue_21_ctrl_c_during_the_wait_ends_it_within_a_second_and_the_next_loop_waits_on() {
    let env = TestEnv::new();
    let (mut child, mut lines) = start_waiting_an_hour(&env);
    let baseline = env.baseline();
    let interrupted = Instant::now();
    testing::signal(child.id() as i32, testing::SIGINT);
    let code = exit_code(&mut child);
    baseline.assert_within(
        interrupted.elapsed(),
        20,
        Duration::from_secs(1),
        "the wait after Ctrl-C",
    );
    assert_eq!(code, Some(130));
    let rest = lines.to_end(Duration::from_secs(20));
    let last: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert_eq!(last["outcome"], "interrupted", "{rest:?}");
    // The wait is kept: status shows it, and `pagent resume` ends it, so the next loop
    // runs the same iteration at once.
    let state = env.state();
    assert_eq!(state["status"], "active");
    assert!(state["limit_wait"]["until"].is_string(), "{state}");
    let status = env.cmd(&["status"]).success();
    assert!(
        status.stdout.starts_with("pagent ralph loop · interrupted · 1 iteration · ")
            && status.stdout.contains("waiting for a usage limit to reset: ")
            && status.stdout.contains(
                " left (until ",
            )
            && status.stdout.contains(
                "): You've hit your 5-hour limit · resets 3am (Europe/Paris)\n"
            )
            // Nothing runs it now: the user must start `pagent loop` again.
            && status.stdout.contains(
                "\nthen: the same iteration runs again when you start `pagent loop` again (none runs now)\n"
            ),
        "{status}"
    );
    let project = regex_escape(&env.root.display().to_string());
    let filters = vec![
        (project.as_str(), "[PROJECT]"),
        crate::util::snapshot::SIZES[0],
        crate::util::snapshot::SIZES[1],
        crate::util::snapshot::SIZES[2],
        // Waited 0s or 1s by now: the header says so only from 1s on.
        (
            r"iteration · \d+s(, \d+s waited for usage limits| worked, \d+s waited for usage limits)?\n",
            "iteration · [TIME]\n",
        ),
        (
            r"\(until (?:[A-Z][a-z]{2} \d{1,2} )?\d\d:\d\d\)",
            "(until [CLOCK])",
        ),
        (r"\b\d+h\d\dm\b", "[DURATION]"),
        (r"\b\d+m\d\ds\b", "[DURATION]"),
        (r"\b\d+s\b", "[DURATION]"),
    ];
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!(status.stdout);
    });
    env.cmd(&["resume"]).success();
    assert!(env.state().get("limit_wait").is_none());
    let agent = env.home.join("agent/fake-agent");
    let out = env
        .cmd(&[
            "loop",
            "--agent",
            "claude",
            "--agent-bin",
            agent.to_str().unwrap(),
        ])
        .success();
    assert_eq!(env.state()["iterations"], json!([1]), "{out}");
    assert_eq!(runs(&env), 2);
}

#[test]
fn issue_21_a_credit_limit_that_will_not_reset_gives_up_and_notifies() {
    let env = TestEnv::new();
    let notified = env.home.join("notified.txt");
    let tools = env.fake_tool(
        "bin",
        "fake-notify",
        &format!("printf '%s|%s\\n' \"$1\" \"$2\" >> {}", notified.display()),
    );
    std::fs::create_dir_all(&env.config).unwrap();
    std::fs::write(
        env.config.join("config.json"),
        format!(
            r#"{{"notify": {{"command": ["{}/fake-notify", "{{status}}", "{{message}}"]}}}}"#,
            tools.display()
        ),
    )
    .unwrap();
    let limited = r#"echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"You'"'"'ve hit your monthly spend limit. See Usage in Settings"}'"#;
    let agent = limited_agent(&env, 0, limited, CLAUDE_DONE);
    let out = env
        .cmd(&[
            "loop",
            "--agent",
            "claude",
            "--agent-bin",
            &agent,
            "ralph",
            "Do it",
        ])
        .run();
    assert_eq!(out.code, Some(3), "{out}");
    let reason = "credit or spend stop: You've hit your monthly spend limit. See Usage in Settings: waiting will not end this; add credits or raise the limit on the agent's account, then start the loop again";
    assert!(out.stdout.contains(reason), "{out}");
    let state = env.state();
    assert_eq!(state["status"], "gave_up");
    assert_eq!(state["end_reason"], reason);
    assert_eq!(state["iterations"], json!([1]));
    assert_eq!(env.actions(), ["ralph", "gave_up"]);
    let text = wait_until(Duration::from_secs(20), "the notification", || {
        std::fs::read_to_string(&notified)
            .ok()
            .filter(|t| t.ends_with('\n'))
    });
    assert!(
        text.starts_with("gave_up|ralph gave up in project: credit or spend stop: "),
        "{text}"
    );
}

#[test]
fn issue_21_outages_stay_retries_told_apart_from_limits() {
    // Claude Code 2.1.330 at a 529 (after its own retries) and at the server's own
    // throttle ("not your usage limit"): retried with backoff, never waited for.
    for fixture in [
        "claude-2.1.330-529-overloaded.jsonl",
        "claude-2.1.330-429-rejected-no-claim.jsonl",
    ] {
        let env = TestEnv::new();
        let lines = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("tests/fixtures/agents/limits")
                .join(fixture),
        )
        .unwrap();
        let stream = env.home.join("stream.jsonl");
        std::fs::write(&stream, lines).unwrap();
        let agent = limited_agent(&env, 0, &format!("cat {}", stream.display()), CLAUDE_DONE);
        let out = env
            .cmd(&[
                "loop",
                "--agent",
                "claude",
                "--agent-bin",
                &agent,
                "--retry-delay",
                "1s",
                "ralph",
                "Do it",
            ])
            .success();
        assert!(!out.stdout.contains("⏸ usage limit"), "{fixture}: {out}");
        assert_eq!(
            env.actions(),
            ["ralph", "retry", "complete"],
            "{fixture}: {out}"
        );
    }
}

#[test]
fn issue_21_no_limit_wait_treats_a_limit_as_before() {
    let env = TestEnv::new();
    let agent = limited_agent(&env, 3600, CLAUDE_LIMIT, CLAUDE_DONE);
    let out = env
        .cmd(&[
            "loop",
            "--agent",
            "claude",
            "--agent-bin",
            &agent,
            "--no-limit-wait",
            "--retry-delay",
            "1s",
            "ralph",
            "Do it",
        ])
        .success();
    assert!(!out.stdout.contains("⏸ usage limit"), "{out}");
    assert!(
        out.stdout.contains(
            "\n! usage limit: You've hit your 5-hour limit · resets 3am (Europe/Paris) (--no-limit-wait); retry 1 of 3 in 1s, not counted as an iteration\n"
        ),
        "{out}"
    );
    assert_eq!(env.actions(), ["ralph", "retry", "complete"], "{out}");
}

/// Issue 30, §4: a usage-limit wait that `pagent loop` resumes after Ctrl-C keeps its
/// stage label (it said "then  runs again" and "⏸ usage limit ·  ·"), says it goes on,
/// and reports the time waited truly: all of it since the limit, and this run's part,
/// which alone counts in this run's last line.
#[test]
fn issue_30_a_wait_resumed_after_ctrl_c_keeps_its_stage_label_and_waited_time() {
    let env = TestEnv::new();
    let agent = limited_agent(&env, 5, CLAUDE_LIMIT, CLAUDE_DONE);
    let mut child = env
        .bin(&[
            "loop",
            "--agent",
            "claude",
            "--agent-bin",
            &agent,
            "--limit-margin",
            "1s",
            "ralph",
            "Do it",
        ])
        .command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut lines = Lines::of(child.stdout.take().unwrap());
    lines.wait_for(Duration::from_secs(20), "the wait's line", |l| {
        l.starts_with("⏸ usage limit: ")
    });
    let interrupted = Instant::now();
    pagent_door::testing::signal(child.id() as i32, pagent_door::testing::SIGINT);
    assert_eq!(exit_code(&mut child), Some(130));
    // The user comes back a little later: the wait went on without pagent.
    std::thread::sleep(Duration::from_secs(2).saturating_sub(interrupted.elapsed()));
    let out = env
        .bin(&["loop", "--agent", "claude", "--agent-bin", &agent])
        .success();
    let waiting = out
        .stdout
        .lines()
        .find(|l| l.starts_with("⏸ usage limit: "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        waiting.contains("; still waiting until ")
            && waiting.contains(
                " more, just past the reset), then ralph · iteration 1/25 runs again, not counted."
            ),
        "{waiting}"
    );
    let resumed = out
        .stdout
        .lines()
        .find(|l| l.starts_with("▶ usage limit waited out ("))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(
        resumed.contains(" since the limit was hit, ")
            && resumed.ends_with(" of it in this run): ralph · iteration 1/25 runs again"),
        "{resumed}"
    );
    let all = env.state()["usage"]["waited_secs"].as_u64().unwrap();
    assert!(all >= 4, "{all}");
    // This run's last line counts this run's wait only, never the wait before it.
    let last = out.stdout.lines().last().unwrap();
    let here: u64 = last
        .split(", ")
        .find_map(|part| part.strip_suffix(" of it waiting for usage limits (15 tokens"))
        .and_then(|secs| secs.strip_suffix('s'))
        .and_then(|secs| secs.parse().ok())
        .unwrap_or_else(|| panic!("{last}"));
    assert!(here < all, "{last}: {here} of {all}");
    snapshot_of_a_wait!(out.stdout);
    assert_eq!(runs(&env), 2);
    assert_eq!(env.state()["iterations"], json!([1]));
}

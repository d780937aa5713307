//! Issue 21, item 2, `pagent loop`: a usage limit is waited out, not fatal. Fake agents
//! print what Claude Code 2.1.330, Codex 0.169.0 and OpenCode 1.18.33 print at a limit
//! (`research/cc-facts.md`, B6, C8), with a reset a few seconds ahead; the loop waits,
//! says so, runs the same iteration again (not counted) and completes.

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::*;

/// A fake agent: run 1 prints `limited` (a shell snippet) and exits 1, every later run
/// prints `done`. `$reset` is now plus `ahead` seconds, `$now_ms` now in milliseconds.
fn limited_agent(env: &TestEnv, ahead: u64, limited: &str, done: &str) -> String {
    let dir = env.home.join("agent");
    std::fs::create_dir_all(&dir).unwrap();
    let script = dir.join("fake-agent");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\ncat > /dev/null\nn=$(cat {runs} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {runs}\n\
             now=$(date +%s); reset=$((now + {ahead})); now_ms=${{now}}000\n\
             if [ $n -eq 1 ]; then\n{limited}\nexit 1\nfi\n{done}\n",
            runs = dir.join("runs").display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    script.display().to_string()
}

/// Claude Code 2.1.330 at a five-hour limit (`captures/b6/2.1.330/429-five_hour`).
const CLAUDE_LIMIT: &str = r#"echo '{"type":"system","subtype":"init","session_id":"s1","model":"claude-test"}'
echo '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":'$reset',"rateLimitType":"five_hour","isUsingOverage":false}}'
echo '{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"You'"'"'ve hit your 5-hour limit · resets 3am (Europe/Paris)"}]},"error":"rate_limit"}'
echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"You'"'"'ve hit your 5-hour limit · resets 3am (Europe/Paris)","total_cost_usd":0,"terminal_reason":"api_error"}'"#;

const CLAUDE_DONE: &str = r#"printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"Done.\n<promise>DONE</promise>","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":5}}'"#;

fn events(env: &TestEnv) -> Vec<Value> {
    env.read(".claude/pagent/events.jsonl")
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn actions(env: &TestEnv) -> Vec<String> {
    events(env)
        .iter()
        .map(|e| e["action"].as_str().unwrap().to_owned())
        .collect()
}

fn runs(env: &TestEnv) -> u32 {
    env.read("../home/agent/runs").trim().parse().unwrap()
}

/// The loop ran the agent twice, the limit between, one iteration counted, completed.
fn assert_waited_and_completed(env: &TestEnv, out: &Run, what: &str) {
    assert_eq!(runs(env), 2, "{what}: {out}");
    assert_eq!(
        actions(env),
        ["ralph", "limit_wait", "limit_resumed", "complete"],
        "{what}: {out}"
    );
    let state = env.state();
    assert_eq!(state["status"], "complete", "{what}");
    assert_eq!(state["iterations"], json!([1]), "{what}: not counted");
    assert_eq!(state["no_progress_count"], 0, "{what}");
    assert!(state.get("limit_wait").is_none(), "{what}");
    assert!(
        state["usage"]["waited_secs"].as_u64().unwrap() >= 1,
        "{what}"
    );
    // Both runs of the iteration keep their log.
    let logs: Vec<String> = std::fs::read_dir(env.path(".claude/pagent/runs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".log"))
        .collect();
    assert_eq!(logs.len(), 2, "{logs:?}");
    assert!(
        logs.iter().any(|n| n.ends_with("-ralph-001-limit1.log")),
        "{logs:?}"
    );
}

#[test]
fn issue_21_a_claude_usage_limit_is_waited_out_and_the_same_iteration_runs_again() {
    let env = TestEnv::new();
    let agent = limited_agent(&env, 3, CLAUDE_LIMIT, CLAUDE_DONE);
    let started = Instant::now();
    let out = env
        .cmd(&[
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
        .success();
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(2) && took < Duration::from_secs(20),
        "{took:?}"
    );
    assert!(
        out.stdout.contains(
            "⏸ usage limit: You've hit your 5-hour limit · resets 3am (Europe/Paris); waiting until "
        ) && out.stdout.contains(
            "just past the reset), then ralph · iteration 1/25 runs again, not counted. Ctrl-C or `pagent cancel` ends the wait."
        ),
        "{out}"
    );
    assert!(
        out.stdout.contains("usage limit waited out (")
            && out.stdout.contains("): ralph · iteration 1/25 runs again"),
        "{out}"
    );
    assert_waited_and_completed(&env, &out, "claude");
    let filters = vec![
        (r"/tmp/[^ ]*/project", "[PROJECT]"),
        (r"until \d\d:\d\d", "until [CLOCK]"),
        (r"\b\d+m\d\ds\b", "[DURATION]"),
        (r"\b\d+s\b", "[DURATION]"),
    ];
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!(out.stdout);
    });
    // Which pool pays, said before anything runs.
    assert!(
        out.stdout.lines().nth(1).is_some_and(|line| line
            == "pagent loop: each iteration runs `claude -p`: on a Claude subscription that spends the plan's separate Agent SDK credit, billed at API prices (since 2026-06-15), not its usage limits; with an API key, your API account (docs/costs.md)"),
        "{out}"
    );
}

/// A zone `offset` seconds east of UTC, and the clock time (`H:MM AM`) of its minute
/// under way, which ends about six seconds from now: Codex writes its reset in local time
/// to the minute, rounded down, so the zone is chosen to end a minute a few seconds ahead.
fn zone_with_a_minute_ahead() -> (String, String) {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_secs();
    let offset = (60 - (now + 6) % 60) % 60;
    let local = (now + 6 + offset - 60) % 86_400;
    let (hour, minute) = (local / 3600, local / 60 % 60);
    let (twelve, half) = match hour {
        0 => (12, "AM"),
        1..=11 => (hour, "AM"),
        12 => (12, "PM"),
        _ => (hour - 12, "PM"),
    };
    (
        format!("PGT-0:00:{offset:02}"),
        format!("{twelve}:{minute:02} {half}"),
    )
}

#[test]
fn issue_21_a_codex_usage_limit_is_waited_out_in_the_machines_zone() {
    let env = TestEnv::new();
    let (tz, at) = zone_with_a_minute_ahead();
    // Codex 0.169.0's words (`captures/c8/codex-0.169.0/usage-limit-resets_at.jsonl`).
    let message = format!(
        "You’ve hit your usage limit. Upgrade to Pro, visit your usage settings to purchase more credits or try again at {at}."
    );
    let limited = format!(
        "echo '{{\"type\":\"thread.started\",\"thread_id\":\"t1\"}}'\necho '{{\"type\":\"turn.started\"}}'\n\
         echo '{{\"type\":\"error\",\"message\":\"{message}\"}}'\n\
         echo '{{\"type\":\"turn.failed\",\"error\":{{\"message\":\"{message}\"}}}}'"
    );
    let done = r#"echo '{"type":"thread.started","thread_id":"t1"}'
printf '%s\n' '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Done.\n<promise>DONE</promise>"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}'"#;
    let agent = limited_agent(&env, 0, &limited, done);
    let out = env
        .cmd(&[
            "loop",
            "--agent",
            "codex",
            "--agent-bin",
            &agent,
            "--limit-margin",
            "1s",
            "--limit-wait",
            "2m",
            "ralph",
            "Do it",
        ])
        .env("TZ", &tz)
        .success();
    assert!(
        out.stdout
            .contains(&format!("try again at {at}; waiting until "))
            && out.stdout.contains("just past the reset"),
        "{tz}: {out}"
    );
    assert_waited_and_completed(&env, &out, "codex");
    assert!(
        out.stdout.contains(
            "pagent loop: each iteration runs `codex exec`: it spends your Codex plan's usage"
        ),
        "{out}"
    );
    let waited = env.state()["usage"]["waited_secs"].as_u64().unwrap();
    assert!(
        (3..=15).contains(&waited),
        "{tz} {at}: waited {waited}s\n{out}"
    );
}

#[test]
fn issue_21_an_opencode_usage_limit_is_waited_out_after_its_retry_after() {
    let env = TestEnv::new();
    // OpenCode 1.18.33's last line after its own retries (`captures/c8/opencode-1.18.33/`).
    let limited = r#"printf '%s\n' '{"type":"error","timestamp":'$now_ms',"sessionID":"ses_1","error":{"name":"APIError","data":{"message":"You have hit your usage limit","statusCode":429,"isRetryable":true,"responseHeaders":{"retry-after":"3"},"responseBody":"{\"error\": {\"message\": \"You have hit your usage limit\", \"type\": \"usage_limit_reached\"}}"}}}'"#;
    let done = r#"echo '{"type":"step_start","sessionID":"ses_1","part":{"type":"step-start"}}'
printf '%s\n' '{"type":"text","sessionID":"ses_1","part":{"id":"p1","type":"text","text":"Done.\n<promise>DONE</promise>"}}'
echo '{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","reason":"stop","cost":0,"tokens":{"input":10,"output":5}}}'"#;
    let agent = limited_agent(&env, 0, limited, done);
    let out = env
        .cmd(&[
            "loop",
            "--agent",
            "opencode",
            "--agent-bin",
            &agent,
            "--limit-margin",
            "1s",
            "ralph",
            "Do it",
        ])
        .success();
    assert!(
        out.stdout.contains(
            "⏸ usage limit: OpenCode: You have hit your usage limit (HTTP 429); waiting until "
        ),
        "{out}"
    );
    assert_waited_and_completed(&env, &out, "opencode");
    assert!(
        out.stdout.contains(
            "pagent loop: each iteration runs `opencode run`: it spends the account of the provider"
        ),
        "{out}"
    );
}

#[test]
fn issue_21_a_limit_without_a_reset_time_waits_limit_wait() {
    let env = TestEnv::new();
    let limited = r#"echo '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","rateLimitType":"five_hour"}}'
echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"You'"'"'ve hit your 5-hour limit"}'"#;
    let agent = limited_agent(&env, 0, limited, CLAUDE_DONE);
    let out = env
        .cmd(&[
            "loop",
            "--agent",
            "claude",
            "--agent-bin",
            &agent,
            "--limit-wait",
            "2s",
            "ralph",
            "Do it",
        ])
        .success();
    assert!(
        out.stdout
            .contains("(2s, no reset time given: --limit-wait)"),
        "{out}"
    );
    assert_waited_and_completed(&env, &out, "no reset");
}

/// Starts the loop on an agent whose limit resets in an hour, and returns once the wait
/// is written (read from `--json` events, never after a fixed sleep).
fn start_waiting_an_hour(env: &TestEnv) -> (Child, mpsc::Receiver<String>) {
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
    let (tx, rx) = mpsc::channel();
    let stdout = child.stdout.take().unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(stdout).lines() {
            if tx.send(line.unwrap_or_default()).is_err() {
                return;
            }
        }
    });
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let line = rx
            .recv_timeout(deadline.saturating_duration_since(Instant::now()))
            .expect("no limit_wait event");
        let event: Value = serde_json::from_str(&line).unwrap();
        if event["event"] == "limit_wait" {
            assert_eq!(event["reset_known"], true, "{line}");
            assert!(
                (3600..=3662).contains(&event["wait_secs"].as_u64().unwrap()),
                "{line}"
            );
            break;
        }
    }
    (child, rx)
}

/// Waits (bounded) for the child's exit; returns its code and how long that took.
fn exit_within(child: &mut Child, limit: Duration) -> (Option<i32>, Duration) {
    let started = Instant::now();
    loop {
        if let Some(status) = child.try_wait().unwrap() {
            return (status.code(), started.elapsed());
        }
        assert!(started.elapsed() < limit * 10, "still waiting");
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[test]
fn issue_21_cancel_during_the_wait_ends_it_within_a_second() {
    let env = TestEnv::new();
    let (mut child, rx) = start_waiting_an_hour(&env);
    assert!(env.state()["limit_wait"]["until"].is_string());
    let cancelled = Instant::now();
    env.cmd(&["cancel"]).success();
    let (code, _) = exit_within(&mut child, Duration::from_secs(1));
    let took = cancelled.elapsed();
    assert!(took < Duration::from_secs(1), "{took:?}");
    assert_eq!(code, Some(130));
    let rest: Vec<String> = rx.iter().collect();
    let last: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert_eq!(last["outcome"], "stopped", "{rest:?}");
    assert_eq!(env.state()["status"], "cancelled");
    assert_eq!(runs(&env), 1);
}

#[test]
fn issue_21_ctrl_c_during_the_wait_ends_it_within_a_second_and_the_next_loop_waits_on() {
    let env = TestEnv::new();
    let (mut child, rx) = start_waiting_an_hour(&env);
    let interrupted = Instant::now();
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let (code, _) = exit_within(&mut child, Duration::from_secs(1));
    assert!(interrupted.elapsed() < Duration::from_secs(1));
    assert_eq!(code, Some(130));
    let rest: Vec<String> = rx.iter().collect();
    let last: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert_eq!(last["outcome"], "interrupted", "{rest:?}");
    // The wait is kept: status shows it, and `pagent resume` ends it, so the next loop
    // runs the same iteration at once.
    let state = env.state();
    assert_eq!(state["status"], "active");
    assert!(state["limit_wait"]["until"].is_string(), "{state}");
    let status = env.cmd(&["status"]).success();
    assert!(
        status.stdout.starts_with("pagent ralph loop · waiting · 1 iteration · ")
            && status.stdout.contains("waiting for a usage limit to reset: ")
            && status.stdout.contains(
                " left (until ",
            )
            && status.stdout.contains(
                "), then the same iteration runs again: You've hit your 5-hour limit · resets 3am (Europe/Paris)\n"
            ),
        "{status}"
    );
    let filters = vec![
        // Waited 0s or 1s by now: the header says so only from 1s on.
        (
            r"iteration · \d+s(, \d+s waited for usage limits| worked, \d+s waited for usage limits)?\n",
            "iteration · [TIME]\n",
        ),
        (r"\(until \d\d:\d\d\)", "(until [CLOCK])"),
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
    let reason = "the agent hit a spend or credit limit that will not reset tonight (it names no reset time): You've hit your monthly spend limit. See Usage in Settings";
    assert!(out.stdout.contains(reason), "{out}");
    let state = env.state();
    assert_eq!(state["status"], "gave_up");
    assert_eq!(state["end_reason"], reason);
    assert_eq!(state["iterations"], json!([1]));
    assert_eq!(actions(&env), ["ralph", "gave_up"]);
    let deadline = Instant::now() + Duration::from_secs(20);
    while !std::fs::read_to_string(&notified).is_ok_and(|t| t.ends_with('\n')) {
        assert!(Instant::now() < deadline, "never notified");
        std::thread::sleep(Duration::from_millis(50));
    }
    let text = std::fs::read_to_string(&notified).unwrap();
    assert!(
        text.starts_with("gave_up|ralph gave up in project: the agent hit a spend"),
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
            actions(&env),
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
    assert!(!out.stdout.contains("usage limit:"), "{out}");
    assert_eq!(actions(&env), ["ralph", "retry", "complete"], "{out}");
}

//! Issue 21, item 2, `pagent loop`: a usage limit is waited out, not fatal. Fake agents
//! print what Claude Code 2.1.330, Codex 0.169.0 and OpenCode 1.18.33 print at a limit
//! (`research/cc-facts.md`, B6, C8), with a reset a few seconds ahead; the loop waits,
//! says so, runs the same iteration again (not counted) and completes. How else a wait
//! ends, and what is not a limit, is `usage_limits_ends.rs`.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::util::*;

/// A fake agent: run 1 prints `limited` (a shell snippet) and exits 1, every later run
/// prints `done`. `$reset` is now plus `ahead` seconds, `$now_ms` now in milliseconds.
pub(crate) fn limited_agent(env: &TestEnv, ahead: u64, limited: &str, done: &str) -> String {
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
pub(crate) const CLAUDE_LIMIT: &str = r#"echo '{"type":"system","subtype":"init","session_id":"s1","model":"claude-test"}'
echo '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":'$reset',"rateLimitType":"five_hour","isUsingOverage":false}}'
echo '{"type":"assistant","message":{"model":"<synthetic>","role":"assistant","content":[{"type":"text","text":"You'"'"'ve hit your 5-hour limit · resets 3am (Europe/Paris)"}]},"error":"rate_limit"}'
echo '{"type":"result","subtype":"success","is_error":true,"api_error_status":429,"result":"You'"'"'ve hit your 5-hour limit · resets 3am (Europe/Paris)","total_cost_usd":0,"terminal_reason":"api_error"}'"#;

pub(crate) const CLAUDE_DONE: &str = r#"printf '%s\n' '{"type":"result","subtype":"success","is_error":false,"num_turns":1,"result":"Done.\n<promise>DONE</promise>","total_cost_usd":0.01,"usage":{"input_tokens":10,"output_tokens":5}}'"#;

pub(crate) fn runs(env: &TestEnv) -> u32 {
    env.read("../home/agent/runs").trim().parse().unwrap()
}

/// The loop ran the agent twice, the limit between, one iteration counted, completed.
fn assert_waited_and_completed(env: &TestEnv, out: &Run, what: &str) {
    assert_eq!(runs(env), 2, "{what}: {out}");
    assert_eq!(
        env.actions(),
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
    let baseline = env.baseline();
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
    // The wait (the reset a second away, then the 1 s margin) is waited out whole, and
    // the rest is a few agent runs, not the hours the reset names on any other day.
    assert!(took >= Duration::from_secs(2), "{took:?}");
    baseline.assert_within(
        took - Duration::from_secs(2),
        150,
        Duration::from_secs(18),
        "a loop that waited out a usage limit",
    );
    assert_waited_and_completed(&env, &out, "claude");
    snapshot_of_a_wait!(out.stdout);
    // Which account pays, said before anything runs (issue 30 has its own snapshot).
    assert!(
        out.stdout
            .lines()
            .nth(1)
            .is_some_and(|line| line
                .starts_with("pagent loop: each iteration runs `claude -p` on the account")),
        "{out}"
    );
}

/// A zone `offset` seconds east of UTC, and the clock time (`H:MM AM`) of its minute
/// under way, which ends about six seconds from now: Codex writes its reset in local time
/// to the minute, rounded down, so the zone is chosen to end a minute a few seconds ahead.
/// A snapshot of a loop that waited out a limit: the clock times it waits until, and the
/// durations, differ from run to run.
macro_rules! snapshot_of_a_wait {
    ($text:expr) => {
        insta::with_settings!({filters => vec![
            (r"/tmp/[^ ]*/project", "[PROJECT]"),
            (r"until (?:[A-Z][a-z]{2} \d{1,2} )?\d\d:\d\d", "until [CLOCK]"),
            (r"at \d\d?:\d\d [AP]M", "at [CLOCK]"),
            (r"\b\d+m\d\ds\b", "[DURATION]"),
            (r"\b\d+s\b", "[DURATION]"),
        ]}, {
            insta::assert_snapshot!($text);
        })
    };
}
pub(crate) use snapshot_of_a_wait;

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
    // The reset is read in the machine's zone (the snapshot hides the clock).
    assert!(
        out.stdout
            .contains(&format!("try again at {at}; waiting until ")),
        "{tz}: {out}"
    );
    assert_waited_and_completed(&env, &out, "codex");
    snapshot_of_a_wait!(out.stdout);
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
    assert_waited_and_completed(&env, &out, "opencode");
    snapshot_of_a_wait!(out.stdout);
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
    // The wait is loop.limit_wait's, here set by its hidden flag (the snapshot hides durations).
    assert!(
        out.stdout
            .contains("(2s, no reset time given: loop.limit_wait)"),
        "{out}"
    );
    assert_waited_and_completed(&env, &out, "no reset");
    snapshot_of_a_wait!(out.stdout);
}

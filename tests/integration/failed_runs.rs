//! Issue 30, §2: every usage-limit text, and an outage told from a limit from a crash, in
//! `pagent loop`. Fake agents print what Claude Code 2.1.332, Codex 0.169.0 and OpenCode
//! 1.18.33 print (the twelve texts Claude Code's Agent SDK exports, the captured outages
//! of `tests/fixtures/agents/limits/`); each failed run is classified and said so in the
//! runner's lines, `--json`, the event log, `pagent status` and the notification. The
//! dashboard's side is `dashboard/browser.rs`, the session's `usage_limits_session.rs`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::usage_limits::CLAUDE_DONE;
use crate::util::*;

/// A fake agent whose run `n` prints `scripts[n - 1]` (the last one for every later
/// run) and exits with its code. `$reset` is now plus two seconds.
fn scripted_agent(env: &TestEnv, scripts: &[(&str, i32)]) -> String {
    let dir = env.home.join("agent");
    std::fs::create_dir_all(&dir).unwrap();
    let mut body = format!(
        "#!/bin/sh\ncat > /dev/null\nn=$(cat {runs} 2>/dev/null || echo 0); n=$((n+1)); echo $n > {runs}\n\
         reset=$(( $(date +%s) + 2 ))\n",
        runs = dir.join("runs").display()
    );
    for (i, (script, code)) in scripts.iter().enumerate() {
        let test = if i + 1 == scripts.len() {
            "true".to_owned()
        } else {
            format!("[ $n -eq {} ]", i + 1)
        };
        body.push_str(&format!("if {test}; then\n{script}\nexit {code}\nfi\n"));
    }
    let script = dir.join("fake-agent");
    std::fs::write(&script, body).unwrap();
    std::fs::set_permissions(&script, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    script.display().to_string()
}

fn runs(env: &TestEnv) -> u32 {
    env.read("../home/agent/runs").trim().parse().unwrap()
}

/// `echo` of a JSON line, quoted for the shell.
fn echo(line: &Value) -> String {
    format!(
        "printf '%s\\n' '{}'",
        line.to_string().replace('\'', "'\"'\"'")
    )
}

/// What Claude Code 2.1.332 prints at a limit: the event (a window's reset two seconds
/// ahead, or the overage a credit or seat stop comes with), the synthetic message and the
/// failed result, all with `text`.
fn claude_limit(text: &str, window: bool) -> String {
    let event = if window {
        r#"echo '{"type":"rate_limit_event","rate_limit_info":{"status":"rejected","resetsAt":'$reset',"rateLimitType":"five_hour"}}'"#.to_owned()
    } else {
        echo(
            &json!({"type": "rate_limit_event", "rate_limit_info": {"status": "rejected",
            "rateLimitType": "overage", "overageStatus": "rejected"}}),
        )
    };
    let assistant = json!({"type": "assistant", "message": {"model": "<synthetic>", "role": "assistant",
        "content": [{"type": "text", "text": text}]}, "error": "rate_limit"});
    let result = json!({"type": "result", "subtype": "success", "is_error": true,
        "api_error_status": 429, "result": text, "total_cost_usd": 0});
    format!("{event}\n{}\n{}", echo(&assistant), echo(&result))
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(
        std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("tests/fixtures/agents/limits")
            .join(name),
    )
    .unwrap()
}

/// The agent prints a captured stream (written beside it, read back with `cat`).
fn print_fixture(env: &TestEnv, name: &str) -> String {
    let path = env.home.join(name);
    std::fs::write(&path, fixture(name)).unwrap();
    format!("cat {}", path.display())
}

/// Each of the twelve texts, from a fake `claude -p`: the two windows are waited out and
/// the same iteration runs again; the ten others end the loop at once, never retried as
/// a crash nor waited for, with the agent's words and "waiting will not end this".
#[test]
fn issue_30_each_of_the_12_usage_limit_texts_from_a_fake_agents_stream() {
    let texts: [(&str, bool); 12] = [
        (
            "You've hit your 5-hour limit · resets 3am (Europe/Paris)",
            true,
        ),
        (
            "You've reached your usage limit · resets 3am (Europe/Paris)",
            true,
        ),
        ("You're out of usage credits", false),
        ("Your org is out of usage · add funds to continue", false),
        ("Your org is out of usage · contact your admin", false),
        ("Your seat type doesn't include usage credits", false),
        ("Your seat type doesn't include usage", false),
        (
            "Your usage allocation has been disabled by your admin · ask your admin for a higher limit",
            false,
        ),
        (
            "Your group's usage limit is set to $0 · ask your admin for a higher limit",
            false,
        ),
        ("Fable 5 requires usage credits", false),
        ("You're out of extra usage", false),
        ("Your seat type doesn't include extra usage", false),
    ];
    let ends: Vec<String> = texts
        .into_iter()
        .filter_map(|(text, resets)| one_limit_text(text, resets))
        .collect();
    let project = regex_escape_tmp();
    insta::with_settings!({filters => vec![(project.as_str(), "[TMP]"), (r"in \d+s", "in [ELAPSED]")]}, {
        insta::assert_snapshot!(ends.join("\n"));
    });
}

/// A loop whose agent hits the limit `text` once: a window that `resets` is waited out
/// and the iteration runs again; any other ends the loop at once, whose last line is
/// returned.
fn one_limit_text(text: &str, resets: bool) -> Option<String> {
    let env = TestEnv::new();
    let agent = scripted_agent(&env, &[(&claude_limit(text, resets), 1), (CLAUDE_DONE, 0)]);
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
            "--retry-delay",
            "1s",
            "ralph",
            "Do it",
        ])
        .run();
    let state = env.state();
    assert_eq!(
        state["iterations"],
        json!([1]),
        "{text}: not counted\n{out}"
    );
    if resets {
        assert_eq!(out.code, Some(0), "{text}\n{out}");
        assert_eq!(runs(&env), 2, "{text}");
        assert_eq!(
            env.actions(),
            ["ralph", "limit_wait", "limit_resumed", "complete"],
            "{text}"
        );
        let waited = &env.events()[1];
        assert_eq!(waited["failure"], "usage_limit", "{waited}");
        return None;
    }
    assert_eq!(out.code, Some(3), "{text}: the loop gave up\n{out}");
    assert_eq!(runs(&env), 1, "{text}: never run again\n{out}");
    assert_eq!(env.actions(), ["ralph", "gave_up"], "{text}");
    assert_eq!(env.events()[1]["failure"], "stop", "{text}");
    let reason = state["end_reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("{text}: waiting will not end this; ")),
        "{text}: {reason}"
    );
    // At once: no wait, no retry (the retry delay alone would be a second).
    assert!(started.elapsed() < Duration::from_secs(20), "{text}");
    assert!(!out.stdout.contains("retry"), "{text}\n{out}");
    Some(out.stdout.lines().last().unwrap().to_owned())
}

fn regex_escape_tmp() -> String {
    r"/tmp/[^ ]*".to_owned()
}

/// The stop's other ways of being said: `--json`'s last event names its class, and the
/// notification says it.
#[test]
fn issue_30_a_stop_is_said_in_json_and_the_notification() {
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
    let text = "Your seat type doesn't include usage credits";
    let agent = scripted_agent(&env, &[(&claude_limit(text, false), 1)]);
    let out = env
        .cmd(&[
            "loop",
            "--json",
            "--agent",
            "claude",
            "--agent-bin",
            &agent,
            "ralph",
            "Do it",
        ])
        .run();
    assert_eq!(out.code, Some(3), "{out}");
    let last: Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        (&last["outcome"], &last["failure"]),
        (&json!("gave up"), &json!("stop")),
        "{last}"
    );
    let reason = "seat or admin stop: Your seat type doesn't include usage credits: waiting will not end this; only the account's admin can lift it, then start the loop again";
    assert_eq!(last["reason"], reason);
    let text = wait_until(Duration::from_secs(20), "the notification", || {
        std::fs::read_to_string(&notified)
            .ok()
            .filter(|t| t.ends_with('\n'))
    });
    assert!(
        text.starts_with(&format!("gave_up|ralph gave up in project: {reason} (")),
        "{text}"
    );
}

/// An outage, then a crash, then a good run: each failed run is said with its class in
/// the runner's lines and `--json`, written to the event log with it, kept in the state
/// for `pagent status` while the next run waits, and an outage does not spend the
/// crashes' retries.
#[test]
fn issue_30_each_failed_run_is_classified_in_the_output_the_log_and_status() {
    let env = TestEnv::new();
    let agent = scripted_agent(
        &env,
        &[
            (
                &print_fixture(&env, "claude-2.1.330-529-overloaded.jsonl"),
                1,
            ),
            (
                &print_fixture(&env, "claude-2.1.197-500-api-error.jsonl"),
                1,
            ),
            ("echo 'segfault' >&2", 139),
            (CLAUDE_DONE, 0),
        ],
    );
    let plain = env
        .cmd(&[
            "loop",
            "--agent",
            "claude",
            "--agent-bin",
            &agent,
            "--retries",
            "1",
            "--retry-delay",
            "1s",
            "ralph",
            "Do it",
        ])
        .success();
    assert_eq!(runs(&env), 4, "{plain}");
    assert_eq!(env.state()["iterations"], json!([1]), "not counted");
    assert_eq!(
        env.state().get("last_failure"),
        None,
        "cleared by the good run"
    );
    let failures: Vec<(String, String)> = env
        .events()
        .iter()
        .filter(|e| e["action"] == "retry")
        .map(|e| {
            (
                e["failure"].as_str().unwrap().to_owned(),
                e["detail"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    assert_eq!(
        failures.iter().map(|f| f.0.as_str()).collect::<Vec<_>>(),
        ["outage", "outage", "crash"],
        "{failures:?}"
    );
    assert!(
        failures[0]
            .1
            .starts_with("service outage: API Error: 529 Overloaded."),
        "{failures:?}"
    );
    assert!(
        failures[2]
            .1
            .starts_with("agent crash or bad exit: the agent exited with code 139; retry 1 of 1"),
        "{failures:?}"
    );
    let project = r"/tmp/[^ ]*/project";
    insta::with_settings!({filters => vec![
        (project, "[PROJECT]"),
        (r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]"),
        (r"\b\d+s\b", "[DURATION]"),
    ]}, {
        insta::assert_snapshot!(plain.stdout);
    });
}

/// While the runner waits to retry an outage, `pagent status` (human and `--json`) says
/// the failed run's class and when the next run starts; `--json`'s retry event names it.
#[test]
fn issue_30_status_says_the_failed_run_being_retried() {
    let env = TestEnv::new();
    let agent = scripted_agent(
        &env,
        &[
            (
                &print_fixture(&env, "claude-2.1.330-529-overloaded.jsonl"),
                1,
            ),
            (CLAUDE_DONE, 0),
        ],
    );
    let mut child = env
        .bin(&[
            "loop",
            "--json",
            "--agent",
            "claude",
            "--agent-bin",
            &agent,
            "--retry-delay",
            "1h",
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
    let line = lines.wait_for(Duration::from_secs(20), "a retry event", |l| {
        serde_json::from_str::<Value>(l).is_ok_and(|e| e["event"] == "retry")
    });
    let retry: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (&retry["failure"], &retry["attempt"], &retry["max"]),
        (&json!("outage"), &json!(1), &json!(0)),
        "{retry}"
    );
    // The retry waits its (capped) delay: the state already says why.
    let status = env.status();
    let failure = &status["last_failure"];
    assert_eq!(failure["class"], "outage", "{status}");
    assert!(failure["retry_at"].is_string(), "{status}");
    let human = env.cmd(&["status"]).success();
    let line = human
        .stdout
        .lines()
        .find(|l| l.starts_with("last failed run: "))
        .unwrap_or_else(|| panic!("{human}"));
    assert!(
        line.contains(" ago: service outage: API Error: 529 Overloaded")
            && line.contains("; retry 1 in 5m00s, retried with backoff for up to 1h00m, not counted as an iteration"),
        "{line}"
    );
    // The whole of both views, `status` and `status --all`.
    let all = env.cmd(&["status", "--all"]).success();
    let filters = vec![
        (r"/tmp/[^ \n]*/project", "[PROJECT]"),
        (r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]"),
        (r"\b\d+s ago\b", "[AGO] ago"),
        (r"\b\d+s\b", "[DURATION]"),
        // The logs line has its own snapshots (`status::`).
        (r"(?m)^logs: .*$", "logs: [LOGS]"),
    ];
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!(format!("{}\n=== status --all\n{}", human.stdout, all.stdout));
    });
    env.cmd(&["cancel"]).success();
    wait_until(Duration::from_secs(20), "the loop's exit", || {
        child.try_wait().unwrap()
    });
}

/// An outage that outlasts `--outage-wait`, and a crash that outlasts `--retries`, stop
/// the runner with the state saved, saying which, in the error, the event log, the state
/// and the notification.
#[test]
fn issue_30_an_outage_is_retried_until_outage_wait_and_a_crash_until_retries() {
    for (what, script, flags, class) in [
        (
            "outage",
            "claude-2.1.330-500-api-error.jsonl",
            ["--outage-wait", "3s"],
            "service outage: API Error: 500 Internal server error.",
        ),
        (
            "crash",
            "",
            ["--retries", "2"],
            "agent crash or bad exit: the agent exited with code 1",
        ),
    ] {
        let env = TestEnv::new();
        let notified = fake_notifier(&env);
        let printed = if script.is_empty() {
            "true".to_owned()
        } else {
            print_fixture(&env, script)
        };
        let agent = scripted_agent(&env, &[(&printed, 1)]);
        let mut args = vec![
            "loop",
            "--agent",
            "claude",
            "--agent-bin",
            &agent,
            "--retry-delay",
            "1s",
        ];
        args.extend(flags);
        args.extend(["ralph", "Do it"]);
        let out = env.cmd(&args).failure();
        assert!(
            out.stderr.starts_with(&format!("pagent: error: {class}")),
            "{what}: {out}"
        );
        the_state_is_saved(&env, what);
        if what == "outage" {
            assert!(
                out.stderr.contains("the service still failed after ")
                    && out.stderr.contains("(loop.outage_wait: 3s)"),
                "{out}"
            );
            assert!(runs(&env) >= 2, "{out}");
        } else {
            assert_eq!(runs(&env), 3, "{out}");
        }
        status_and_notification_say_it(&env, what, class, &notified);
    }
}

/// A notifier that appends its status and message to the file returned.
fn fake_notifier(env: &TestEnv) -> PathBuf {
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
    notified
}

/// The loop stopped with its state saved, the failure's class in the log and the state.
fn the_state_is_saved(env: &TestEnv, what: &str) {
    let actions = env.actions();
    assert_eq!(actions.last().map(String::as_str), Some("failed"), "{what}");
    let events = env.events();
    let last = events.last().unwrap();
    assert_eq!(last["failure"], what, "{what}: {last}");
    let state = env.state();
    assert_eq!(state["status"], "active", "{what}: saved, not ended");
    assert_eq!(state["last_failure"]["class"], what, "{what}");
    assert!(state["last_failure"].get("retry_at").is_none(), "{what}");
}

/// `pagent status` and the notification name the failure's class.
fn status_and_notification_say_it(env: &TestEnv, what: &str, class: &str, notified: &Path) {
    let status = env.cmd(&["status"]).success();
    assert!(
        status
            .stdout
            .lines()
            .any(|l| l.starts_with("last failed run: ") && l.contains(class)),
        "{what}: {status}"
    );
    let text = wait_until(Duration::from_secs(20), "the notification", || {
        std::fs::read_to_string(notified)
            .ok()
            .filter(|t| t.ends_with('\n'))
    });
    assert!(
        text.starts_with(&format!("failed|ralph stopped in project: {class}")),
        "{what}: {text}"
    );
}

/// Codex and OpenCode, where they report limits and outages: a quota is a stop, a 503 an
/// outage retried.
#[test]
fn issue_30_codex_and_opencode_stops_and_outages_are_classified() {
    let codex_done = r#"echo '{"type":"thread.started","thread_id":"t1"}'
printf '%s\n' '{"type":"item.completed","item":{"id":"item_1","type":"agent_message","text":"Done.\n<promise>DONE</promise>"}}'
echo '{"type":"turn.completed","usage":{"input_tokens":10,"cached_input_tokens":0,"output_tokens":5}}'"#;
    let opencode_done = r#"printf '%s\n' '{"type":"text","sessionID":"ses_1","part":{"id":"p1","type":"text","text":"Done.\n<promise>DONE</promise>"}}'
echo '{"type":"step_finish","sessionID":"ses_1","part":{"type":"step-finish","reason":"stop","cost":0,"tokens":{"input":10,"output":5}}}'"#;
    for (agent_kind, fixture_name, done, class) in [
        (
            "codex",
            "codex-0.169.0-insufficient-quota.jsonl",
            codex_done,
            "stop",
        ),
        (
            "codex",
            "codex-0.169.0-overloaded-503.jsonl",
            codex_done,
            "outage",
        ),
        (
            "opencode",
            "opencode-1.18.33-insufficient-quota.jsonl",
            opencode_done,
            "stop",
        ),
        (
            "opencode",
            "opencode-1.18.33-503.jsonl",
            opencode_done,
            "outage",
        ),
    ] {
        let env = TestEnv::new();
        let agent = scripted_agent(&env, &[(&print_fixture(&env, fixture_name), 1), (done, 0)]);
        let out = env
            .cmd(&[
                "loop",
                "--agent",
                agent_kind,
                "--agent-bin",
                &agent,
                "--retry-delay",
                "1s",
                "ralph",
                "Do it",
            ])
            .run();
        let events = env.events();
        let failed = events
            .iter()
            .find(|e| e.get("failure").is_some())
            .unwrap_or_else(|| panic!("{fixture_name}: {out}"));
        assert_eq!(failed["failure"], class, "{fixture_name}: {failed}");
        if class == "stop" {
            assert_eq!(out.code, Some(3), "{fixture_name}: {out}");
            assert_eq!(runs(&env), 1, "{fixture_name}");
            assert!(
                env.state()["end_reason"]
                    .as_str()
                    .unwrap()
                    .starts_with("credit or spend stop: "),
                "{fixture_name}"
            );
        } else {
            assert_eq!(out.code, Some(0), "{fixture_name}: {out}");
            assert_eq!(
                env.actions(),
                ["ralph", "retry", "complete"],
                "{fixture_name}"
            );
            assert!(
                out.stdout.contains("\n! service outage: "),
                "{fixture_name}: {out}"
            );
        }
    }
}

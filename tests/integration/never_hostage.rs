//! The user always wins: no lock is held across a check or an agent run, so `cancel` and
//! `status` answer at once whatever a hook or a runner is doing; a cancelled loop's hook
//! allows the stop; `--force` over a running `pagent loop` leaves one runner; and an
//! older copy of a sealed state never brings a finished loop back.

use std::fs;
use std::path::Path;
use std::process::{Child, Stdio};
use std::time::{Duration, Instant};

use serde_json::json;

use crate::util::{SESSION, Said, TestEnv, assert_text, wait_for};

/// Waits (polling, with a deadline) until `path` exists: the moment a child reached a
/// known point, without sleeping a guessed amount.
fn wait_for_file(path: &Path) {
    wait_for(Duration::from_secs(20), path.display(), || path.exists());
}

/// `pagent ARGS` as a process running beside the test's other commands.
fn spawn(env: &TestEnv, args: &[&str], stdin: Option<String>) -> Child {
    let mut command = env.bin(args).env("CLAUDE_PROJECT_DIR", &env.root).command();
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = command.spawn().unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let stdin = stdin.unwrap_or_default();
    std::thread::spawn(move || {
        let _ = std::io::Write::write_all(&mut pipe, stdin.as_bytes());
    });
    child
}

#[test]
fn cancel_during_a_long_check_returns_at_once_and_the_hook_allows_the_stop() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    env.write(
        ".claude/pagent/workflows/slow.json",
        &json!({"stages": [{"name": "x", "prompt": "p",
            "exit_when": {"custom": "touch started; sleep 20", "timeout": 60}}]})
        .to_string(),
    );
    env.cmd(&["run", "prd.md", "--workflow", "slow", "--trust"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let baseline = env.baseline();
    let hook = spawn(
        &env,
        &["hook", "stop"],
        Some(env.stop_input("working").to_string()),
    );
    wait_for_file(&env.path("started"));
    let started = Instant::now();
    let status = env.cmd(&["status"]).success();
    assert!(status.stdout.contains("x"), "{status}");
    let cancel = env.cmd(&["cancel"]).success();
    // Two commands (a wait for the hook's lock would be the check's 20 s).
    baseline.assert_within(
        started.elapsed(),
        20,
        Duration::from_secs(1),
        "status and cancel",
    );
    assert!(cancel.stdout.contains("cancelled"), "{cancel}");
    let out = hook.wait_with_output().unwrap();
    // The hook sees the cancel and stops its check (finishing the check takes 20 s).
    baseline.assert_within(
        started.elapsed(),
        40,
        Duration::from_secs(5),
        "the hook after the cancel",
    );
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "the stop is allowed: {out:?}");
    assert_eq!(env.state()["status"], "cancelled");
}

#[test]
fn force_over_a_running_loop_leaves_one_runner() {
    let env = TestEnv::new();
    env.write(
        "slow.sh",
        "cat > /dev/null\ntouch first-running\nsleep 30\n",
    );
    let first = spawn(
        &env,
        &["loop", "--command", "sh slow.sh", "ralph", "First task"],
        None,
    );
    wait_for_file(&env.path("first-running"));
    // A second runner on the same loop is refused while the first runs.
    let resume = env.cmd(&["loop", "--command", "true"]).failure();
    let mut said = Said::new();
    said.say("a second pagent loop", &resume.stderr);
    let baseline = env.baseline();
    let started = Instant::now();
    let second = env
        .cmd(&[
            "loop",
            "--command",
            "cat > /dev/null; echo '<promise>DONE</promise>'",
            "ralph",
            "--force",
            "Second task",
        ])
        .success();
    assert!(second.stdout.contains("complete"), "{second}");
    let first = first.wait_with_output().unwrap();
    // A second run and the first runner's exit (left alone, its agent sleeps 30 s).
    baseline.assert_within(
        started.elapsed(),
        100,
        Duration::from_secs(10),
        "the replaced runner",
    );
    assert_eq!(first.status.code(), Some(130), "{first:?}");
    said.say(
        "the first runner, replaced",
        &String::from_utf8_lossy(&first.stdout),
    );
    assert_text!(said.text());
    assert_eq!(env.state()["stages"][0]["prompt"], "Second task");
    assert_eq!(env.state()["status"], "complete");
}

#[test]
fn a_rolled_back_sealed_state_does_not_reactivate() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.stop(&env.stop_input("working")).blocked();
    let copy = env.read(".claude/pagent-pipeline.json");
    env.cmd(&["cancel"]).success();
    // A backup, a stash or a `git checkout` brings the active copy back.
    fs::write(env.path(".claude/pagent-pipeline.json"), copy).unwrap();
    let stop = env.stop(&env.stop_input("working"));
    let mut said = Said::new();
    said.say("a stop", &stop.allowed().unwrap());
    let status: serde_json::Value = env.status();
    assert_eq!(status["sealed"], false);
    // It never runs under `pagent loop` either.
    let out = env.cmd(&["loop", "--command", "true"]).failure();
    said.say("pagent loop", &out.stderr);
    assert_text!(said.text());
}

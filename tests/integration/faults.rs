//! Faults: a broken world (disk full, an unwritable folder, a deleted state, a truncated
//! transcript, a corrupt repository, a lock holder that dies). Each must fail open with a
//! clear message, never exit 2, never block. Killed writers and crowds of hooks are in
//! `crashes.rs`.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::*;
use pagent_door::testing;

/// The Stop hook as a process of its own, to kill, limit or run many of at once.
pub(crate) fn hook(env: &TestEnv) -> Command {
    let mut command = env
        .bin(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .command();
    command
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    command
}

pub(crate) fn iterations(env: &TestEnv) -> u64 {
    env.state()["iterations"][0].as_u64().unwrap()
}

pub(crate) fn sealed(env: &TestEnv) -> bool {
    let status: Value = env.status();
    status["sealed"] == true
}

#[test]
fn a_lock_holder_that_dies_releases_the_lock() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "--no-progress-limit", "0", "Fix it"])
        .success();
    // How long one unobstructed hook takes here, so a loaded machine waits longer.
    let timed = Instant::now();
    env.stop(&env.stop_input("hi")).blocked();
    let unobstructed = timed.elapsed();
    assert_eq!(iterations(&env), 2);
    // Another process takes the lock and hangs; it is killed; the hook goes on.
    let mut holder = Command::new("python3")
        .args(["-c", "import fcntl, sys, time\nf = open(sys.argv[1], 'w')\nfcntl.flock(f, fcntl.LOCK_EX)\nprint('locked', flush=True)\ntime.sleep(60)\n"])
        .arg(env.path(".claude/pagent/lock"))
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    std::io::BufRead::read_line(
        &mut std::io::BufReader::new(holder.stdout.take().unwrap()),
        &mut line,
    )
    .unwrap();
    assert_eq!(line.trim(), "locked");
    let mut waiting = hook(&env).spawn().unwrap();
    waiting
        .stdin
        .take()
        .unwrap()
        .write_all(env.stop_input("hi").to_string().as_bytes())
        .unwrap();
    // The waiter waits: while the lock is held (three times what a whole hook takes, and
    // well under the hook's own lock timeout) it neither finishes nor writes the state.
    let held = Instant::now();
    let hold = Baseline::of(unobstructed)
        .limit(3, Duration::from_millis(300))
        .min(Duration::from_secs(2));
    while held.elapsed() < hold {
        assert!(
            waiting.try_wait().unwrap().is_none(),
            "the hook finished while another process held the state lock"
        );
        assert_eq!(
            iterations(&env),
            2,
            "the state was written under a held lock"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    holder.kill().unwrap();
    holder.wait().unwrap();
    let out = waiting.wait_with_output().unwrap();
    assert_eq!(out.status.code(), Some(0));
    let decision: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert!(
        decision["hookSpecificOutput"]["additionalContext"].is_string(),
        "{decision}"
    );
    assert_eq!(
        iterations(&env),
        3,
        "the waiter wrote once the lock was free"
    );
}

#[test]
fn a_full_disk_fails_open_and_keeps_the_old_state() {
    let env = TestEnv::new();
    env.cmd(&[
        "ralph",
        "--no-progress-limit",
        "0",
        &"A long task. ".repeat(200),
    ])
    .success();
    let before = env.read(".claude/pagent-pipeline.json");
    let mut command = hook(&env);
    // Files may grow to 1 KiB: the new state cannot be written (EFBIG, as ENOSPC would).
    testing::limit_file_size(&mut command, 1024);
    let mut child = command.spawn().unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(env.stop_input("hi").to_string().as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        out.stdout.is_empty(),
        "it blocked: {}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert!(
        stderr.contains("the Stop hook failed, so Claude may stop")
            && stderr.contains("cannot write"),
        "{stderr}"
    );
    assert_eq!(env.read(".claude/pagent-pipeline.json"), before);
    let leftovers: Vec<_> = std::fs::read_dir(env.path(".claude"))
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .filter(|n| n.to_string_lossy().ends_with(".tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn an_unwritable_pagent_folder_fails_open() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    let is_root = testing::is_root();
    if is_root {
        // Root ignores permissions; a file where the folder should be fails the same way.
        std::fs::remove_dir_all(env.path(".claude/pagent")).unwrap();
        env.write(".claude/pagent", "not a folder");
    } else {
        use std::os::unix::fs::PermissionsExt;
        std::fs::remove_dir_all(env.path(".claude/pagent")).unwrap();
        std::fs::set_permissions(env.path(".claude"), std::fs::Permissions::from_mode(0o555))
            .unwrap();
    }
    let out = env.stop(&env.stop_input("hi"));
    assert_eq!(out.code, Some(1), "{out}");
    assert_eq!(out.stdout, "");
    assert!(
        out.stderr
            .contains("the Stop hook failed, so Claude may stop"),
        "{out}"
    );
    assert!(out.stderr.contains(".claude/pagent"), "{out}");
}

#[test]
fn a_state_deleted_mid_loop_lets_the_session_stop() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    env.stop(&env.stop_input("one")).blocked();
    std::fs::remove_file(env.path(".claude/pagent-pipeline.json")).unwrap();
    let out = env.stop(&env.stop_input("two"));
    assert_eq!(
        (out.code, out.stdout.as_str(), out.stderr.as_str()),
        (Some(0), "", ""),
        "{out}"
    );
}

#[test]
fn a_transcript_truncated_mid_line_is_read_up_to_the_last_whole_line() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    let transcript = env.home.join("t.jsonl");
    let whole = transcript_line_text("m1", "Done.\n<promise>DONE</promise>");
    let cut = &transcript_line_text("m2", "Another message")[..30];
    std::fs::write(&transcript, format!("{whole}\n{cut}")).unwrap();
    let input = json!({"session_id": SESSION, "transcript_path": transcript, "cwd": env.root});
    assert!(env.stop(&input).allowed().unwrap().contains("complete"));
}

#[test]
fn a_corrupt_or_missing_repository_does_not_stop_the_loop() {
    for corrupt in ["index", "HEAD", "objects"] {
        let env = TestEnv::new();
        crate::git::git(&env.root, &["commit", "-q", "--allow-empty", "-m", "init"]);
        env.cmd(&["ralph", "--no-progress-limit", "2", "Fix it"])
            .success();
        let target = env.path(&format!(".git/{corrupt}"));
        if target.is_dir() {
            std::fs::remove_dir_all(&target).unwrap();
        }
        std::fs::write(&target, "garbage\0garbage").unwrap();
        let out = env.stop(&env.stop_input("hi"));
        assert!(out.blocked().contains("iteration 2"), "{corrupt}: {out}");
        // No progress is still detected (by the file walk when git cannot answer).
        env.stop(&env.stop_input("hi")).blocked();
        let message = env.stop(&env.stop_input("hi")).allowed();
        assert!(
            message.is_some_and(|m| m.contains("turns in a row changed no file")),
            "{corrupt}: {}",
            env.dump()
        );
    }
}

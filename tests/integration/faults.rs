//! Faults: writers killed at random moments, many hooks at once, and a broken world
//! (disk full, an unwritable folder, a deleted state, a truncated transcript, a corrupt
//! repository). Each must fail open with a clear message, never exit 2, never block.
//!
//! The crash and concurrency tests run a quick variant by default; `PAGENT_STRESS=1`
//! runs the long one (thousands of kills, many rounds).

use std::io::Write;
use std::os::unix::process::CommandExt;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::*;

fn stress() -> bool {
    std::env::var_os("PAGENT_STRESS").is_some_and(|v| v != "0")
}

/// The Stop hook as a process of its own, to kill, limit or run many of at once.
fn hook(env: &TestEnv) -> Command {
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

fn iterations(env: &TestEnv) -> u64 {
    env.state()["iterations"][0].as_u64().unwrap()
}

fn sealed(env: &TestEnv) -> bool {
    let status: Value =
        serde_json::from_str(&env.cmd(&["status", "--json"]).success().stdout).unwrap();
    status["sealed"] == true
}

/// A small deterministic generator, so a failure can be replayed.
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
}

#[test]
fn writers_killed_at_random_moments_leave_the_old_or_the_new_state() {
    // Three projects killed in parallel, each with its own replayable sequence: the same
    // number of kills as one project, in a third of the time (most of a round is waiting).
    const PROJECTS: u64 = 3;
    let rounds = if stress() { 1000 } else { 50 };
    let tallies: Vec<(u32, u32)> = std::thread::scope(|scope| {
        let workers: Vec<_> = (0..PROJECTS)
            .map(|p| scope.spawn(move || kill_writers_at_random(0x5eed + p, rounds)))
            .collect();
        workers.into_iter().map(|w| w.join().unwrap()).collect()
    });
    let (killed, completed) = tallies
        .iter()
        .fold((0, 0), |(k, c), (k2, c2)| (k + k2, c + c2));
    eprintln!("crash test: {killed} writers killed mid-run, {completed} completed");
    assert!(
        killed > 0 && completed > 0,
        "the kills never landed mid-run ({killed} killed, {completed} completed)"
    );
}

/// `rounds` Stop hooks of one project, each killed at a random moment of its run (the
/// generator seeded with `seed`); after each the state is the old or the new one, whole
/// and sealed. Returns how many were killed and how many completed.
fn kill_writers_at_random(seed: u64, rounds: u32) -> (u32, u32) {
    let env = TestEnv::new();
    // A large prompt makes each write long enough to be caught half way.
    let prompt = "Fix everything. ".repeat(4_000);
    env.cmd(&[
        "ralph",
        "--max-iterations",
        "1000",
        "--no-progress-limit",
        "0",
    ])
    .stdin(prompt)
    .success();
    let input = env.stop_input("working").to_string();
    let mut rng = Lcg(seed);
    // Kill within 1.5 times what one whole hook takes on this machine (measured now, so a
    // loaded or slow machine still sees both kills mid-write and completed writers).
    let timed = Instant::now();
    let mut whole = hook(&env).spawn().unwrap();
    let _ = whole.stdin.take().unwrap().write_all(input.as_bytes());
    assert!(whole.wait().unwrap().success());
    let window = u64::try_from(timed.elapsed().as_micros() * 3 / 2)
        .unwrap()
        .max(1);
    let mut before = iterations(&env);
    let (mut killed, mut completed) = (0, 0);
    for round in 0..rounds {
        let mut child = hook(&env).spawn().unwrap();
        let _ = child.stdin.take().unwrap().write_all(input.as_bytes());
        std::thread::sleep(Duration::from_micros(rng.next() % window));
        let _ = child.kill();
        let status = child.wait().unwrap();
        if status.code().is_some() {
            completed += 1;
            assert_ne!(status.code(), Some(2));
        } else {
            killed += 1;
        }
        let text = env.read(".claude/pagent-pipeline.json");
        let state: Value = serde_json::from_str(&text).unwrap_or_else(|e| {
            panic!("seed {seed:#x}, round {round}: the state does not parse ({e})")
        });
        let now = state["iterations"][0].as_u64().unwrap();
        assert!(
            now == before || now == before + 1,
            "seed {seed:#x}, round {round}: iterations went from {before} to {now}"
        );
        if now == 1000 {
            break;
        }
        before = now;
        if round % 25 == 0 {
            assert!(
                sealed(&env),
                "seed {seed:#x}, round {round}: the seal no longer verifies"
            );
        }
    }
    assert!(sealed(&env));
    // No lock is left held: an untouched hook finishes promptly and decides (a block,
    // or the give-up notice once the stress run used all 1000 iterations).
    let started = Instant::now();
    let out = env.stop(&env.stop_input("still working"));
    assert_eq!(out.code, Some(0), "{out}");
    assert!(out.decision().is_some(), "{out}");
    assert!(started.elapsed() < Duration::from_secs(5));
    (killed, completed)
}

#[test]
fn sixty_four_hooks_at_once_lose_nothing_and_count_nothing_twice() {
    const HOOKS: u64 = 64;
    let rounds = if stress() { 15 } else { 3 };
    let env = TestEnv::new();
    env.cmd(&[
        "ralph",
        "--max-iterations",
        "1000",
        "--no-progress-limit",
        "0",
        "Fix it",
    ])
    .success();
    let input = env.stop_input("working").to_string();
    for round in 0..rounds {
        let before = iterations(&env);
        let mut children: Vec<_> = (0..HOOKS).map(|_| hook(&env).spawn().unwrap()).collect();
        for child in &mut children {
            child
                .stdin
                .take()
                .unwrap()
                .write_all(input.as_bytes())
                .unwrap();
        }
        // Each hook either blocks with the iteration it wrote, or finds the state
        // changed under it and allows (its decision would count the same stop twice).
        let mut seen: Vec<u64> = children
            .into_iter()
            .filter_map(|child| {
                let out = child.wait_with_output().unwrap();
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "{}",
                    String::from_utf8_lossy(&out.stderr)
                );
                if out.stdout.is_empty() {
                    return None;
                }
                let decision: Value = serde_json::from_slice(&out.stdout).unwrap();
                let reason = decision["reason"].as_str().unwrap();
                Some(
                    reason
                        .split("iteration ")
                        .nth(1)
                        .unwrap()
                        .split(' ')
                        .next()
                        .unwrap()
                        .parse()
                        .unwrap(),
                )
            })
            .collect();
        seen.sort_unstable();
        let blocked = seen.len() as u64;
        assert!(blocked >= 1, "round {round}: no hook got through");
        // No lost update and no double count: the blocks are exactly the iterations added.
        assert_eq!(
            seen,
            ((before + 1)..=(before + blocked)).collect::<Vec<_>>(),
            "round {round}"
        );
        assert_eq!(iterations(&env), before + blocked, "round {round}");
    }
    // One block event per block written, every line whole.
    let log = env.read(".claude/pagent/events.jsonl");
    let events: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect();
    assert_eq!(
        events.iter().filter(|e| e["action"] == "block").count() as u64,
        iterations(&env) - 1
    );
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
    let hold = (unobstructed * 3).clamp(Duration::from_millis(300), Duration::from_secs(2));
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
    assert_eq!(decision["decision"], "block");
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
    unsafe {
        command.pre_exec(|| {
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            let limit = libc::rlimit {
                rlim_cur: 1024,
                rlim_max: 1024,
            };
            if libc::setrlimit(libc::RLIMIT_FSIZE, &limit) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            Ok(())
        });
    }
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
    let is_root = unsafe { libc::geteuid() } == 0;
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

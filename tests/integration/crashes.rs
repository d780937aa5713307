//! Crashes and crowds: Stop hooks killed at random moments of their write, and many
//! hooks at once. The state is always the old one or the new one, whole and sealed; no
//! update is lost and no stop is counted twice.
//!
//! Both run a quick variant by default; `PAGENT_STRESS=1` runs the long one (thousands
//! of kills, many rounds).

use std::io::Write;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::faults::{hook, iterations, sealed};
use crate::util::*;

fn stress() -> bool {
    std::env::var_os("PAGENT_STRESS").is_some_and(|v| v != "0")
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
    // loaded or slow machine still sees both kills mid-write and completed writers), on
    // a hook like the ones killed: the first after the set-up also makes the `.prev` the
    // later ones write into, and took so much longer on a loaded CI machine that no kill
    // landed in time.
    let whole = || {
        let mut whole = hook(&env).spawn().unwrap();
        let _ = whole.stdin.take().unwrap().write_all(input.as_bytes());
        assert!(whole.wait().unwrap().success());
    };
    whole();
    let timed = Instant::now();
    whole();
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
    // or the give-up notice once the stress run used all 1000 iterations). A lock left
    // held would cost the hook's whole lock wait (5 s), then an error.
    let baseline = env.baseline();
    let started = Instant::now();
    let out = env.stop(&env.stop_input("still working"));
    out.answered();
    assert!(out.decision().is_some(), "{out}");
    baseline.assert_within(
        started.elapsed(),
        20,
        Duration::from_secs(2),
        "an untouched hook after the kills",
    );
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
            // A hook that ended before reading its input says why below, in its exit
            // status and stderr: a broken pipe here would hide that.
            let written = child.stdin.take().unwrap().write_all(input.as_bytes());
            if let Err(err) = written {
                assert_eq!(err.kind(), std::io::ErrorKind::BrokenPipe, "{err}");
            }
        }
        // Each hook either blocks with the iteration it wrote, or finds the state
        // changed under it and allows (its decision would count the same stop twice).
        let mut seen: Vec<u64> = children
            .into_iter()
            .filter_map(|child| {
                let out = child.wait_with_output().unwrap();
                if wine_did_not_start(&out) {
                    eprintln!("round {round}: Wine did not start one hook (exit 1, no output)");
                    return None;
                }
                assert_eq!(
                    out.status.code(),
                    Some(0),
                    "stdout: {}\nstderr: {}",
                    String::from_utf8_lossy(&out.stdout),
                    String::from_utf8_lossy(&out.stderr)
                );
                if out.stdout.is_empty() {
                    return None;
                }
                let decision: Value = serde_json::from_slice(&out.stdout).unwrap();
                let reason = decision["hookSpecificOutput"]["additionalContext"]
                    .as_str()
                    .unwrap();
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

//! What another machine can put on the remote, made hostile: a plan, a claim, a worker's
//! record that is huge, deep, or names a path outside. Each is refused or ignored with a
//! sentence, within bounded memory, and nothing is written outside the clones.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::Duration;

use super::*;

const LIMIT: Duration = Duration::from_secs(120);
/// The most memory a status of a hostile remote may take (git's own processes aside).
const MEMORY_KB: i64 = 64 * 1024;

/// `git ARGS` in the remote with `stdin`; its trimmed stdout.
fn plumb(world: &World, args: &[&str], stdin: &[u8]) -> String {
    let mut child = Command::new("git")
        .args(args)
        .current_dir(&world.remote.bare)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut pipe = child.stdin.take().unwrap();
    let bytes = stdin.to_vec();
    let writer = std::thread::spawn(move || pipe.write_all(&bytes));
    let out = child.wait_with_output().unwrap();
    writer.join().unwrap().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

/// Plants `refname` on the remote: a commit whose tree holds `file` with `content`, as
/// another machine (or an attacker with push rights) could push it.
fn plant(world: &World, refname: &str, file: &str, content: &[u8]) {
    let blob = plumb(world, &["hash-object", "-w", "--stdin"], content);
    let tree = plumb(
        world,
        &["mktree"],
        format!("100644 blob {blob}\t{file}\n").as_bytes(),
    );
    let commit = plumb(world, &["commit-tree", &tree, "-m", "planted"], b"");
    plumb(world, &["update-ref", refname, &commit], b"");
}

/// A plan as `team start` writes it, with `stories` as given.
fn plan_json(team: &str, stories: Value) -> Vec<u8> {
    serde_json::to_vec(&json!({
        "version": 1, "team": team, "branch": "main", "created_at": "2026-11-27T01:00:00Z",
        "created_by": "elsewhere", "lease_secs": 3, "stories": stories,
        "agent": {"kind": "claude", "permission_mode": "acceptEdits", "iteration_timeout_secs": 60,
                  "idle_timeout_secs": 60, "retries": 0, "retry_delay_secs": 1,
                  "limit_wait_secs": 60, "limit_margin_secs": 1},
        "max_iterations": 5
    }))
    .unwrap()
}

fn state_json() -> Vec<u8> {
    br#"{"version": 1, "control": "running"}"#.to_vec()
}

/// Issue 32: plans planted on the remote: one of 64 MiB, one nested 100,000 deep, one
/// whose story is named `../../escape`. `pagent team status` and a worker refuse each
/// with what is wrong, in bounded memory, and no file appears outside the clones.
#[test]
fn issue_32_a_hostile_plan_on_the_remote_is_refused_bounded_and_writes_nothing_outside() {
    let world = World::new(&[("README.md", "x\n")], false);
    let huge = vec![b' '; 64 << 20];
    // Deep where pagent reads no field: an unknown one, which serde_json skips without
    // recursing (a deep value in a field it reads stops at its recursion limit, 128).
    let deep = format!(
        "{{\"ignored\": {}{}}}",
        "[".repeat(100_000),
        "]".repeat(100_000)
    );
    let escape = plan_json("escape", json!([{"name": "../../escape", "task": "x"}]));
    for (team, plan) in [
        ("huge", huge),
        ("deep", deep.into_bytes()),
        ("escape", escape),
    ] {
        plant(
            &world,
            &format!("refs/pagent/teams/{team}/plan"),
            "plan.json",
            &plan,
        );
        plant(
            &world,
            &format!("refs/pagent/teams/{team}/state"),
            "state.json",
            &state_json(),
        );
    }
    let (clone, home) = world.clone_for("w1");
    for (team, says) in [
        ("huge", "more than the 8192 KiB pagent reads"),
        ("deep", "is not valid JSON of its kind"),
        ("escape", "is not a name pagent uses"),
    ] {
        let bounded = world
            .pagent(&clone, &home, &["team", "status", "--team", team])
            .run_bounded(Duration::from_secs(60));
        let run = &bounded.run;
        assert_eq!(run.code, Some(1), "{run}");
        assert!(
            run.stderr.contains("plan on the remote cannot be used") && run.stderr.contains(says),
            "{run}"
        );
        assert!(
            bounded.max_rss_kb < memory_limit_kb(MEMORY_KB),
            "{} KiB\n{run}",
            bounded.max_rss_kb
        );
        let work = world
            .pagent(
                &clone,
                &home,
                &["team", "work", "--team", team, "--command", &world.agent],
            )
            .run();
        assert_eq!(work.code, Some(1), "{work}");
        assert!(work.stderr.contains(says), "{work}");
    }
    for dir in [
        &world.base,
        &world.base.parent().unwrap().to_path_buf(),
        &clone,
    ] {
        assert!(
            !dir.join("escape").exists(),
            "a file outside: {}",
            dir.display()
        );
    }
    assert!(
        !clone.join(".pagent/worktrees").exists(),
        "a worktree for a refused plan"
    );
}

/// Issue 32: claims and a worker's record planted on the remote: a claim of 2 MiB, one
/// nested 100,000 deep, one for a story the plan does not have, a record that is not
/// JSON. Status says each claim cannot be read (and counts the stray), nobody believes
/// them, and a worker takes both stories over once their claims have not changed for a
/// lease, as it would a dead worker's, and lands them.
#[test]
fn issue_32_a_hostile_claim_on_the_remote_is_never_believed_and_is_taken_over() {
    let world = World::new(&[("prd.json", &prd(2, |_| vec![]))], false);
    let start = world.start(&["prd.json", "--name", "planted", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    let prefix = "refs/pagent/teams/planted";
    plant(
        &world,
        &format!("{prefix}/claims/US-001"),
        "claim.json",
        &vec![b' '; 2 << 20],
    );
    let deep = format!("{}{}", "{\"a\":".repeat(100_000), "}".repeat(100_000));
    plant(
        &world,
        &format!("{prefix}/claims/US-002"),
        "claim.json",
        deep.as_bytes(),
    );
    plant(
        &world,
        &format!("{prefix}/claims/US-404"),
        "claim.json",
        b"{}",
    );
    plant(
        &world,
        &format!("{prefix}/workers/mallory"),
        "worker.json",
        b"not json",
    );
    let status = world.status();
    for story in ["US-001", "US-002"] {
        assert_eq!(row(&status, story)["state"], "unknown", "{status:#}");
        let reason = row(&status, story)["reason"].as_str().unwrap();
        assert!(reason.starts_with("its claim cannot be read"), "{reason}");
    }
    assert_eq!(status["ignored_refs"], 1, "{status:#}");
    let text = world.team(&["status"]);
    assert!(
        text.stdout.contains("mallory: its record cannot be read"),
        "{text}"
    );
    let mut worker = world.worker("w1", &["-j", "2"]);
    assert_eq!(worker.wait(LIMIT), Some(0), "{}", worker.output());
    assert!(
        worker
            .output()
            .contains("taken over from an unreadable claim"),
        "{}",
        worker.output()
    );
    assert_eq!(world.landings().len(), 2);
}

/// A claim as a worker on another machine writes it, its wall-clock times `at` (seconds
/// since the epoch by that machine's clock), renewal `seq`.
fn skewed_claim(story: &str, at: u64, seq: u64) -> Vec<u8> {
    let rfc3339 = |secs: u64| {
        let out = Command::new("date")
            .args(["-u", &format!("-d@{secs}"), "+%Y-%m-%dT%H:%M:%SZ"])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_owned()
    };
    serde_json::to_vec(&json!({
        "version": 1, "story": story, "worker": "skewed", "host": "far-away",
        "holding": format!("skew{story}"), "seq": seq, "since": rfc3339(at - seq),
        "renewed_at": rfc3339(at),
        "lease_secs": 3, "phase": "working", "iterations": 0
    }))
    .unwrap()
}

/// Issue 32: two machines whose clocks are a year off ours (one behind, one ahead) hold
/// one story each and keep renewing. A worker here never takes either over while they
/// renew (though by its own clock one claim is a year stale and the other not yet
/// made), and takes both over a lease after the renewals stop: clock skew never lets
/// two workers hold one story, and never keeps a dead one's story from the team.
#[test]
fn issue_32_clock_skew_between_machines_never_lets_two_workers_hold_one_story() {
    let world = World::new(&[("prd.json", &prd(2, |_| vec![]))], false);
    let start = world.start(&["prd.json", "--name", "skew", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    let year = 365 * 24 * 3600;
    let now = || {
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_secs()
    };
    let renew = |seq: u64| {
        for (story, at) in [("US-001", now() - year), ("US-002", now() + year)] {
            let refname = format!("refs/pagent/teams/skew/claims/{story}");
            plant(
                &world,
                &refname,
                "claim.json",
                &skewed_claim(story, at, seq),
            );
        }
    };
    renew(1);
    let mut worker = world.worker("w1", &["-j", "2"]);
    // Three leases of renewals every 0.8 s, as a live holder renews every lease / 3.
    let renewing = std::time::Instant::now();
    let mut seq = 1;
    while renewing.elapsed() < Duration::from_secs(9) {
        std::thread::sleep(Duration::from_millis(800));
        seq += 1;
        renew(seq);
        assert!(
            world.landings().is_empty(),
            "a story landed while its skewed holder renewed:\n{}",
            worker.output()
        );
    }
    let output = worker.output();
    assert!(!output.contains("taken over"), "{output}");
    let status = world.status();
    for story in ["US-001", "US-002"] {
        assert_eq!(row(&status, story)["state"], "working", "{status:#}");
    }
    // The holders are gone now: the worker takes both over and lands them.
    assert_eq!(worker.wait(LIMIT), Some(0), "{}", worker.output());
    assert_eq!(world.landings().len(), 2, "{}", worker.output());
    assert_eq!(worker.output().matches("taken over from skewed").count(), 2);
}

/// Issue 32: another machine's claim whose work in progress is a history of its own (it
/// shares nothing with the shared branch) and holds a file the plan never asked for. A
/// worker taking the story over never builds on it: the story lands once, the shared
/// branch keeps its whole history (nothing rewritten, nothing of the stranger's merged
/// in), in bounded time.
#[test]
fn issue_32_a_claims_work_from_an_unrelated_history_is_never_merged_into_the_shared_branch() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let start = world.start(&["prd.json", "--name", "stranger", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    let seed = world.remote_git(&["rev-parse", "main"]).trim().to_owned();
    let blob = plumb(
        &world,
        &["hash-object", "-w", "--stdin"],
        b"not from this team\n",
    );
    let tree = plumb(
        &world,
        &["mktree"],
        format!("100644 blob {blob}\tstranger.txt\n").as_bytes(),
    );
    let work = plumb(
        &world,
        &["commit-tree", &tree, "-m", "a stranger's root"],
        b"",
    );
    let claim = skewed_claim("US-001", 1_800_000_000, 1);
    let blob = plumb(&world, &["hash-object", "-w", "--stdin"], &claim);
    let tree = plumb(
        &world,
        &["mktree"],
        format!("100644 blob {blob}\tclaim.json\n").as_bytes(),
    );
    let commit = plumb(
        &world,
        &["commit-tree", &tree, "-p", &work, "-m", "claim"],
        b"",
    );
    plumb(
        &world,
        &[
            "update-ref",
            "refs/pagent/teams/stranger/claims/US-001",
            &commit,
        ],
        b"",
    );
    let mut worker = world.worker("w1", &[]);
    assert_eq!(worker.wait(LIMIT), Some(0), "{}", worker.output());
    assert_eq!(world.landings().len(), 1, "{}", worker.output());
    let ancestor = Command::new("git")
        .args(["merge-base", "--is-ancestor", &seed, "main"])
        .current_dir(&world.remote.bare)
        .status()
        .unwrap();
    assert!(ancestor.success(), "main's history was rewritten");
    let files = world.remote_git(&["ls-tree", "-r", "--name-only", "main"]);
    assert!(!files.contains("stranger.txt"), "{files}");
}

//! Eight workers, one plan of 24 stories with dependencies, one shared branch.

use std::collections::BTreeMap;
use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use super::*;

/// Every file under `dir` and its size, `.git` folders left out.
fn files(dir: &Path) -> BTreeMap<String, u64> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in fs::read_dir(&d).unwrap().flatten() {
            let path = entry.path();
            let meta = fs::symlink_metadata(&path).unwrap();
            if meta.is_dir() {
                if path.file_name().is_some_and(|n| n != ".git") {
                    todo.push(path);
                }
            } else {
                out.insert(
                    path.strip_prefix(dir).unwrap().display().to_string(),
                    meta.len(),
                );
            }
        }
    }
    out
}

/// Issue 32: eight workers, each a `pagent team work` process with its own clone and
/// HOME, share a 24-story plan whose stories wait for others; every story lands exactly
/// once on the shared branch, whose history holds every story's work; every landed
/// commit passed the gate on exactly its tree; the plan file marks all 24 done; and
/// nothing is written outside the workers' clones and HOMEs.
#[test]
fn issue_32_eight_workers_land_a_24_story_plan_each_story_exactly_once() {
    // Three waves of eight: each story of the second and third waits for one of the
    // wave before it, and the last for four.
    let depends = |i: usize| match i {
        24 => vec![16, 20, 21, 22, 23],
        i if i > 8 => vec![i - 8],
        _ => vec![],
    };
    let plan = prd(24, depends);
    let world = World::new(
        &[("prd.json", &plan), ("README.md", "a team's project\n")],
        false,
    );
    let start = world.start(&[
        "prd.json",
        "--name",
        "night",
        "--lease",
        "3s",
        "--check",
        &world.gate,
    ]);
    assert_eq!(start.code, Some(0), "{start}");
    let outside_before = fs::read_dir(&world.base).unwrap().count();
    let seed_before = files(&world.seed);
    let started = Instant::now();
    let mut workers: Vec<Worker> = (1..=8)
        .map(|i| world.worker(&format!("w{i}"), &[]))
        .collect();
    for worker in &mut workers {
        let code = worker.wait(Duration::from_secs(240));
        assert_eq!(code, Some(0), "{}", worker.output());
    }
    eprintln!(
        "issue 32: 8 workers landed 24 stories in {:?}",
        started.elapsed()
    );

    let status = world.status();
    let landed = |s: &str| row(&status, s)["state"] == "landed";
    let names: Vec<String> = (1..=24).map(|i| format!("US-{i:03}")).collect();
    assert!(names.iter().all(|n| landed(n)), "{status:#}");
    let landings = each_story_landed_once(&world, &names);
    every_landing_passed_the_gate(&world, &landings);
    the_work_and_the_plan_are_home(&world, &names);
    each_story_landed_over_what_it_waited_for(&world, &status, &depends);
    nothing_was_written_outside(&world, &workers, outside_before, &seed_before);
}

/// One landing commit per story on the shared branch's first parents: its commit and
/// subject.
fn each_story_landed_once(world: &World, names: &[String]) -> Vec<(String, String)> {
    let landings = world.landings();
    assert_eq!(landings.len(), 24, "{landings:#?}");
    for name in names {
        let count = landings
            .iter()
            .filter(|(_, s)| s.starts_with(&format!("pagent: land {name}:")))
            .count();
        assert_eq!(count, 1, "{name} landed {count} times: {landings:#?}");
    }
    landings
}

/// Every landed commit passed the gate, on exactly that commit.
fn every_landing_passed_the_gate(world: &World, landings: &[(String, String)]) {
    let passed: Vec<String> = world
        .ctl_lines("gate-log")
        .iter()
        .filter_map(|l| l.strip_prefix("pass "))
        .map(|l| l.split(' ').nth(1).unwrap().to_owned())
        .collect();
    for (commit, subject) in landings {
        assert!(
            passed.contains(commit),
            "{subject} ({commit}) landed without passing the gate"
        );
    }
}

/// The history holds every story's work, and the plan says all 24 are done.
fn the_work_and_the_plan_are_home(world: &World, names: &[String]) {
    for name in names {
        let work = world.file_on_main(&format!("work/{name}.txt"));
        assert!(work.starts_with("run "), "{name}: {work:?}");
    }
    let plan: Value = serde_json::from_str(&world.file_on_main("prd.json")).unwrap();
    let done = plan["userStories"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|s| s["passes"] == true)
        .count();
    assert_eq!(done, 24, "{plan:#}");
}

/// A story that waits for another started only after it landed: its branch holds it.
fn each_story_landed_over_what_it_waited_for(
    world: &World,
    status: &Value,
    depends: &dyn Fn(usize) -> Vec<usize>,
) {
    for i in 9..=24usize {
        let story = format!("US-{i:03}");
        let waited = depends(i);
        let commit = row(status, &story)["commit"].as_str().unwrap().to_owned();
        for dep in waited {
            let dep_commit = row(status, &format!("US-{dep:03}"))["commit"]
                .as_str()
                .unwrap()
                .to_owned();
            let ok = std::process::Command::new("git")
                .args(["merge-base", "--is-ancestor", &dep_commit, &commit])
                .current_dir(&world.remote.bare)
                .status()
                .unwrap()
                .success();
            assert!(ok, "{story} landed without US-{dep:03}'s work under it");
        }
    }
}

/// Nothing outside the clones and HOMEs: the folder holds what it held plus the workers'
/// clones, HOMEs and logs; the seed's files are as they were.
fn nothing_was_written_outside(
    world: &World,
    workers: &[Worker],
    outside_before: usize,
    seed_before: &BTreeMap<String, u64>,
) {
    assert_eq!(
        fs::read_dir(&world.base).unwrap().count(),
        outside_before + 8 * 3
    );
    assert_eq!(&files(&world.seed), seed_before);
    for worker in workers {
        for entry in fs::read_dir(&worker.home).unwrap().flatten() {
            assert_eq!(
                entry.file_name(),
                ".config",
                "{} in {}",
                entry.path().display(),
                worker.name
            );
        }
    }
}

/// Issue 32: on a lease of a minute (a worker's look is due every 15 s), a worker with a
/// free slot still sees the team move within seconds: here the team's end. w1 holds the
/// only story while w2 waits with nothing to claim; once the story lands, w2 is done
/// within a few seconds, not a whole tick later (a story whose dependency landed, or a
/// released one, is claimed as soon).
#[test]
fn issue_32_an_idle_worker_sees_the_team_move_within_seconds_on_a_long_lease() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let start = world.start(&["prd.json", "--name", "idle", "--lease", "1m"]);
    assert_eq!(start.code, Some(0), "{start}");
    world.control("hold-US-001");
    let mut first = world.worker("w1", &[]);
    wait_for(Duration::from_secs(120), "w1 to hold US-001", || {
        world.ctl_lines("log").iter().any(|l| l == "holding US-001")
    });
    let mut second = world.worker("w2", &[]);
    wait_for(Duration::from_secs(120), "w2 to join", || {
        second.output().contains("\"joined\"")
    });
    world.uncontrol("hold-US-001");
    wait_for(Duration::from_secs(120), "US-001 to land", || {
        world.landings().len() == 1
    });
    let landed = Instant::now();
    assert_eq!(
        first.wait(Duration::from_secs(120)),
        Some(0),
        "{}",
        first.output()
    );
    assert_eq!(
        second.wait(Duration::from_secs(120)),
        Some(0),
        "{}",
        second.output()
    );
    let waited = landed.elapsed();
    assert!(
        waited < Duration::from_secs(8),
        "w2 saw the team's end {waited:?} after the landing:\n{}",
        second.output()
    );
}

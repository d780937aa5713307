//! A team's faults, each its own test: a race for one story, a worker killed mid-story
//! and mid-landing, the remote away for a while, a conflict, a cancel while landings are
//! in flight, a person's commit on the shared branch.

use std::fs;
use std::time::Duration;

use super::*;

const LIMIT: Duration = Duration::from_secs(120);

/// Every claimed or landed event of a worker, as (event, story).
fn stories_of(worker: &Worker, event: &str) -> Vec<String> {
    worker
        .events()
        .iter()
        .filter(|e| e["event"] == event)
        .map(|e| e["story"].as_str().unwrap_or("").to_owned())
        .collect()
}

/// Issue 32: two workers push a claim of the same story at the same moment (the remote
/// holds each claim of US-001 until both are there); the remote's compare-and-swap lets
/// one through, the other is rejected and that worker takes the next story.
#[test]
fn issue_32_two_workers_racing_for_one_story_one_wins_the_other_takes_the_next() {
    let world = World::new(&[("prd.json", &prd(2, |_| vec![]))], false);
    world.hook(RACE_BARRIER);
    let start = world.start(&["prd.json", "--name", "race", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    let mut workers = [world.worker("w1", &[]), world.worker("w2", &[])];
    for worker in &mut workers {
        assert_eq!(worker.wait(LIMIT), Some(0), "{}", worker.output());
    }
    assert_eq!(
        world.ctl_lines("claims-arrived").len(),
        2,
        "both claims met at the remote"
    );
    let claimed: Vec<Vec<String>> = workers.iter().map(|w| stories_of(w, "claimed")).collect();
    let raced: Vec<Vec<String>> = workers.iter().map(|w| stories_of(w, "raced")).collect();
    let (winner, loser) = if claimed[0].contains(&"US-001".to_owned()) {
        (0, 1)
    } else {
        (1, 0)
    };
    assert_eq!(claimed[winner], ["US-001"], "{claimed:?}");
    assert_eq!(
        raced[loser],
        ["US-001"],
        "the loser's claim was rejected: {raced:?}"
    );
    assert_eq!(
        claimed[loser],
        ["US-002"],
        "the loser took the next story: {claimed:?}"
    );
    assert!(raced[winner].is_empty(), "{raced:?}");
    assert_eq!(world.landings().len(), 2);
}

/// Issue 32: a worker killed with SIGKILL (it and its loops: a machine gone) while its
/// story's second iteration runs; another worker takes the story over once the claim has
/// not changed for a lease and its margin, from the work in progress the first one
/// pushed with its renewals (its first iteration's commit), and lands it once.
#[test]
fn issue_32_a_worker_killed_mid_story_its_story_lands_once_from_its_work_in_progress() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let start = world.start(&["prd.json", "--name", "kill", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    world.control("two-runs-US-001");
    world.control("hold-US-001");
    let mut first = world.worker("w1", &[]);
    // Its second iteration holds; its first iteration's commit went up with a renewal.
    wait_for(LIMIT, "the second iteration to run", || {
        world
            .ctl_lines("log")
            .contains(&"holding US-001".to_owned())
    });
    wait_status(&world, LIMIT, "the work in progress to be pushed", |s| {
        row(s, "US-001")["iterations"].as_u64() >= Some(1)
    });
    let first_run =
        fs::read_to_string(first.clone.join(".pagent/worktrees/US-001/work/US-001.txt")).unwrap();
    let first_line = first_run.lines().next().unwrap().to_owned();
    first.kill();
    world.uncontrol("hold-US-001");
    let mut second = world.worker("w2", &[]);
    assert_eq!(second.wait(LIMIT), Some(0), "{}", second.output());
    let status = world.status();
    assert_eq!(row(&status, "US-001")["state"], "landed", "{status:#}");
    assert_eq!(row(&status, "US-001")["worker"], "w2", "{status:#}");
    assert_eq!(world.landings().len(), 1, "it landed once");
    let work = world.file_on_main("work/US-001.txt");
    assert_eq!(
        work.lines().next(),
        Some(first_line.as_str()),
        "from w1's work: {work}"
    );
    assert_eq!(
        work.lines().count(),
        2,
        "w1's first iteration, then w2's: {work}"
    );
    let taken = stories_of(&second, "claimed");
    assert_eq!(taken, ["US-001"]);
    assert!(
        second.output().contains("taken over from w1"),
        "{}",
        second.output()
    );
    let prompts: Vec<String> = fs::read_dir(&world.ctl)
        .unwrap()
        .flatten()
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .starts_with("prompt-US-001-")
        })
        .map(|e| fs::read_to_string(e.path()).unwrap())
        .collect();
    assert!(
        prompts
            .iter()
            .any(|p| p.contains("Another worker began this story")),
        "w2's agent was told it continues: {prompts:#?}"
    );
}

/// Issue 32: a worker killed with SIGKILL while its landing's gate runs; its story lands
/// once, by the worker that takes it over from the pushed work in progress.
#[test]
fn issue_32_a_worker_killed_mid_landing_its_story_lands_once_from_its_work_in_progress() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let start = world.start(&["prd.json", "--name", "land", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    world.control("hold-gate-US-001");
    let mut first = world.worker("w1", &[]);
    wait_for(LIMIT, "the landing's gate to run", || {
        world
            .ctl_lines("gate-log")
            .iter()
            .any(|l| l.starts_with("start US-001"))
    });
    wait_status(&world, LIMIT, "the work in progress to be pushed", |s| {
        row(s, "US-001")["iterations"].as_u64() >= Some(1)
    });
    let before = world.remote_git(&["rev-parse", "main"]);
    first.kill();
    world.uncontrol("hold-gate-US-001");
    assert_eq!(
        world.remote_git(&["rev-parse", "main"]),
        before,
        "nothing landed"
    );
    let mut second = world.worker("w2", &[]);
    assert_eq!(second.wait(LIMIT), Some(0), "{}", second.output());
    let status = world.status();
    assert_eq!(row(&status, "US-001")["worker"], "w2", "{status:#}");
    assert_eq!(world.landings().len(), 1, "it landed once");
    let work = world.file_on_main("work/US-001.txt");
    assert_eq!(work.lines().count(), 2, "w1's iteration, then w2's: {work}");
}

/// Issue 32: the remote goes away (its daemons stopped: connections refused) for longer
/// than a lease while three stories run on two workers; the loops go on and complete,
/// the landings wait, and when the remote is back every story lands once, by the worker
/// that claimed it. The second worker reaches the remote through a daemon of its own,
/// which comes back three seconds before the first worker's: in those seconds it sees
/// the first worker's claims unchanged since before the outage, and takes none over (it
/// saw nothing while away, so its clock for them starts again).
#[test]
fn issue_32_the_remote_unreachable_for_a_while_work_goes_on_landings_wait_nothing_lost() {
    let mut world = World::new(&[("prd.json", &prd(3, |_| vec![]))], false);
    // A longer lease here: after the outage every worker must see the others renew
    // within one, on a machine the other tests load too.
    let start = world.start(&["prd.json", "--name", "away", "--lease", "5s"]);
    assert_eq!(start.code, Some(0), "{start}");
    for story in ["US-001", "US-002", "US-003"] {
        world.control(&format!("hold-{story}"));
    }
    let mut second_way = world.remote.another_way();
    let mut first = world.worker("w1", &["-j", "2"]);
    wait_for(LIMIT, "w1 to hold two stories", || {
        world
            .ctl_lines("log")
            .iter()
            .filter(|l| l.starts_with("holding"))
            .count()
            == 2
    });
    // w2 has a free slot all along: a stale claim would be one it could take.
    let mut second = world.worker_via("w2", &["-j", "2"], &[], &second_way.url());
    wait_for(LIMIT, "three stories to run", || {
        world
            .ctl_lines("log")
            .iter()
            .filter(|l| l.starts_with("holding"))
            .count()
            == 3
    });
    let claimed_by_first = stories_of(&first, "claimed");
    assert_eq!(claimed_by_first.len(), 2);
    world.remote.stop();
    second_way.stop();
    for story in ["US-001", "US-002", "US-003"] {
        world.uncontrol(&format!("hold-{story}"));
    }
    wait_for(
        LIMIT,
        "every worker to find the remote away and wait to land",
        || {
            [&first, &second].iter().all(|w| {
                let out = w.output();
                out.contains("\"offline\"") && out.contains("landing waits for the remote")
            })
        },
    );
    // The outage itself: longer than a lease and its margin (6 s), so an observer that
    // kept counting while it could not see would take w1's live claims over at once.
    std::thread::sleep(Duration::from_secs(8));
    assert!(world.landings().is_empty());
    second_way.serve();
    std::thread::sleep(Duration::from_secs(3));
    world.remote.serve();
    for worker in [&mut first, &mut second] {
        assert_eq!(worker.wait(LIMIT), Some(0), "{}", worker.output());
    }
    let status = world.status();
    for story in &claimed_by_first {
        assert_eq!(row(&status, story)["worker"], "w1", "{status:#}");
    }
    assert!(
        !second.output().contains("taken over"),
        "{}",
        second.output()
    );
    assert_eq!(world.landings().len(), 3);
    assert!(
        world.refs().iter().all(|(r, _)| !r.contains("/salvage/")),
        "nothing needed salvage"
    );
}

/// Issue 32: two stories change the same line from the same base; the second to land
/// conflicts with the first, the agent resolves it in a resolution loop, the gate passes
/// on the merged tree (no conflict marker), and both land, over `file://`.
#[test]
fn issue_32_a_conflict_between_two_stories_is_resolved_by_the_agent_and_gated() {
    let tasks = r#"[{"name": "conflict-a", "task": "Change line two (a)"},
                    {"name": "conflict-b", "task": "Change line two (b)"}]"#;
    let world = World::new(
        &[("tasks.json", tasks), ("shared.txt", "one\ntwo\nthree\n")],
        true,
    );
    let start = world.start(&["tasks.json", "--name", "clash", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    world.control("hold-conflict-a");
    world.control("hold-conflict-b");
    let mut worker = world.worker("w1", &["-j", "2"]);
    wait_for(LIMIT, "both stories to start from the same base", || {
        world
            .ctl_lines("log")
            .iter()
            .filter(|l| l.starts_with("holding"))
            .count()
            == 2
    });
    world.uncontrol("hold-conflict-a");
    world.uncontrol("hold-conflict-b");
    assert_eq!(worker.wait(LIMIT), Some(0), "{}", worker.output());
    let resolved: Vec<String> = world
        .ctl_lines("log")
        .into_iter()
        .filter(|l| l.starts_with("resolve "))
        .collect();
    assert_eq!(resolved.len(), 1, "{resolved:?}");
    let shared = world.file_on_main("shared.txt");
    assert!(
        shared.contains("two by conflict-a") && shared.contains("two by conflict-b"),
        "{shared}"
    );
    assert!(
        !shared.contains("<<<<<<<") && !shared.contains(">>>>>>>"),
        "{shared}"
    );
    let landings = world.landings();
    assert_eq!(landings.len(), 2, "{landings:?}");
    let passed: Vec<String> = world
        .ctl_lines("gate-log")
        .into_iter()
        .filter(|l| l.starts_with("pass "))
        .collect();
    for (commit, subject) in &landings {
        assert!(
            passed.iter().any(|l| l.ends_with(commit)),
            "{subject} landed ungated: {passed:?}"
        );
    }
    assert!(
        worker
            .output()
            .contains("conflicts with main in shared.txt"),
        "{}",
        worker.output()
    );
}

/// Issue 32: three workers' landings are in flight (their pushes held at the remote) when
/// `pagent team cancel` pushes the cancel; none of the three lands after it (the remote
/// rejects each for its stale lease on the state), and no worker pushes anything once it
/// has seen the cancel.
#[test]
fn issue_32_a_cancel_while_three_landings_are_in_flight_lets_none_land_after_it() {
    let world = World::new(&[("prd.json", &prd(3, |_| vec![]))], false);
    world.hook(HOLD_LANDINGS);
    let start = world.start(&["prd.json", "--name", "stop", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    let main_before = world.remote_git(&["rev-parse", "main"]);
    world.control("hold-landings");
    let mut workers: Vec<Worker> = (1..=3)
        .map(|i| world.worker(&format!("w{i}"), &[]))
        .collect();
    wait_for(LIMIT, "three landings held at the remote", || {
        world.ctl_lines("held").len() == 3
    });
    let cancel = world.team(&["cancel", "--team", "stop"]);
    assert_eq!(cancel.code, Some(0), "{cancel}");
    world.uncontrol("hold-landings");
    wait_for(LIMIT, "every worker to see the cancel", || {
        workers
            .iter()
            .all(|w| w.output().contains("\"event\":\"cancelled\""))
    });
    let refs_seen = world.refs();
    for worker in &mut workers {
        assert_eq!(worker.wait(LIMIT), Some(130), "{}", worker.output());
    }
    assert_eq!(
        world.remote_git(&["rev-parse", "main"]),
        main_before,
        "nothing landed"
    );
    assert!(world.landings().is_empty());
    let status = world.status();
    assert_eq!(status["control"], "cancelled", "{status:#}");
    assert!(
        status["stories"]
            .as_array()
            .unwrap()
            .iter()
            .all(|s| s["state"] != "landed")
    );
    assert_eq!(
        world.refs(),
        refs_seen,
        "a worker pushed after it saw the cancel"
    );
}

/// Issue 32: a person pushes a commit to the shared branch while a story's landing runs
/// its gate; the landing's push is rejected (its lease on the branch is stale), it merges
/// again, checks again, and lands on top: the person's commit is kept, and every update
/// of the shared branch on the remote was a fast-forward.
#[test]
fn issue_32_a_commit_a_person_pushed_to_the_shared_branch_is_kept_and_never_forced() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let start = world.start(&["prd.json", "--name", "person", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    world.control("hold-gate-US-001");
    let mut worker = world.worker("w1", &[]);
    wait_for(LIMIT, "the landing's gate to run", || {
        world
            .ctl_lines("gate-log")
            .iter()
            .any(|l| l.starts_with("start US-001"))
    });
    fs::write(world.seed.join("person.txt"), "a person's work\n").unwrap();
    git(&world.seed, &["add", "person.txt"]);
    git(&world.seed, &["commit", "-q", "-m", "a person's commit"]);
    git(&world.seed, &["push", "-q", "origin", "main"]);
    let person = world.remote_git(&["rev-parse", "main"]).trim().to_owned();
    world.uncontrol("hold-gate-US-001");
    assert_eq!(worker.wait(LIMIT), Some(0), "{}", worker.output());
    assert!(
        worker.output().contains("1 push was rejected first"),
        "{}",
        worker.output()
    );
    let kept = std::process::Command::new("git")
        .args(["merge-base", "--is-ancestor", &person, "main"])
        .current_dir(&world.remote.bare)
        .status()
        .unwrap();
    assert!(kept.success(), "the person's commit is not in main");
    assert_eq!(world.file_on_main("person.txt"), "a person's work\n");
    // Every update of main, as the remote logged it, moved it forward.
    let log = world.remote_git(&["reflog", "show", "--format=%H", "main"]);
    let tips: Vec<&str> = log.lines().collect();
    for pair in tips.windows(2) {
        let forward = std::process::Command::new("git")
            .args(["merge-base", "--is-ancestor", pair[1], pair[0]])
            .current_dir(&world.remote.bare)
            .status()
            .unwrap();
        assert!(
            forward.success(),
            "main went from {} to {} without a fast-forward",
            pair[1],
            pair[0]
        );
    }
}

/// Issue 32: a worker cut off from the remote for longer than its lease loses its story
/// to a worker that can still reach it; the cut-off worker finishes the story's work
/// offline, and when it is back, it never lands it (its claim's lease rejects it) and
/// pushes that work to `salvage/STORY/WORKER` instead, so nothing it did is lost. The
/// story lands once, by the worker that took it over.
#[test]
fn issue_32_a_worker_cut_off_past_its_lease_loses_the_story_and_its_work_is_kept_in_salvage() {
    let mut world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let start = world.start(&["prd.json", "--name", "cut", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    world.control("hold-US-001");
    let second_way = world.remote.another_way();
    let mut first = world.worker("w1", &[]);
    wait_for(LIMIT, "w1 to hold US-001", || {
        world.ctl_lines("log").iter().any(|l| l == "holding US-001")
    });
    let mut second = world.worker_via("w2", &[], &[], &second_way.url());
    // w1's way to the remote goes; w2's stays. w1's loop completes offline.
    world.remote.stop();
    world.uncontrol("hold-US-001");
    wait_for(LIMIT, "w2 to land US-001", || world.landings().len() == 1);
    world.remote.serve();
    for worker in [&mut first, &mut second] {
        assert_eq!(worker.wait(LIMIT), Some(0), "{}", worker.output());
    }
    assert!(
        second.output().contains("taken over from w1"),
        "{}",
        second.output()
    );
    let salvage = "refs/pagent/teams/cut/salvage/US-001/w1";
    assert!(
        first
            .output()
            .contains(&format!("this worker's work is kept at {salvage}")),
        "{}",
        first.output()
    );
    let kept = world.remote_git(&["show", &format!("{salvage}:work/US-001.txt")]);
    assert!(kept.starts_with("run "), "w1's run is kept: {kept}");
    assert_eq!(world.landings().len(), 1, "it landed once");
    assert_eq!(row(&world.status(), "US-001")["worker"], "w2");
}

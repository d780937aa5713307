//! What a team's commands say, whole (snapshots), and how the user's pause, resume and
//! cancel reach every worker.

use std::time::Duration;

use super::*;

const LIMIT: Duration = Duration::from_secs(120);

/// A team's text with what changes between runs masked: the remote's port, commits,
/// how long ago by a worker's clock.
pub(super) fn masked(text: &str) -> String {
    let rules = [
        (r"127\.0\.0\.1:\d+", "127.0.0.1:[PORT]"),
        (r"\b[0-9a-f]{10}\b", "[COMMIT]"),
        (r"\d+(h\d\dm|m\d\ds|s) ago", "[N] ago"),
        (r"\d+ tokens", "[N] tokens"),
    ];
    rules.iter().fold(text.to_owned(), |text, (pattern, with)| {
        regex::Regex::new(pattern)
            .unwrap()
            .replace_all(&text, *with)
            .into_owned()
    })
}

/// Issue 32: what `pagent team start` says, and `status` of a team in every state a
/// story can be in: landed, in work on a worker, waiting for another, gave up, and never
/// starting because what it waits for gave up; with the workers' lines.
#[test]
fn issue_32_start_and_status_say_every_story_and_worker_in_words_and_json() {
    let plan = prd(5, |i| match i {
        3 => vec![2],
        5 => vec![4],
        _ => vec![],
    });
    let world = World::new(&[("prd.json", &plan)], false);
    let start = world.start(&[
        "prd.json",
        "--name",
        "words",
        "--lease",
        "3s",
        "--max-iterations",
        "1",
        "--check",
        "true",
    ]);
    assert_eq!(start.code, Some(0), "{start}");
    world.control("hold-US-002");
    world.control("never-US-004");
    let mut worker = world.worker("w1", &["-j", "3"]);
    wait_status(
        &world,
        LIMIT,
        "US-001 landed, US-004 gave up, US-002 in work",
        |s| {
            row(s, "US-001")["state"] == "landed"
                && row(s, "US-004")["state"] == "gave_up"
                && row(s, "US-002")["state"] == "working"
                && s["workers"][0]["holds"] == json!(["US-002"])
        },
    );
    let status = world.team(&["status", "--team", "words"]);
    assert_eq!(status.code, Some(0), "{status}");
    let json = world.status();
    assert_eq!(row(&json, "US-003")["waits_for"], json!(["US-002"]));
    assert_eq!(row(&json, "US-005")["state"], "blocked");
    world.uncontrol("hold-US-002");
    assert_eq!(
        worker.wait(LIMIT),
        Some(3),
        "a story gave up\n{}",
        worker.output()
    );
    let done = world.team(&["status"]);
    assert_text!(masked(&format!(
        "$ pagent team start prd.json ...\n{}\n$ pagent team status (while it works)\n{}\n$ pagent team status (at the end)\n{}",
        start.stdout, status.stdout, done.stdout
    )));
}

/// Issue 32: a plan's commands (its checks, its agent command) run on another machine
/// only once that machine's user trusted them, or gave their own as flags: the worker
/// refuses with the commands and how to trust them; `pagent team trust` shows them and
/// trusts them; then the same worker runs.
#[test]
fn issue_32_a_teams_commands_run_on_another_machine_only_once_trusted() {
    let world = World::new(&[("prd.json", &prd(1, |_| vec![]))], false);
    let start = world.start(&[
        "prd.json",
        "--name",
        "consent",
        "--lease",
        "3s",
        "--command",
        &world.agent,
        "--check",
        &world.gate,
    ]);
    assert_eq!(start.code, Some(0), "{start}");
    let (clone, home) = world.clone_for("other");
    let refused = world
        .pagent(&clone, &home, &["team", "work", "--team", "consent"])
        .run();
    assert_eq!(refused.code, Some(1), "{refused}");
    assert!(world.ctl_lines("log").is_empty(), "the agent ran untrusted");
    let trust = world
        .pagent(&clone, &home, &["team", "trust", "--team", "consent"])
        .run();
    assert_eq!(trust.code, Some(0), "{trust}");
    let work = world
        .pagent(
            &clone,
            &home,
            &["team", "work", "--team", "consent", "--name", "other"],
        )
        .run();
    assert_eq!(work.code, Some(0), "{work}");
    assert_eq!(world.landings().len(), 1);
    assert_text!(masked(&format!(
        "$ pagent team work (untrusted)\n{}\n$ pagent team trust\n{}",
        refused.stderr, trust.stdout
    )));
}

/// Issue 32: `pagent team pause` reaches every worker at its next step (its loops stop
/// and save their state, nothing is claimed or landed), `resume` lets them go on from
/// where they were, and `cancel` is final; each says what it did.
#[test]
fn issue_32_pause_and_resume_reach_every_worker_at_its_next_step() {
    let world = World::new(&[("prd.json", &prd(3, |_| vec![]))], true);
    let start = world.start(&["prd.json", "--name", "hold", "--lease", "3s"]);
    assert_eq!(start.code, Some(0), "{start}");
    world.control("hold-US-001");
    world.control("hold-US-002");
    let mut workers = [world.worker("w1", &[]), world.worker("w2", &[])];
    wait_for(LIMIT, "two stories to run", || {
        world
            .ctl_lines("log")
            .iter()
            .filter(|l| l.starts_with("holding"))
            .count()
            == 2
    });
    let pause = world.team(&["pause", "--team", "hold"]);
    assert_eq!(pause.code, Some(0), "{pause}");
    wait_for(LIMIT, "every worker's loop to stop for the pause", || {
        workers
            .iter()
            .all(|w| w.output().contains("the loop saves its state and waits"))
    });
    world.uncontrol("hold-US-001");
    world.uncontrol("hold-US-002");
    let again = world.team(&["pause", "--team", "hold"]);
    // Paused: nothing lands, nothing more is claimed, however long it stays so.
    wait_for(LIMIT, "the workers to record the pause", || {
        world.status()["workers"]
            .as_array()
            .unwrap()
            .iter()
            .all(|w| w["state"] == "paused")
    });
    assert!(world.landings().is_empty());
    assert!(workers.iter().all(|w| !w.output().contains("US-003")));
    let resume = world.team(&["resume", "--team", "hold"]);
    assert_eq!(resume.code, Some(0), "{resume}");
    for worker in &mut workers {
        assert_eq!(worker.wait(LIMIT), Some(0), "{}", worker.output());
        assert!(
            worker.output().contains("the loop goes on"),
            "{}",
            worker.output()
        );
    }
    assert_eq!(world.landings().len(), 3);
    let cancel = world.team(&["cancel", "--team", "hold"]);
    let cancel_again = world.team(&["resume", "--team", "hold"]);
    assert_eq!(cancel_again.code, Some(1), "{cancel_again}");
    assert_text!(masked(&format!(
        "$ pagent team pause\n{}$ pagent team pause (again)\n{}$ pagent team resume\n{}$ pagent team cancel\n{}$ pagent team resume (after the cancel)\n{}",
        pause.stdout, again.stdout, resume.stdout, cancel.stdout, cancel_again.stdout
    )));
}

/// The stories and what each waits for, as `pagent parallel --dry-run` lists them:
/// `(name, the one it runs after)`.
fn dry_run_stories(text: &str) -> Vec<(String, Option<String>)> {
    let line =
        regex::Regex::new(r"^  (\S+)  \(branch [^,]+, up to \d+ iterations(?:, after ([^)]+))?\)")
            .unwrap();
    text.lines()
        .filter_map(|l| line.captures(l))
        .map(|c| (c[1].to_owned(), c.get(2).map(|m| m.as_str().to_owned())))
        .collect()
}

/// Issue 32: a team starts from every plan format `pagent parallel` reads (Ralph's
/// prd.json, Chief, spec-kit, Kiro, ralphex, a JSON list of tasks, a tasks file, and the
/// GitHub issues `pagent loop --issues` wrote down as a plan), with
/// the same stories in the same order and the same dependencies as `parallel` reads
/// from it: `team status` lists them, each waiting for what it waits for there.
#[test]
fn issue_32_a_team_starts_from_every_plan_format_pagent_reads() {
    let tasks_json =
        r#"[{"name": "first", "task": "Write a.txt"}, {"name": "second", "task": "Write b.txt"}]"#;
    let plans = [
        ("prd.json", crate::stories::PRD_JSON),
        ("chief-prd.md", crate::stories::CHIEF),
        ("speckit-tasks.md", crate::stories::SPECKIT),
        ("kiro-tasks.md", crate::stories::KIRO),
        ("ralphex-plan.md", crate::stories::RALPHEX),
        ("tasks.json", tasks_json),
        ("tasks.txt", "one: Write one.txt\ntwo: Write two.txt\n"),
        // The GitHub issues `pagent loop --issues` wrote down as a plan of its own.
        (
            "issues.md",
            "<!-- pagent: GitHub issues -->\n# GitHub issues: label:ready\n\n- [ ] #12 Add a login page\n  It needs a form.\n- [ ] #15 Fix the footer\n",
        ),
    ];
    let world = World::new(&plans, false);
    let home = world.base.join("home-seed");
    for (i, (file, _)) in plans.iter().enumerate() {
        let team = format!("format{i}");
        let dry = world
            .pagent(
                &world.seed,
                &home,
                &["parallel", file, "--dry-run", "--trust"],
            )
            .run();
        assert_eq!(dry.code, Some(0), "{dry}");
        let expected = dry_run_stories(&dry.stdout);
        assert!(!expected.is_empty(), "{file}: {dry}");
        let start = world.start(&[file, "--name", &team]);
        assert_eq!(start.code, Some(0), "{file}: {start}");
        let status = world.team(&["status", "--json", "--team", &team]);
        assert_eq!(status.code, Some(0), "{status}");
        let status: Value = serde_json::from_str(&status.stdout).unwrap();
        let got: Vec<(String, Option<String>)> = status["stories"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| {
                let waits = s["waits_for"].as_array().map(|w| {
                    w.iter()
                        .map(|d| d.as_str().unwrap())
                        .collect::<Vec<_>>()
                        .join(", ")
                });
                (s["name"].as_str().unwrap().to_owned(), waits)
            })
            .collect();
        assert_eq!(got, expected, "{file}: {status:#}");
    }
}

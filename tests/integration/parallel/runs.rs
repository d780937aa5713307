//! Issue 20 item 6: a parallel run's branches hold the work (committed by default), the
//! summary says what each holds and where, a second run resumes what did not end (after
//! Ctrl-C too) and leaves finished tasks alone, `--force` starts over, and every hint
//! names the folder it applies to.

use std::time::Duration;

use super::*;
use pagent_door::testing;

#[test]
fn issue_20_item_6_each_tasks_work_is_committed_on_its_branch_by_default() {
    let p = Parallel::new("alpha: do alpha\nbeta: do beta\n");
    let out = p.run(&["-j", "2", "--json"]);
    assert_eq!(out.code, Some(0), "{out}");
    for (name, file) in [("alpha", "shared.txt"), ("beta", "beta.txt")] {
        let tip = p.tip(&format!("pagent/{name}"));
        assert_eq!(
            tip.message(),
            Some("pagent: ralph, iteration 1 (complete)"),
            "{name}"
        );
        assert!(tip.tree().unwrap().get_name(file).is_some(), "{name}");
        // pagent's own files never go into the task's commits.
        assert!(tip.tree().unwrap().get_name(".claude").is_none(), "{name}");
    }
    let summary = summary(&out);
    let alpha = &summary["tasks"][0];
    assert_eq!(
        (
            alpha["commits"].as_u64(),
            alpha["files_changed"].as_u64(),
            alpha["uncommitted"].as_u64(),
            alpha["target"].as_str(),
            alpha["worktree"].as_str(),
        ),
        (
            Some(1),
            Some(1),
            Some(0),
            Some("main"),
            Some(p.worktree("alpha").to_str().unwrap())
        ),
        "{out}"
    );
}

#[test]
fn issue_20_item_6_no_checkpoint_leaves_the_work_uncommitted_and_the_summary_says_so() {
    let p = Parallel::new("beta: do beta\n");
    let out = p.run(&["--no-checkpoint"]);
    assert_eq!(out.code, Some(0), "{out}");
    assert_eq!(p.tip("pagent/beta").id(), p.tip("main").id());
    assert!(
        out.stdout
            .contains("pagent/beta: nothing committed; 1 file uncommitted in its worktree"),
        "{out}"
    );
    // The old flag still runs (committing is the default now).
    let p = Parallel::new("beta: do beta\n");
    assert_eq!(p.run(&["--checkpoint"]).code, Some(0));
    assert_ne!(p.tip("pagent/beta").id(), p.tip("main").id());
}

/// The summary's words, whole: outcomes, what each branch holds, the worktrees, the
/// hints with the folder to run them in.
#[test]
fn issue_20_item_6_the_summary_tells_what_each_branch_holds_and_where() {
    let p = Parallel::new("alpha: do alpha\nbeta: do beta\nnever: never done\n");
    let out = p.run(&["-j", "1", "--max-iterations", "2"]);
    assert_eq!(out.code, Some(3), "{out}");
    let summary = &out.stdout[out.stdout.find("\ntask ").unwrap()..];
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(summary);
    });
}

#[test]
fn issue_20_item_6_a_second_run_resumes_after_ctrl_c_and_leaves_finished_tasks_alone() {
    let p = Parallel::new("alpha: do alpha\nbeta: do beta\n");
    p.control("slow-beta");
    let (mut child, mut lines) = p.spawn(&["-j", "2"]);
    // alpha completes; beta is in its first iteration: then Ctrl-C.
    read_until_all(
        &mut lines,
        &[("finished", "alpha"), ("iteration_started", "beta")],
    );
    // The event comes as the agent starts, a moment before its first line runs: Ctrl-C
    // then would stop a run that never logged itself. Wait until beta's agent is at work.
    wait_for(Duration::from_secs(20), "beta's agent at work", || {
        p.log().iter().any(|l| l == "task beta")
    });
    ctrl_c(&child);
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{rest:?}");
    let last: Value = serde_json::from_str(rest.last().unwrap()).unwrap();
    assert_eq!(last["tasks"][1]["outcome"], "interrupted", "{last}");
    let hint = last["hints"][0].as_str().unwrap();
    assert_eq!(
        hint,
        format!(
            "To resume beta: run the same command again in {} (--force starts every task over).",
            p.env.root.display()
        )
    );

    // Run again: no "already active, pass --force"; beta continues, alpha is not redone.
    p.uncontrol("slow-beta");
    let out = p.run(&["-j", "2"]);
    assert_eq!(out.code, Some(0), "{out}");
    assert!(
        out.stdout.contains("[beta] resumed on branch pagent/beta"),
        "{out}"
    );
    let mut log = p.log();
    log.sort();
    assert_eq!(log, ["task alpha", "task beta", "task beta"]);
    assert!(
        out.stdout
            .contains("the promise was made after 1 iteration (an earlier run)"),
        "{out}"
    );
    let beta = p.tip("pagent/beta");
    assert!(beta.tree().unwrap().get_name("beta.txt").is_some());
}

#[test]
fn issue_20_item_6_a_signal_to_parallel_alone_reaches_its_loops() {
    let p = Parallel::new("beta: do beta\n");
    p.control("slow-beta");
    let baseline = p.env.baseline();
    let (mut child, mut lines) = p.spawn(&[]);
    read_until(&mut lines, "iteration_started", "beta", None);
    // SIGTERM to the parent only (a service manager, `kill PID`): its loops stop too.
    testing::signal(child.id() as i32, testing::SIGTERM);
    let started = std::time::Instant::now();
    let rest: Vec<String> = lines.map(|l| l.unwrap()).collect();
    assert_eq!(child.wait().unwrap().code(), Some(130), "{rest:?}");
    // Left alone, the slow agent sleeps 30 s.
    baseline.assert_within(
        started.elapsed(),
        150,
        std::time::Duration::from_secs(20),
        "pagent parallel after SIGTERM",
    );
    let state: Value = serde_json::from_str(
        &std::fs::read_to_string(p.worktree("beta").join(".claude/pagent-pipeline.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["status"], "active", "{rest:?}");
}

#[test]
fn issue_20_item_6_force_starts_every_task_over_on_its_branch() {
    let p = Parallel::new("alpha: do alpha\nnever: never done\n");
    let out = p.run(&["-j", "1", "--max-iterations", "1"]);
    assert_eq!(out.code, Some(3), "{out}");
    assert_eq!(p.log(), ["task alpha", "task never"]);
    // Without --force, nothing runs again: both loops ended.
    let out = p.run(&["-j", "1", "--max-iterations", "1"]);
    assert_eq!(out.code, Some(3), "{out}");
    assert_eq!(p.log().len(), 2, "{out}");
    assert!(out.stdout.contains("(an earlier run)"), "{out}");
    let alpha_before = p.tip("pagent/alpha").id();
    let out = p.run(&["-j", "1", "--max-iterations", "1", "--force"]);
    assert_eq!(out.code, Some(3), "{out}");
    assert_eq!(
        p.log(),
        ["task alpha", "task never", "task alpha", "task never"]
    );
    // Started over on top of the branch: its earlier commit is kept.
    let alpha = p.tip("pagent/alpha");
    assert!(
        alpha.id() == alpha_before
            || p.repo()
                .graph_descendant_of(alpha.id(), alpha_before)
                .unwrap()
    );
}

#[test]
fn issue_20_item_6_the_plan_says_what_the_branches_will_hold_and_the_run_line_keeps_the_flags() {
    let p = Parallel::new("alpha: do alpha\n");
    let out = p
        .env
        .cmd(&[
            "parallel",
            "tasks.txt",
            "--dry-run",
            "--merge",
            "--into",
            "main",
            "--check",
            "make test",
            "--force",
        ])
        .success();
    let filters = vec![
        (r"/[^\s`']*/project", "[PROJECT]"),
        (r"/[^\s`']*/pagent(-[0-9a-f]+)?\b", "[PAGENT]"),
        (r"'sh [^']*'", "[AGENT]"),
    ];
    insta::with_settings!({filters => filters}, {
        insta::assert_snapshot!(out.stdout);
    });
    let err = p
        .env
        .cmd(&["parallel", "tasks.txt", "--check", "true"])
        .run();
    assert_eq!(err.code, Some(1), "{err}");
    assert_text!("into_without_merge", err.stderr);
}

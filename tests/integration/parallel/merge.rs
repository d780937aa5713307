//! Issue 21, parallel work merged home: `--merge` lands each completed task on its target
//! in task order, a conflict goes to a resolution loop of the same agent in the task's
//! worktree, merged worktrees are removed, nothing is pushed, and the summary says what
//! merged and what was left and why.

use super::*;

/// The acceptance run: three tasks, two of which change the same line. alpha and beta
/// merge cleanly; gamma conflicts with main (which has alpha by then) and the fake agent
/// resolves it in one iteration of the resolution loop.
#[test]
fn issue_21_merge_lands_the_clean_tasks_and_resolves_the_conflict() {
    let p = Parallel::new("alpha: do alpha\nbeta: do beta\ngamma: do gamma\n");
    // A remote that must not move: nothing is pushed, ever.
    let remote = p.env.home.join("remote.git");
    git2::Repository::init_bare(&remote).unwrap();
    crate::git::git(
        &p.env.root,
        &["remote", "add", "origin", remote.to_str().unwrap()],
    );
    crate::git::git(&p.env.root, &["push", "-q", "origin", "main"]);
    let pushed = p.tip("main").id();

    let out = p.run(&["-j", "3", "--merge"]);
    assert_eq!(out.code, Some(0), "{out}");
    assert_eq!(
        p.log(),
        // The tasks run in any order; the resolution runs last, in gamma's worktree.
        {
            let mut tasks = p.log()[..3].to_vec();
            tasks.sort();
            assert_eq!(tasks, ["task alpha", "task beta", "task gamma"]);
            let mut all = p.log()[..3].to_vec();
            all.push("resolve gamma".into());
            all
        }
    );
    // main has every task, in task order, each as a merge commit with the task's words.
    let main = p.tip("main");
    assert_eq!(
        p.env.read("shared.txt"),
        // The resolver kept both sides, its own (gamma's) first.
        "one\ntwo by gamma\ntwo by alpha\nthree\n",
        "the checkout follows main"
    );
    assert_eq!(p.env.read("beta.txt"), "beta\n");
    assert_eq!(
        first_parent_subjects(&p, main.id()),
        [
            "Merge pagent/gamma: do gamma",
            "Merge pagent/beta: do beta",
            "Merge pagent/alpha: do alpha",
            "init"
        ]
    );
    insta::assert_snapshot!("merge_commit_message", main.message().unwrap());
    the_checkout_is_clean_and_the_worktrees_gone(&p, &["alpha", "beta", "gamma"]);
    // Nothing was pushed.
    let remote = git2::Repository::open_bare(&remote).unwrap();
    assert_eq!(remote.refname_to_id("refs/heads/main").unwrap(), pushed);
    // The resolution's agent was told what to do, in its worktree.
    let prompt = std::fs::read_to_string(p.ctl.join("resolve-prompt.txt")).unwrap();
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!("resolution_prompt", prompt);
    });
    let summary = &out.stdout[out.stdout.find("\nMerging").unwrap()..];
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!("merge_summary", summary);
    });
    // A second run has nothing to do and says so.
    let again = p.run(&["--merge"]);
    assert_eq!(again.code, Some(0), "{again}");
    assert_eq!(p.log().len(), 4, "{again}");
    assert!(
        again
            .stdout
            .contains("alpha  merged by an earlier run (as "),
        "{again}"
    );
}

/// The subjects of `tip`'s first-parent history, newest first.
fn first_parent_subjects(p: &Parallel, tip: git2::Oid) -> Vec<String> {
    let repo = p.repo();
    let mut walk = repo.revwalk().unwrap();
    walk.push(tip).unwrap();
    walk.simplify_first_parent().unwrap();
    walk.map(|id| {
        repo.find_commit(id.unwrap())
            .unwrap()
            .summary()
            .unwrap()
            .to_owned()
    })
    .collect()
}

/// The user's checkout is clean and not mid-merge; the merged worktrees are gone.
fn the_checkout_is_clean_and_the_worktrees_gone(p: &Parallel, names: &[&str]) {
    let repo = p.repo();
    assert_eq!(repo.state(), git2::RepositoryState::Clean);
    assert!(
        repo.statuses(None)
            .unwrap()
            .iter()
            .all(|s| s.status().is_ignored() || s.path() == Some("tasks.txt"))
    );
    for name in names {
        assert!(
            !p.worktree(name).exists(),
            "{name}'s worktree is still there"
        );
    }
    assert!(repo.worktrees().unwrap().is_empty());
}

/// `--merge-only` after a plain run, with `--json`: the merge is reported per task.
#[test]
fn issue_21_merge_only_merges_what_an_earlier_run_completed() {
    let p = Parallel::new("alpha: do alpha\nnever: never done\n");
    let out = p.run(&["-j", "1", "--max-iterations", "1"]);
    assert_eq!(out.code, Some(3), "{out}");
    assert!(
        out.stdout.contains(&format!(
            "To merge alpha into main: run the same command with --merge-only in {}.",
            p.env.root.display()
        )),
        "{out}"
    );
    let out = p.run(&["--merge-only", "--json"]);
    assert_eq!(
        out.code,
        Some(3),
        "never gave up: not everything merged\n{out}"
    );
    assert_eq!(
        p.log(),
        ["task alpha", "task never"],
        "--merge-only ran a task"
    );
    let summary = summary(&out);
    assert_eq!(summary["tasks"][0]["merge"]["outcome"], "merged", "{out}");
    assert_eq!(summary["tasks"][0]["merge"]["into"], "main");
    assert_eq!(summary["tasks"][1]["merge"]["outcome"], "left");
    assert_eq!(
        summary["tasks"][1]["merge"]["detail"],
        "not merged: its loop did not complete (gave up)"
    );
    // The task that was left keeps its worktree and branch.
    assert!(p.worktree("never").exists());
    assert!(!p.worktree("alpha").exists());
}

/// The target moved meanwhile (the user committed on main after the run): the merge is
/// made on its new tip, and the user's commit stays.
#[test]
fn issue_21_a_target_that_moved_meanwhile_is_merged_onto_its_new_tip() {
    let p = Parallel::new("beta: do beta\n");
    assert_eq!(p.run(&[]).code, Some(0));
    p.env.write("mine.txt", "mine\n");
    crate::git::git(&p.env.root, &["add", "mine.txt"]);
    crate::git::git(&p.env.root, &["commit", "-q", "-m", "mine"]);
    let mine = p.tip("main").id();
    let out = p.run(&["--merge-only"]);
    assert_eq!(out.code, Some(0), "{out}");
    let main = p.tip("main");
    assert_eq!(main.parent_id(0).unwrap(), mine);
    assert_eq!(main.parent_id(1).unwrap(), p.tip("pagent/beta").id());
    assert!(p.env.exists("beta.txt") && p.env.exists("mine.txt"));
}

/// `--into BRANCH` merges into a branch that is checked out nowhere: only its ref moves,
/// the user's checkout (on main) is untouched.
#[test]
fn issue_21_into_merges_into_a_branch_checked_out_nowhere() {
    let p = Parallel::new("beta: do beta\n");
    crate::git::git(&p.env.root, &["branch", "release"]);
    let out = p.run(&["--merge", "--into", "release"]);
    assert_eq!(out.code, Some(0), "{out}");
    let release = p.tip("release");
    assert!(release.tree().unwrap().get_name("beta.txt").is_some());
    assert_eq!(p.tip("main").summary(), Some("init"));
    assert!(
        !p.env.exists("beta.txt"),
        "the checkout of main was touched"
    );
}

/// A resolver that commits the merge with its markers still in is told so and tries
/// again; the check must pass too.
#[test]
fn issue_21_a_resolution_counts_only_without_markers_and_with_the_check_passing() {
    let p = Parallel::new("alpha: do alpha\ngamma: do gamma\n");
    p.control("markers-once");
    p.control("make-ok");
    let out = p.run(&["-j", "1", "--merge", "--check", "test -f ok"]);
    assert_eq!(out.code, Some(0), "{out}");
    assert_eq!(
        p.log(),
        ["task alpha", "task gamma", "resolve gamma", "resolve gamma"]
    );
    let prompt = std::fs::read_to_string(p.ctl.join("resolve-prompt.txt")).unwrap();
    assert!(
        prompt.contains(
            "conflict markers (<<<<<<< or >>>>>>> lines) are still in 1 file: shared.txt"
        ),
        "{prompt}"
    );
    assert!(
        prompt.contains("`test -f ok` exited with code 1"),
        "{prompt}"
    );
    assert!(!p.env.read("shared.txt").contains("<<<<<<<"));
    assert!(p.env.exists("ok"));
}

/// Binary files carry no markers: the resolver chooses a side, and that is a resolution.
#[test]
fn issue_21_a_binary_conflict_is_resolved_by_choosing_a_side() {
    let p = Parallel::new("binary-a: binary one\nbinary-b: binary two\n");
    let out = p.run(&["-j", "1", "--merge"]);
    assert_eq!(out.code, Some(0), "{out}");
    assert_eq!(
        p.log(),
        ["task binary-a", "task binary-b", "resolve binary-b"]
    );
    // --theirs during the merge of main into binary-b: main's side (binary-a's bytes).
    assert_eq!(
        std::fs::read(p.env.path("bin.dat")).unwrap(),
        b"bin\0binary-a"
    );
}

/// A task's own `check` (JSON tasks file) must pass before its resolution counts; from a
/// tasks file in the project it runs only once the user trusted that file.
#[test]
fn issue_21_a_tasks_own_check_runs_only_once_the_tasks_file_is_trusted() {
    let p = Parallel::new("");
    p.env.write(
        "tasks.json",
        r#"[{"name": "alpha", "task": "do alpha"}, {"name": "gamma", "task": "do gamma", "check": "test -f ok"}]"#,
    );
    let refused = p.run_file("tasks.json", &["-j", "1", "--merge"]);
    assert_eq!(refused.code, Some(1), "{refused}");
    assert!(
        refused
            .stderr
            .contains("tasks.json (not trusted) would run:\n    test -f ok"),
        "{refused}"
    );
    assert!(
        p.log().is_empty(),
        "a task ran before the checks were trusted"
    );
    p.env.cmd(&["trust", "tasks.json"]).success();
    p.control("make-ok");
    let out = p.run_file("tasks.json", &["-j", "1", "--merge"]);
    assert_eq!(out.code, Some(0), "{out}");
    let prompt = std::fs::read_to_string(p.ctl.join("resolve-prompt.txt")).unwrap();
    assert!(
        prompt.contains("4. Run `test -f ok` and make it pass without weakening it."),
        "{prompt}"
    );
    assert!(p.env.exists("ok"));
}

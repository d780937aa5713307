//! `pagent loop --worktree` and `pagent parallel`: each loop in its own git worktree and
//! branch, checkpointed per iteration, several at a time with one summary.

use std::path::Path;

use serde_json::Value;

use crate::util::*;

#[test]
fn a_worktree_loop_commits_each_iteration_on_its_branch() {
    let env = TestEnv::new();
    crate::git::git(&env.root, &["commit", "-q", "--allow-empty", "-m", "init"]);
    env.write("agent.sh", "cat > /dev/null\nn=$(ls work-*.txt 2>/dev/null | wc -l); echo $n > work-$n.txt\n[ $n -ge 1 ] && echo '<promise>DONE</promise>'\nexit 0\n");
    // The agent script lives in the main checkout; the loop runs in the worktree.
    let agent = format!("sh {}", env.path("agent.sh").display());
    env.cmd(&[
        "loop",
        "--worktree",
        "demo",
        "--checkpoint",
        "--setup",
        "touch setup-ran",
        "--command",
        &agent,
        "ralph",
        "Work",
    ])
    .success();
    let tree = env.path(".pagent/worktrees/demo");
    assert!(tree.join("setup-ran").exists());
    let repo = git2::Repository::open(&tree).unwrap();
    let head = repo.head().unwrap();
    assert_eq!(head.shorthand(), Some("pagent/demo"));
    let messages: Vec<String> = {
        let mut walk = repo.revwalk().unwrap();
        walk.push_head().unwrap();
        walk.map(|id| {
            repo.find_commit(id.unwrap())
                .unwrap()
                .message()
                .unwrap()
                .trim()
                .to_owned()
        })
        .collect()
    };
    assert_eq!(
        messages,
        [
            "pagent: ralph, iteration 2 (complete)",
            "pagent: ralph, iteration 1 (not done)",
            "init"
        ]
    );
    assert!(!env.exists("work-0.txt"), "the main checkout was touched");
}

#[test]
fn parallel_runs_each_task_in_its_own_worktree_and_summarises() {
    let env = TestEnv::new();
    crate::git::git(&env.root, &["commit", "-q", "--allow-empty", "-m", "init"]);
    env.write("agent.sh", "prompt=$(cat)\nname=$(printf '%s' \"$prompt\" | tail -n 1 | tr ' ' '-')\necho \"$prompt\" > \"$name.txt\"\nif [ \"$name\" = never ]; then exit 0; fi\necho '<promise>DONE</promise>'\n");
    env.write(
        "tasks.txt",
        "alpha: first task\nbeta: second task\n# a comment\ngamma: never\n",
    );
    let agent = format!("sh {}", env.path("agent.sh").display());
    let out = env
        .cmd(&[
            "parallel",
            "tasks.txt",
            "-j",
            "2",
            "--json",
            "--checkpoint",
            "--max-iterations",
            "2",
            "--command",
            &agent,
        ])
        .run();
    assert_eq!(out.code, Some(3), "one task gave up\n{out}");
    let summary: Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(
        outcomes(&summary),
        [
            ("alpha".into(), "complete".into(), 1),
            ("beta".into(), "complete".into(), 1),
            ("gamma".into(), "gave up".into(), 2)
        ]
    );
    each_branch_holds_its_work(&env.root);
    every_event_names_its_task(&out);
}

/// Each task's name, outcome and iterations, from the summary.
fn outcomes(summary: &Value) -> Vec<(String, String, u64)> {
    summary["tasks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["task"].as_str().unwrap().to_owned(),
                t["outcome"].as_str().unwrap().to_owned(),
                t["iterations"].as_u64().unwrap(),
            )
        })
        .collect()
}

/// The completed tasks' branches hold their work; the task that gave up kept its work
/// too, one checkpoint per iteration.
fn each_branch_holds_its_work(root: &Path) {
    let repo = git2::Repository::open(root).unwrap();
    for (name, file) in [("alpha", "first-task.txt"), ("beta", "second-task.txt")] {
        let branch = repo
            .find_branch(&format!("pagent/{name}"), git2::BranchType::Local)
            .unwrap();
        let commit = branch.get().peel_to_commit().unwrap();
        assert!(
            commit.tree().unwrap().get_name(file).is_some(),
            "{name}: {:?}",
            commit.message()
        );
        assert_eq!(
            commit.message(),
            Some("pagent: ralph, iteration 1 (complete)")
        );
    }
    let gamma = repo
        .find_branch("pagent/gamma", git2::BranchType::Local)
        .unwrap()
        .get()
        .peel_to_commit()
        .unwrap();
    assert_eq!(
        gamma.message(),
        Some("pagent: ralph, iteration 2 (gave up)")
    );
    assert_eq!(
        gamma.parent(0).unwrap().message(),
        Some("pagent: ralph, iteration 1 (not done)")
    );
}

/// Every child event was forwarded with its task's name.
fn every_event_names_its_task(out: &Run) {
    let events: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}\n{out}")))
        .collect();
    let finished: Vec<&Value> = events
        .iter()
        .filter(|e| e["event"] == "iteration_finished")
        .collect();
    assert!(!finished.is_empty(), "{out}");
    assert!(
        finished
            .iter()
            .all(|e| ["alpha", "beta", "gamma"].contains(&e["task"].as_str().unwrap_or(""))),
        "{out}"
    );
}

//! pagent outside the Stop hook: `pagent loop` driving fresh Claude Code processes, and
//! the plan /pagent:parallel shows.

use super::*;

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn pagent_loop_drives_fresh_claude_processes_to_the_promise() {
    let e2e = E2e::start(vec![
        Reply::text("First look."),
        Reply::text("Made progress."),
        Reply::text("Done.\n<promise>DONE</promise>"),
    ]);
    let out = e2e.pagent_loop(&claude_agent_args(&[
        "--agent-arg=--include-hook-events",
        "ralph",
        "--no-progress-limit",
        "0",
        "Tidy the README",
    ]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(e2e.mock.requests().len(), 3);
    for (index, iteration) in [(0, 1), (1, 2), (2, 3)] {
        // A fresh process each time: one user turn, no Stop hook feedback in between.
        let request = &e2e.mock.requests()[index];
        let users = request["messages"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|m| m["role"] == "user")
            .count();
        assert_eq!(users, 1, "request {index} is not a fresh conversation");
        let told = e2e.mock.all_text(index);
        assert!(
            !told.contains(STOP_FEEDBACK) && !told.contains("Stop hook additional context"),
            "request {index}: the Stop hook interfered: {told}"
        );
        assert!(
            told.contains(&format!(
                "pagent · ralph loop · iteration {iteration} of 25"
            )),
            "request {index}: {told}"
        );
        assert!(told.contains("Tidy the README"), "{told}");
    }
    // The plugin was loaded in each agent, and its Stop hook stood aside every time.
    let runs = e2e.path(".claude/pagent/runs");
    let mut logs: Vec<_> = std::fs::read_dir(&runs)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .collect();
    logs.sort();
    assert_eq!(logs.len(), 3);
    for log in &logs {
        let text = std::fs::read_to_string(log).unwrap();
        let stops: Vec<serde_json::Value> = text
            .lines()
            .filter_map(|l| serde_json::from_str::<serde_json::Value>(l).ok())
            .filter(|e| e["subtype"] == "hook_response" && e["hook_event"] == "Stop")
            .collect();
        assert_eq!(stops.len(), 1, "{}: {text}", log.display());
        assert_eq!(stops[0]["stdout"], "", "{}", log.display());
    }
    let status = e2e.status();
    assert_eq!(
        (status["status"].as_str(), status["iterations"].as_u64()),
        (Some("complete"), Some(3))
    );
    let last: serde_json::Value = serde_json::from_str(stdout.lines().last().unwrap())
        .unwrap_or_else(|e| panic!("the last line is not JSON ({e}): {stdout}"));
    assert_eq!(last["outcome"], "complete", "{stdout}");
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn ralph_parallel_shows_the_plan_and_the_command_to_run() {
    let e2e = E2e::start(vec![Reply::text("I will run it in the background.")]);
    e2e.write(
        "tasks.txt",
        "alpha: Fix the 'login' bug\nbeta: Add a README\n",
    );
    let run = e2e
        .claude("/pagent:parallel tasks.txt -j 2 --max-iterations 5")
        .run();
    assert_eq!(run.code, Some(0));
    let told = e2e.mock.all_text(0);
    assert!(told.contains("pagent parallel: 2 tasks from"), "{told}");
    assert!(
        told.contains("alpha  (branch pagent/alpha, up to 5 iterations): Fix the 'login' bug"),
        "{told}"
    );
    assert!(
        told.contains(" parallel ") && told.contains(" -j 2 --max-iterations 5 --json"),
        "{told}"
    );
    // A plan only: nothing ran.
    assert!(!e2e.path(".pagent/worktrees").exists());
}

/// Issues 20 (item 6) and 21 through the real CLI: three tasks run by fresh Claude Code
/// processes in their worktrees, each one's work committed on its branch; then `--merge`
/// lands alpha and beta cleanly and gives gamma's conflict (both add notes.md) to a
/// resolution loop of the same agent, which resolves it with git in gamma's worktree.
#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn parallel_merge_lands_every_task_and_resolves_a_conflict_with_claude() {
    let e2e = E2e::start_with(|e2e| {
        let tree = |name: &str, file: &str| e2e.path(&format!(".pagent/worktrees/{name}/{file}"));
        vec![
            Reply::write(&tree("alpha", "notes.md"), "alpha\n"),
            Reply::text("Done.\n<promise>DONE</promise>"),
            Reply::write(&tree("beta", "beta.md"), "beta\n"),
            Reply::text("Done.\n<promise>DONE</promise>"),
            Reply::write(&tree("gamma", "notes.md"), "gamma\n"),
            Reply::text("Done.\n<promise>DONE</promise>"),
            Reply::bash(
                "printf 'alpha\\ngamma\\n' > notes.md && git add notes.md && git commit -q --no-edit",
            ),
            Reply::text("Resolved: both notes kept."),
        ]
    });
    for (key, value) in [("user.name", "Tess"), ("user.email", "tess@example.com")] {
        crate::git::git(&e2e.project, &["config", key, value]);
    }
    e2e.write(
        "tasks.txt",
        "alpha: Write notes.md\nbeta: Write beta.md\ngamma: Write notes.md too\n",
    );
    let claude = claude_binary();
    let plugin = repo_root();
    let out = e2e.pagent_parallel(&[
        "tasks.txt",
        "-j",
        "1",
        "--merge",
        "--agent",
        "claude",
        "--agent-bin",
        claude.to_str().unwrap(),
        "--agent-arg=--plugin-dir",
        &format!("--agent-arg={}", plugin.display()),
        "--agent-arg=--allowedTools",
        "--agent-arg=Bash",
    ]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stdout}\n{stderr}");
    assert_eq!(e2e.mock.requests().len(), 8, "{stdout}");
    // The resolution's agent was told about the conflict, in gamma's worktree.
    let told = e2e.mock.all_text(6);
    assert!(
        told.contains("# Merge: resolve the conflicts between pagent/gamma and main")
            || told.contains("# Merge: resolve the conflicts between pagent/gamma and master"),
        "{told}"
    );
    assert!(told.contains("- notes.md"), "{told}");
    assert_eq!(
        std::fs::read_to_string(e2e.path("notes.md")).unwrap(),
        "alpha\ngamma\n"
    );
    assert_eq!(
        std::fs::read_to_string(e2e.path("beta.md")).unwrap(),
        "beta\n"
    );
    assert!(!e2e.path(".pagent/worktrees/alpha").exists());
    assert!(!e2e.path(".pagent/worktrees/gamma").exists());
    assert!(
        stdout.contains("after the agent resolved its conflicts in 1 iteration; worktree removed"),
        "{stdout}"
    );
}

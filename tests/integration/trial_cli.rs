//! Issue 30's command-line findings of the third trial, each as the user met it: the help
//! of `run`, `ralph` and `parallel`, a `pagent loop ralph` with no task, and the commands
//! run in a subfolder of a project. (`parallel`'s plans are in `parallel/plans.rs`, the
//! loop's page in `dashboard/browser.rs`.)

use crate::util::*;

/// `--stdin-args` is the slash commands' own flag: no help lists it, and `run`'s usage
/// says the PRD is required (it said `[PRD]`).
#[test]
fn issue_30_stdin_args_is_hidden_and_run_help_says_the_prd_is_required() {
    let env = TestEnv::new();
    let mut said = Said::new();
    for args in [
        ["run", "--help"].as_slice(),
        &["loop", "run", "--help"],
        &["ralph", "--help"],
        &["loop", "ralph", "--help"],
        &["parallel", "--help"],
    ] {
        let help = env.bin(args).success().stdout;
        assert!(!help.contains("stdin-args"), "{args:?}:\n{help}");
        // The usage line and the positional arguments: what says what is required.
        let head: String = help
            .lines()
            .skip_while(|l| !l.starts_with("Usage:"))
            .take_while(|l| !l.starts_with("Options:"))
            .map(|l| format!("{l}\n"))
            .collect();
        said.say(&args.join(" "), &head);
    }
    // Still taken, as the slash commands give it.
    env.cmd(&["run", "--stdin-args"]).stdin("--help").success();
    assert_text!(said.text());
}

/// `pagent loop ralph` with no task names `pagent loop ralph`, not `pagent ralph`.
#[test]
fn issue_30_loop_ralph_without_a_task_says_how_to_give_it_to_pagent_loop() {
    let env = TestEnv::new();
    let mut said = Said::new();
    for args in [
        ["loop", "--command", "true", "ralph"].as_slice(),
        &["loop", "--command", "true", "ralph", "  "],
        &["ralph"],
    ] {
        let out = env.cmd(args).stdin("").failure();
        said.say(&args.join(" "), &out.stderr);
        assert!(!env.exists(".claude/pagent-pipeline.json"), "{args:?}");
    }
    assert_text!(said.text());
}

/// `gave_up` in `pagent log` and `block` in checkpoint commits: a person reads words, a
/// script (`pagent log --json`, the event log file) keeps the names.
#[test]
fn issue_30_engine_words_reach_no_person_in_the_log_or_the_checkpoints() {
    let env = TestEnv::new();
    crate::git::git(&env.root, &["commit", "-q", "--allow-empty", "-m", "init"]);
    env.write("agent.sh", "cat > /dev/null\ndate +%N >> work.txt\n");
    let agent = format!("sh {}", env.path("agent.sh").display());
    let out = env
        .cmd(&[
            "loop",
            "--worktree",
            "demo",
            "--checkpoint",
            "--command",
            &agent,
            "ralph",
            "--max-iterations",
            "2",
            "--no-progress-limit",
            "0",
            "Work",
        ])
        .run();
    assert_eq!(out.code, Some(3), "{out}");
    let tree = env.path(".pagent/worktrees/demo");
    let repo = git2::Repository::open(&tree).unwrap();
    let mut walk = repo.revwalk().unwrap();
    walk.push_head().unwrap();
    let commits: Vec<String> = walk
        .map(|id| {
            let commit = repo.find_commit(id.unwrap()).unwrap();
            commit.message().unwrap().trim().to_owned()
        })
        .collect();
    let log = env
        .cmd(&["--project", &tree.display().to_string(), "log"])
        .success()
        .stdout;
    let json = env
        .cmd(&["--project", &tree.display().to_string(), "log", "--json"])
        .success()
        .stdout;
    let actions: Vec<String> = json
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["action"].to_string())
        .collect();
    assert_eq!(actions, ["\"ralph\"", "\"block\"", "\"gave_up\""], "{json}");
    for said in [&log, &commits.join("\n")] {
        for name in ["gave_up", "block"] {
            assert!(!said.contains(name), "{name} in:\n{said}");
        }
    }
    let mut text = Said::new();
    text.say("git log", &commits.join("\n"));
    text.say("pagent log", &log);
    assert_text!(text.text());
}

/// A 60-line architecture.md showed as "50/50 lines" in status and in the next stage's
/// re-prompt: the real count now, against the minimum. (The dashboard shows the same
/// report: `dashboard::browser`'s loop page test.)
#[test]
fn issue_30_a_60_line_architecture_md_shows_as_60_of_50_lines() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    env.cmd(&["run", "prd.md"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.write_lines("architecture.md", 60);
    let reason = env.stop(&env.stop_input("done")).blocked();
    let status = env.cmd(&["status"]).success().stdout;
    assert_eq!(
        env.status()["stages"][0]["progress"],
        "architecture.md 60/50 lines"
    );
    let mut said = Said::new();
    said.say("the next stage's re-prompt", &prompt_elided(&reason));
    said.say("pagent status", &status);
    assert_text!(said.text());
}

/// Every file under `dir`, relative, sorted.
fn files_under(dir: &std::path::Path) -> Vec<String> {
    let mut out: Vec<String> = walkdir::WalkDir::new(dir)
        .min_depth(1)
        .into_iter()
        .flatten()
        .map(|e| e.path().strip_prefix(dir).unwrap().display().to_string())
        .collect();
    out.sort();
    out
}

/// pagent's own `py_compile` check left 1.3 MB of byte code in pagent's config folder
/// (its cache prefix was there, and Python then compiled its own modules into it too).
/// Now nothing lands there, in the project, or in the temporary folder once the check
/// is over; and the check still finds the error.
#[test]
fn issue_30_a_python_check_leaves_no_byte_code_in_pagents_config_folder() {
    let env = crate::backpressure::active();
    let config_before = files_under(&env.config);
    let tmp = env.home.join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    let check = |content: &str| {
        env.write("app.py", content);
        let input = serde_json::json!({
            "session_id": SESSION,
            "cwd": env.root,
            "hook_event_name": "PostToolUse",
            "tool_name": "Write",
            "tool_input": {"file_path": env.path("app.py")},
            "tool_response": {"type": "update"},
        });
        let run = env
            .bin(&["hook", "post-tool-use"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .env("TMPDIR", &tmp)
            .stdin(input.to_string())
            .run();
        run.context()
    };
    let context = check("def f(:\n    pass\n").expect("the syntax error is reported");
    assert!(context.contains("SyntaxError"), "{context}");
    assert_eq!(check("import json\ndef f():\n    pass\n"), None);
    assert_eq!(files_under(&env.config), config_before);
    assert_eq!(files_under(&tmp), Vec::<String>::new());
    let project = files_under(&env.root);
    assert!(
        !project
            .iter()
            .any(|p| p.contains("__pycache__") || p.ends_with(".pyc")),
        "{project:?}"
    );
}

/// `pagent status` (and `cancel`, `pause`, `resume`, `log`, `prompt`) in a subfolder of a
/// project with a loop said "no loop" and invited starting another: they find the loop
/// above, as git finds its repository, and say whose loop it is.
#[test]
fn issue_30_the_loop_commands_find_the_loop_from_a_subfolder() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let deep = env.path("src/deep");
    std::fs::create_dir_all(&deep).unwrap();
    let mut said = Said::new();
    for args in [
        ["status"].as_slice(),
        &["log"],
        &["prompt"],
        &["pause"],
        &["resume"],
        &["cancel"],
        &["status"],
    ] {
        let out = env.cmd(args).current_dir(&deep).success();
        said.say(
            &format!("pagent {} (in src/deep)", args.join(" ")),
            &format!("{}{}", out.stderr, out.stdout),
        );
    }
    assert_eq!(env.state()["status"], "cancelled");
    let json = env.cmd(&["status", "--json"]).current_dir(&deep).success();
    assert_eq!(
        serde_json::from_str::<serde_json::Value>(&json.stdout).unwrap()["status"],
        "cancelled"
    );
    assert!(!env.exists("src/deep/.claude"), "a state was set up below");
    assert_text!(said.text());
}

/// The walk up never takes a folder that is not the user's project: a `.claude/` planted
/// in a parent (a stranger's state, or the user's own state copied from elsewhere), a
/// nested repository's parent, or the home folder. Each says "no loop" for the current
/// folder and touches nothing above it.
#[test]
fn issue_30_the_walk_up_never_takes_a_parent_that_is_not_the_users_project() {
    // The user's own loop elsewhere: their secret exists, and a state of theirs to copy.
    let mine = TestEnv::new();
    mine.cmd(&["ralph", "Mine"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let stranger = TestEnv::new();
    stranger
        .cmd(&["ralph", "Theirs"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let no_loop = |cwd: &std::path::Path, env: &TestEnv| {
        let out = env
            .cmd(&["status", "--json"])
            .env("PAGENT_CONFIG_DIR", &mine.config)
            .current_dir(cwd)
            .success();
        assert_eq!(out.stdout.trim(), "null", "{out}");
        let out = env
            .cmd(&["cancel"])
            .env("PAGENT_CONFIG_DIR", &mine.config)
            .current_dir(cwd)
            .success();
        assert!(!out.stderr.contains("above the current folder"), "{out}");
    };
    for planted in [&stranger, &mine] {
        // A parent that is no repository holds a state: a stranger's, or the user's own
        // copied there (its seal names the folder it was made for).
        let env = TestEnv::plain();
        let state = planted.read(".claude/pagent-pipeline.json");
        env.write(".claude/pagent-pipeline.json", &state);
        let child = env.path("child");
        std::fs::create_dir_all(&child).unwrap();
        no_loop(&child, &env);
        assert_eq!(env.read(".claude/pagent-pipeline.json"), state);
    }
    // A repository nested in the user's project is a project of its own.
    let nested = mine.path("nested/src");
    std::fs::create_dir_all(&nested).unwrap();
    git2::Repository::init(mine.path("nested")).unwrap();
    no_loop(&nested, &mine);
    assert_eq!(mine.state()["status"], "active");
    // A loop in the home folder itself is never found from below it.
    let home = TestEnv::new();
    home.cmd(&[
        "--project",
        &home.home.display().to_string(),
        "ralph",
        "Home",
    ])
    .env("PAGENT_CONFIG_DIR", &mine.config)
    .env("CLAUDE_CODE_SESSION_ID", SESSION)
    .success();
    let below = home.home.join("notes");
    std::fs::create_dir_all(&below).unwrap();
    no_loop(&below, &home);
    // The user's own loop above, with nothing between: found.
    let sub = mine.path("lib");
    std::fs::create_dir_all(&sub).unwrap();
    let out = mine.cmd(&["status", "--json"]).current_dir(&sub).success();
    assert_ne!(out.stdout.trim(), "null", "{out}");
}

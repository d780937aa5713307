//! A cloned repository is hostile: whatever it plants under the project (symlinks to the
//! user's files, `.claude` itself as a symlink, FIFOs, devices, huge sparse files), no
//! hook and no command may write outside the project, hang, or grow without bound.
//!
//! Each test plants one layout, runs everything a user or Claude Code would run (both
//! hooks, status, log, cancel, set-up), and then compares a snapshot of a folder outside
//! the project, standing for the user's home, and the user's secret.

use std::collections::BTreeMap;
use std::fs;
use std::os::unix::ffi::OsStrExt;
use std::os::unix::fs::symlink;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;

use crate::util::{SESSION, Said, TestEnv, assert_text};

/// The longest any command may take on a planted file before it counts as a hang.
pub(crate) const HANG: Duration = Duration::from_secs(10);
/// The most memory a command may use on a planted file, in KiB.
pub(crate) const MEMORY_KB: i64 = 64 * 1024;

/// A folder beside the project (so relative links can reach it) with files a planted
/// symlink would aim at.
fn outside(env: &TestEnv) -> PathBuf {
    let dir = env.root.parent().unwrap().join("outside");
    fs::create_dir_all(dir.join("sub")).unwrap();
    fs::write(dir.join("bashrc"), "# the user's shell start-up file\n").unwrap();
    fs::write(dir.join("sub/notes"), "private\n").unwrap();
    dir
}

/// Every path under `dir` with its content (files), target (symlinks) or nothing (folders).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(path) = stack.pop() {
        let meta = fs::symlink_metadata(&path).unwrap();
        let content = if meta.file_type().is_symlink() {
            fs::read_link(&path)
                .unwrap()
                .as_os_str()
                .as_bytes()
                .to_vec()
        } else if meta.is_dir() {
            for entry in fs::read_dir(&path).unwrap() {
                stack.push(entry.unwrap().path());
            }
            b"<dir>".to_vec()
        } else {
            fs::read(&path).unwrap()
        };
        out.insert(path, content);
    }
    out
}

/// A state sealed by somebody else (another user's secret): what a repository would carry.
fn planted_state() -> String {
    let stranger = TestEnv::new();
    stranger
        .write_lines("architecture.md", 1)
        .write(
            ".claude/pagent/workflows/evil.json",
            &json!({"stages": [{"name": "x", "prompt": "p",
                "exit_when": {"custom": "touch pwned; exit 1"}}]})
            .to_string(),
        )
        .write("prd.md", "# PRD\n");
    stranger
        .cmd(&["run", "prd.md", "--workflow", "evil", "--trust"])
        .success();
    stranger.read(".claude/pagent-pipeline.json")
}

/// Runs everything that touches the project, each bounded; returns their outputs.
fn run_everything(env: &TestEnv) -> Vec<String> {
    env.write("prd.md", "# PRD\nA thing.\n");
    let mut outputs = Vec::new();
    let stop = env
        .cmd(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .stdin(env.stop_input("working").to_string())
        .run_bounded(HANG);
    outputs.push(stop.run.to_string());
    let edit = json!({"session_id": SESSION, "cwd": env.root, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": {"file_path": env.path("prd.md")}});
    for args in [
        &["hook", "post-tool-use"][..],
        &["status"],
        &["status", "--json"],
        &["log"],
        &["cancel"],
        &["ralph", "Fix it"],
        &["run", "prd.md", "--force"],
        &["hook", "stop"],
    ] {
        let done = env
            .cmd(args)
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .stdin(if args[0] == "hook" {
                if args[1] == "stop" {
                    env.stop_input("working").to_string()
                } else {
                    edit.to_string()
                }
            } else {
                String::new()
            })
            .run_bounded(HANG);
        assert!(
            done.max_rss_kb < crate::util::memory_limit_kb(MEMORY_KB),
            "{} KiB\n{}",
            done.max_rss_kb,
            done.run
        );
        outputs.push(done.run.to_string());
    }
    outputs
}

/// Plants `layout` (with a stranger's state where it fits), runs everything, and checks
/// that nothing outside the project changed and no planted command ran.
fn assert_contained(name: &str, layout: impl Fn(&TestEnv, &Path)) {
    let env = TestEnv::new();
    let outside = outside(&env);
    // The user has used pagent before: their secret exists.
    let other = TestEnv::new();
    env.cmd(&["ralph", "warm up"])
        .current_dir(&other.root)
        .success();
    let secret = fs::read(env.config.join("secret")).unwrap();
    layout(&env, &outside);
    let before = snapshot(&outside);
    let outputs = run_everything(&env);
    let after = snapshot(&outside);
    assert_eq!(
        before,
        after,
        "{name}: something outside the project changed\n{}",
        outputs.join("\n")
    );
    assert_eq!(
        fs::read(env.config.join("secret")).unwrap(),
        secret,
        "{name}: the secret changed"
    );
    assert!(!env.exists("pwned"), "{name}: a planted command ran");
}

fn link(env: &TestEnv, rel: &str, target: impl AsRef<Path>) {
    let path = env.path(rel);
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = fs::remove_file(&path);
    symlink(target, path).unwrap();
}

#[test]
fn the_event_log_marker_and_lock_planted_as_symlinks_are_never_written_through() {
    for absolute in [true, false] {
        assert_contained("log, marker and lock links", |env, outside| {
            env.write(".claude/pagent-pipeline.json", &planted_state());
            let bashrc = if absolute {
                outside.join("bashrc")
            } else {
                PathBuf::from("../../../outside/bashrc")
            };
            link(env, ".claude/pagent/events.jsonl", &bashrc);
            link(
                env,
                ".claude/pagent/unsealed-warned",
                env.config.join("secret"),
            );
            link(env, ".claude/pagent/lock", outside.join("sub/notes"));
            link(env, ".claude/pagent/runs", outside.join("sub"));
        });
    }
}

#[test]
fn claude_or_its_pagent_folder_as_a_symlink_is_never_written_through() {
    for (rel, target) in [
        (".claude", "ABS"),
        (".claude", "../outside"),
        (".claude/pagent", "ABS"),
        (".claude/pagent", "../../outside/sub"),
    ] {
        assert_contained(&format!("{rel} -> {target}"), |env, outside| {
            if rel == ".claude/pagent" {
                env.write(".claude/pagent-pipeline.json", &planted_state());
            } else {
                fs::write(outside.join("pagent-pipeline.json"), planted_state()).unwrap();
            }
            if target == "ABS" {
                link(env, rel, outside);
            } else {
                link(env, rel, target);
            }
        });
    }
}

#[test]
fn a_state_file_planted_as_a_symlink_is_refused_and_never_replaced() {
    assert_contained("state link", |env, outside| {
        fs::write(outside.join("state.json"), planted_state()).unwrap();
        link(
            env,
            ".claude/pagent-pipeline.json",
            outside.join("state.json"),
        );
    });
}

#[test]
fn links_swapped_in_after_the_users_own_loop_started_are_never_written_through() {
    let env = TestEnv::new();
    let outside = outside(&env);
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    // A `git pull` or a build script replaces the log with a link.
    link(&env, ".claude/pagent/events.jsonl", outside.join("bashrc"));
    let before = snapshot(&outside);
    let stop = env.stop(&env.stop_input("still working"));
    // The decision stands; only the log is refused, and the user is told.
    stop.blocked();
    assert!(stop.stderr.contains("symlink"), "{stop}");
    // Then the whole pagent folder.
    fs::remove_file(env.path(".claude/pagent/events.jsonl")).unwrap();
    fs::rename(env.path(".claude/pagent"), outside.join("moved")).unwrap();
    let before_moved = snapshot(&outside);
    link(&env, ".claude/pagent", outside.join("moved"));
    let stop = env.stop(&env.stop_input("still working"));
    assert!(stop.allowed_on_error().contains("symlink"), "{stop}");
    assert_eq!(before_moved, snapshot(&outside));
    let _ = before;
}

#[test]
fn a_prd_or_workflow_planted_as_a_link_out_of_the_project_is_not_read() {
    let env = TestEnv::new();
    let outside = outside(&env);
    fs::write(
        outside.join("flow.json"),
        r#"{"stages": [{"name": "x", "prompt": "p", "exit_when": {"file_exists": "a"}}]}"#,
    )
    .unwrap();
    link(&env, "prd.md", outside.join("bashrc"));
    let out = env.cmd(&["run", "prd.md"]).failure();
    let mut said = Said::new();
    said.say("pagent run prd.md", &out.stderr);
    env.write("real-prd.md", "# PRD\n");
    link(&env, "flows/flow.json", outside.join("flow.json"));
    let out = env
        .cmd(&["run", "real-prd.md", "--workflow", "flows/flow.json"])
        .failure();
    said.say(
        "pagent run real-prd.md --workflow flows/flow.json",
        &out.stderr,
    );
    assert!(!env.exists(".claude/pagent-pipeline.json"));
    assert_text!(said.text());
}

#[test]
fn a_planted_worktree_folder_or_link_is_never_reused() {
    let env = TestEnv::new();
    let other = TestEnv::new();
    env.write("a.txt", "a");
    crate::git::git(&env.root, &["add", "-A"]);
    crate::git::git(&env.root, &["commit", "-qm", "init"]);
    // A link to another repository where pagent would put the worktree.
    link(&env, ".pagent/worktrees/task", &other.root);
    let out = env
        .cmd(&[
            "loop",
            "--worktree",
            "task",
            "--command",
            "true",
            "ralph",
            "x",
        ])
        .failure();
    let mut said = Said::new();
    said.say("a link where the worktree goes", &out.stderr);
    assert!(
        !other.exists(".claude"),
        "nothing was written in the other repository"
    );
    // A plain folder that git never registered there.
    fs::remove_file(env.path(".pagent/worktrees/task")).unwrap();
    env.write(".pagent/worktrees/task/planted.txt", "x");
    let out = env
        .cmd(&[
            "loop",
            "--worktree",
            "task",
            "--command",
            "true",
            "ralph",
            "x",
        ])
        .failure();
    said.say("a planted folder where the worktree goes", &out.stderr);
    assert_text!(said.text());
    // Removed, the worktree is created and used.
    fs::remove_dir_all(env.path(".pagent/worktrees/task")).unwrap();
    env.cmd(&[
        "loop",
        "--worktree",
        "task",
        "--command",
        "cat >/dev/null; echo '<promise>DONE</promise>'",
        "ralph",
        "x",
    ])
    .success();
}

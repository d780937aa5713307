//! A cloned repository plants special files where pagent expects small ones (a FIFO, a
//! link to `/dev/zero` or `/dev/stdout`, a folder, a 2 GiB sparse file): no command may
//! hang, grow past a memory bound, or read one whole. Each run here is the real binary
//! under a time limit, its peak memory measured.

use std::fs;
use std::os::unix::fs::symlink;
use std::path::Path;

use serde_json::json;

use crate::hostile_repo::{HANG, MEMORY_KB};
use crate::util::{SESSION, TestEnv};
use pagent_door::testing;

/// The special things a repository can hold where pagent expects a small file.
#[derive(Debug, Clone, Copy)]
enum Special {
    Fifo,
    DevZero,
    DevStdout,
    Folder,
    Sparse,
}

const SPECIALS: [Special; 5] = [
    Special::Fifo,
    Special::DevZero,
    Special::DevStdout,
    Special::Folder,
    Special::Sparse,
];

fn plant(path: &Path, special: Special) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    let _ = fs::remove_file(path);
    match special {
        Special::Fifo => {
            testing::make_fifo(path, 0o644).unwrap();
        }
        Special::DevZero => symlink("/dev/zero", path).unwrap(),
        Special::DevStdout => symlink("/dev/stdout", path).unwrap(),
        Special::Folder => fs::create_dir_all(path).unwrap(),
        Special::Sparse => fs::File::create(path).unwrap().set_len(2 << 30).unwrap(),
    }
}

/// Runs `args` bounded; checks the limits and returns the run.
fn bounded(env: &TestEnv, args: &[&str], stdin: String) -> crate::util::Run {
    let done = env
        .cmd(args)
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .stdin(stdin)
        .run_bounded(HANG);
    assert!(
        done.max_rss_kb < crate::util::memory_limit_kb(MEMORY_KB),
        "{} KiB\n{}",
        done.max_rss_kb,
        done.run
    );
    done.run
}

#[test]
fn a_special_state_file_never_hangs_or_grows_any_command() {
    for special in SPECIALS {
        let env = TestEnv::new();
        plant(&env.path(".claude/pagent-pipeline.json"), special);
        let input = env.stop_input("working").to_string();
        let stop = bounded(&env, &["hook", "stop"], input.clone());
        stop.allowed_on_error();
        // Said once, then quiet.
        let again = bounded(&env, &["hook", "stop"], input);
        assert!(
            again.stderr.is_empty() && again.stdout.is_empty(),
            "{special:?}: {again}"
        );
        let edit = json!({"session_id": SESSION, "cwd": env.root, "tool_name": "Write",
            "tool_input": {"file_path": env.path("a.json")}});
        bounded(&env, &["hook", "post-tool-use"], edit.to_string());
        let status = bounded(&env, &["status"], String::new());
        let why = format!("{}{}", status.stdout, status.stderr);
        assert!(
            why.contains("not a regular file")
                || why.contains("is a folder")
                || why.contains("outside")
                || why.contains("larger than"),
            "{special:?}: {status}"
        );
        bounded(&env, &["cancel"], String::new());
        bounded(&env, &["log"], String::new());
    }
}

#[test]
fn a_special_condition_file_transcript_or_work_tree_file_never_hangs_a_stop() {
    for special in SPECIALS {
        // The file a stage counts lines of.
        let env = TestEnv::new();
        env.write("prd.md", "# PRD\n");
        env.cmd(&["run", "prd.md"])
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .success();
        plant(&env.path("architecture.md"), special);
        let stop = bounded(&env, &["hook", "stop"], env.stop_input("done").to_string());
        let reason = stop.blocked();
        assert!(reason.contains("architecture.md"), "{special:?}: {reason}");
        bounded(&env, &["status"], String::new());

        // The transcript, when the hook input has no last message.
        let env = TestEnv::new();
        env.cmd(&["ralph", "--no-progress-limit", "0", "Fix it"])
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .success();
        let transcript = env.home.join("planted-transcript");
        plant(&transcript, special);
        let input = json!({"session_id": SESSION, "cwd": env.root,
            "transcript_path": transcript, "hook_event_name": "Stop"});
        bounded(&env, &["hook", "stop"], input.to_string()).blocked();

        // An untracked file the no-progress fingerprint looks at.
        plant(&env.path("junk"), special);
        bounded(
            &env,
            &["hook", "stop"],
            env.stop_input("working").to_string(),
        )
        .blocked();
        bounded(
            &env,
            &["hook", "stop"],
            env.stop_input("working").to_string(),
        )
        .blocked();
    }
}

#[test]
fn a_special_project_config_or_workflow_is_refused_at_setup() {
    for special in SPECIALS {
        let env = TestEnv::new();
        env.write("prd.md", "# PRD\n");
        plant(&env.path(".claude/pagent/config.json"), special);
        let out = bounded(&env, &["ralph", "Fix it"], String::new());
        assert_eq!(out.code, Some(1), "{special:?}: {out}");
        assert!(out.stderr.contains("config.json"), "{special:?}: {out}");
        fs::remove_file(env.path(".claude/pagent/config.json"))
            .or_else(|_| fs::remove_dir(env.path(".claude/pagent/config.json")))
            .unwrap();
        plant(&env.path(".claude/pagent/workflows/flow.json"), special);
        let out = bounded(
            &env,
            &["run", "prd.md", "--workflow", "flow"],
            String::new(),
        );
        assert_eq!(out.code, Some(1), "{special:?}: {out}");
    }
}

#[test]
fn a_planted_dot_git_never_makes_a_hook_read_it_whole() {
    for special in SPECIALS {
        let env = TestEnv::plain();
        env.cmd(&["ralph", "--no-progress-limit", "0", "Fix it"])
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .success();
        plant(&env.path(".git"), special);
        bounded(
            &env,
            &["hook", "stop"],
            env.stop_input("working").to_string(),
        )
        .blocked();
        bounded(&env, &["status"], String::new());
        // A `.git` file naming a device as its git folder.
        let _ = fs::remove_file(env.path(".git")).or_else(|_| fs::remove_dir(env.path(".git")));
        env.write(".git", "gitdir: /dev/zero\n");
        bounded(
            &env,
            &["hook", "stop"],
            env.stop_input("working").to_string(),
        )
        .blocked();
    }
}

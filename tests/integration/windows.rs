//! The Windows binary against a hostile repository and through a whole Ralph loop (issue
//! 25). `scripts/test.sh` runs these under Wine with the cross-built `pagent.exe` as the
//! binary under test (`PAGENT_TEST_BIN`, a wrapper that runs it under Wine); they are
//! `#[ignore]`d in the plain run, whose binary is this system's. Junctions and NTFS
//! symbolic links cannot be made under Wine 8: the door's own tests
//! (`store/door/win/tests.rs`) prove them on NTFS on the release workflow's Windows
//! runner, and here `hostile_repo::` runs under Wine too, whose Unix symlinks Wine shows
//! as the files they lead to (the final-path check refuses them).

use std::time::{Duration, Instant};

use serde_json::json;

use crate::util::*;

/// Panics unless the binary under test is a Windows build: these tests mean nothing for
/// another.
fn windows_binary(env: &TestEnv) {
    let version = env.bin(&["--version"]).success().stdout;
    assert!(
        version.contains("windows"),
        "run with PAGENT_TEST_BIN naming a Windows build (scripts/test.sh does): {version}"
    );
}

fn workflow(env: &TestEnv, condition: serde_json::Value) {
    env.write("prd.md", "# PRD\n");
    env.write(
        "flow.json",
        &json!({"stages": [{"name": "a", "prompt": "p", "exit_when": condition}]}).to_string(),
    );
}

/// Issue 25: an NTFS alternate data stream name as a condition file is refused at setup,
/// and nothing is written (no hidden stream, no state).
#[test]
#[ignore = "the Windows binary's: scripts/test.sh runs it under Wine"]
fn windows_a_stream_name_as_a_condition_file_is_refused_at_setup() {
    let env = TestEnv::new();
    windows_binary(&env);
    env.write("notes.md", "visible\n");
    for name in ["notes.md:hidden", "notes.md::$DATA"] {
        workflow(&env, json!({"file_exists": name, "min_lines": 1}));
        let out = env
            .bin(&["run", "prd.md", "--workflow", "flow.json"])
            .failure();
        assert!(
            out.stderr.contains("not a file name pagent can use here"),
            "{name}: {out}"
        );
        assert!(!env.exists(".claude/pagent-pipeline.json"), "{name}");
    }
    assert_eq!(env.read("notes.md"), "visible\n");
}

/// Issue 25: reserved device names as condition files are refused at setup, at once
/// (`CON` opened for reading would wait for console input).
#[test]
#[ignore = "the Windows binary's: scripts/test.sh runs it under Wine"]
fn windows_device_names_as_condition_files_are_refused_at_setup() {
    let env = TestEnv::new();
    windows_binary(&env);
    for name in ["NUL", "CON", "con.txt", "COM1", "docs/aux.md", "notes.md."] {
        workflow(&env, json!({"file_exists": name}));
        let started = Instant::now();
        let out = env
            .bin(&["run", "prd.md", "--workflow", "flow.json"])
            .failure();
        assert!(started.elapsed() < Duration::from_secs(20), "{name}");
        assert!(
            out.stderr.contains("not a file name pagent can use here"),
            "{name}: {out}"
        );
        assert!(!env.exists(".claude/pagent-pipeline.json"), "{name}");
    }
}

/// Issue 25: a project folder that names a device (a hook's `CLAUDE_PROJECT_DIR` set to
/// `NUL`, `CON` or a pipe) never blocks the stop, never hangs and writes nothing.
#[test]
#[ignore = "the Windows binary's: scripts/test.sh runs it under Wine"]
fn windows_a_device_as_the_project_allows_the_stop() {
    let env = TestEnv::new();
    windows_binary(&env);
    for project in ["NUL", "CON", r"\\.\pipe\pagent-test", "COM1"] {
        let started = Instant::now();
        let run = env
            .bin(&["hook", "stop"])
            .env("CLAUDE_PROJECT_DIR", project)
            .stdin(env.stop_input("done").to_string())
            .run();
        assert!(started.elapsed() < Duration::from_secs(20), "{project}");
        assert_eq!(run.code, Some(0), "{project}: {run}");
        assert_eq!(run.allowed(), None, "{project}: {run}");
    }
}

/// Issue 25's acceptance, through the Windows binary: `--version`, a Stop with no state
/// (silent, exit 0), a Ralph loop that blocks until its promise and then completes,
/// `status`, and `cancel` of a second loop.
#[test]
#[ignore = "the Windows binary's: scripts/test.sh runs it under Wine"]
fn windows_a_ralph_loop_runs_from_start_to_cancel() {
    let env = TestEnv::new();
    windows_binary(&env);
    let quiet = env
        .bin(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root);
    let run = quiet.stdin(env.stop_input("done").to_string()).run();
    assert_eq!(
        (run.code, run.stdout.as_str(), run.stderr.as_str()),
        (Some(0), "", ""),
        "{run}"
    );

    env.bin(&["ralph", "--promise", "DONE", "Fix it"]).success();
    let reason = env.stop(&env.stop_input("First pass done.")).blocked();
    assert!(
        reason.starts_with("pagent · ralph loop · iteration 2 of 25\n"),
        "{reason}"
    );
    assert!(reason.ends_with("\n\nFix it"), "{reason}");
    let message = env
        .stop(&env.stop_input("Finished.\n<promise>DONE</promise>"))
        .allowed()
        .unwrap();
    assert!(message.contains("complete"), "{message}");
    let status: serde_json::Value =
        serde_json::from_str(&env.bin(&["status", "--json"]).success().stdout).unwrap();
    assert_eq!(
        (status["status"].as_str(), status["iterations"].as_u64()),
        (Some("complete"), Some(2))
    );

    env.bin(&["ralph", "Again"]).success();
    env.stop(&env.stop_input("working")).blocked();
    let out = env.bin(&["cancel"]).success();
    assert!(out.stdout.contains("cancel"), "{out}");
    assert_eq!(env.stop(&env.stop_input("working")).allowed(), None);
    let status: serde_json::Value =
        serde_json::from_str(&env.bin(&["status", "--json"]).success().stdout).unwrap();
    assert_eq!(status["status"], "cancelled");
}

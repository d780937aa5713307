//! The Windows binary against a hostile repository and through a whole Ralph loop (issue
//! 25). `scripts/test.sh` runs these under Wine with the cross-built `pagent.exe` as the
//! binary under test (`PAGENT_TEST_BIN`, a wrapper that runs it under Wine); they are
//! `#[ignore]`d in the plain run, whose binary is this system's. Junctions and NTFS
//! symbolic links cannot be made under Wine 8: the door's own tests
//! (`crates/door/src/files/win/tests.rs`) prove them on NTFS on the release workflow's Windows
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

/// Issue 25: a condition file that names a place outside the project the Windows way is
/// refused at setup, before anything is opened: `..` with backslashes, a drive path, a
/// drive-relative one (`C:file`), a UNC share (which Windows would reach over the network,
/// offering the user's credentials), a device or verbatim path, and this machine's own
/// path to a file outside the project.
#[test]
#[ignore = "the Windows binary's: scripts/test.sh runs it under Wine"]
fn windows_paths_out_of_the_project_as_condition_files_are_refused_at_setup() {
    let env = TestEnv::new();
    windows_binary(&env);
    let secret = env.home.join("secret.txt");
    std::fs::write(&secret, "secret\n").unwrap();
    let own_path = format!("Z:{}", secret.display()).replace('/', "\\");
    for name in [
        r"..\home\secret.txt",
        r"sub\..\..\home\secret.txt",
        r"C:\windows\win.ini",
        r"C:secret.txt",
        r"\\attacker.invalid\share\notes.md",
        r"\\?\C:\windows\win.ini",
        r"\\.\pipe\pagent-test",
        own_path.as_str(),
    ] {
        workflow(&env, json!({"file_exists": name, "min_lines": 1}));
        let started = Instant::now();
        let out = env
            .bin(&["run", "prd.md", "--workflow", "flow.json"])
            .failure();
        assert!(started.elapsed() < Duration::from_secs(20), "{name}");
        assert!(
            out.stderr.contains("is absolute") || out.stderr.contains("leaves the project root"),
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
    // The loop's session is told once, at its next stop, that the loop ended (issue 20).
    let told = env.stop(&env.stop_input("working")).allowed().unwrap();
    assert!(
        told.contains("was cancelled from a terminal (`pagent cancel`). Claude may stop."),
        "{told}"
    );
    assert_eq!(env.stop(&env.stop_input("working")).allowed(), None);
    let status: serde_json::Value =
        serde_json::from_str(&env.bin(&["status", "--json"]).success().stdout).unwrap();
    assert_eq!(status["status"], "cancelled");
}

/// Issue 25: every hook runs with no shell on Windows. Each is in exec form (`"args"`) and
/// names `${CLAUDE_PLUGIN_ROOT}/scripts/pagent`, the one name Claude Code's Windows builds
/// start as the `scripts\pagent.exe` that `pagent install` stages beside the launcher
/// (a shell form would need Git Bash and a quoted backslash root; a `.cmd` is never
/// started): observed with 2.1.197 and 2.1.330, and run through 2.1.330 under Wine by
/// `tests/e2e/installed.rs` under Wine. On Linux and macOS the same name is the launcher.
#[test]
fn windows_every_hook_starts_the_staged_binary_with_no_shell() {
    let repo = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    assert!(repo.join("scripts/pagent").is_file());
    let hooks: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(repo.join("hooks/hooks.json")).unwrap())
            .unwrap();
    let mut seen = Vec::new();
    for (event, groups) in hooks["hooks"].as_object().unwrap() {
        for hook in groups
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|g| g["hooks"].as_array().unwrap())
        {
            assert_eq!(hook["type"], "command", "{event}");
            assert_eq!(
                hook["command"], "${CLAUDE_PLUGIN_ROOT}/scripts/pagent",
                "{event}: the staged pagent.exe is found only by this name"
            );
            let args = hook["args"]
                .as_array()
                .unwrap_or_else(|| panic!("{event}: a shell-form hook needs Git Bash on Windows"));
            assert_eq!(args[0], "hook", "{event}");
            assert!(hook.get("shell").is_none(), "{event}");
            seen.push(event.clone());
        }
    }
    assert!(seen.iter().any(|e| e == "Stop"), "{seen:?}");
}

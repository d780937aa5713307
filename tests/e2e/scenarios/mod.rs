//! The user-facing flows of pagent, each driven to its end through the real CLI: Ralph
//! loops in [`ralph`], pipelines and checks in [`pipeline`], `pagent loop` and the
//! parallel plan in [`loops`]; here, the plugin itself (it validates and loads, its
//! commands run the binary, a session without the binary ends normally, an install from
//! a local marketplace works without --plugin-dir).

use std::path::PathBuf;
use std::process::Command;

use serde_json::json;

use crate::harness::{E2e, claude_agent_args, claude_binary, pinned, pinned_claude, repo_root};
use crate::mock::Reply;

mod cap;
mod loops;
mod pipeline;
mod ralph;

const STOP_FEEDBACK: &str = "Stop hook feedback:\n";

/// Issue 30, point 6: `claude plugin validate --strict` accepts the plugin (the repository
/// as a marketplace, and its manifest) on both ends of the client matrix, whichever one
/// the suite runs on, and on the CLI under test if it is a third.
#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn issue_30_6_plugin_validate_strict_passes_on_both_pinned_claude_code_versions() {
    let mut clients: Vec<PathBuf> = ["CLAUDE_CODE_OLDEST", "CLAUDE_CODE_NEWEST"]
        .iter()
        .map(|name| pinned_claude(&pinned(name)))
        .collect();
    let same = |a: &PathBuf, b: &PathBuf| a.canonicalize().ok() == b.canonicalize().ok();
    if !clients.iter().any(|c| same(c, &claude_binary())) {
        clients.push(claude_binary());
    }
    for claude in &clients {
        let home = tempfile::tempdir().unwrap();
        for target in [repo_root(), repo_root().join(".claude-plugin/plugin.json")] {
            let out = Command::new(claude)
                .args(["plugin", "validate", "--strict"])
                .arg(&target)
                .env("HOME", home.path())
                .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
                .env("DISABLE_AUTOUPDATER", "1")
                .env_remove("CLAUDE_CONFIG_DIR")
                .output()
                .unwrap();
            let said = format!(
                "{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
            assert!(
                out.status.success() && said.contains("Validation passed"),
                "{} plugin validate --strict {}: {said}",
                claude.display(),
                target.display(),
            );
        }
    }
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn plugin_loads_with_its_commands_and_agent() {
    let e2e = E2e::start(vec![Reply::text("Hello.")]);
    let run = e2e.claude("Say hello").run();
    assert_eq!(run.code, Some(0));
    let init = run.init();
    let plugins: Vec<&str> = init["plugins"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["name"].as_str())
        .collect();
    assert!(plugins.contains(&"pagent"), "{plugins:?}");
    let commands: Vec<&str> = init["slash_commands"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c.as_str())
        .collect();
    for command in [
        "pagent:run",
        "pagent:status",
        "pagent:cancel",
        "pagent:ralph",
        "pagent:ralph-cancel",
        "pagent:parallel",
        "pagent:resume",
    ] {
        assert!(
            commands.contains(&command),
            "{command} missing from {commands:?}"
        );
    }
    let agents = init["agents"].to_string();
    assert!(agents.contains("ralph-worker"), "{agents}");
    // No loop: the Stop hook ran and allowed silently.
    assert_eq!(run.stop_hook_outputs(), [serde_json::Value::Null]);
    assert_eq!(e2e.mock.requests().len(), 1);
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn the_cancel_and_status_commands_run_the_binary() {
    // A loop of another session, inspected from a new session and cancelled there: pagent
    // answers both on its own (item 1), the model is never asked, and the other session's
    // loop is not ended from here (issue 30, §4 d) but from a terminal.
    let e2e = E2e::start(vec![]);
    let out = e2e.pagent_as(Some("first-session"), &["ralph", "Some task"]);
    assert!(out.status.success(), "{out:?}");
    let run = e2e.claude("/pagent:status").run();
    assert_eq!(run.code, Some(0));
    let result = run.result()["result"].as_str().unwrap().to_owned();
    assert!(
        result.starts_with("UserPromptExpansion operation blocked by hook:\npagent ralph loop · active · 1 iteration"),
        "{result}"
    );
    let run = e2e.claude("/pagent:ralph-cancel").run();
    assert_eq!(run.code, Some(0));
    let result = run.result()["result"].as_str().unwrap().to_owned();
    assert!(
        result.contains(
            "pagent: the Ralph loop belongs to another Claude Code session (first-session), so \
             it was not cancelled from here: type /pagent:cancel in that session, or run \
             `pagent cancel` in a terminal to end it anyway."
        ),
        "{result}"
    );
    assert_eq!(e2e.status()["status"], "active");
    let out = e2e.pagent(&["cancel"]);
    assert!(
        String::from_utf8_lossy(&out.stdout).starts_with("pagent: cancelled the Ralph loop"),
        "{out:?}"
    );
    assert_eq!(e2e.status()["status"], "cancelled");
    assert_eq!(e2e.mock.requests().len(), 0);
}

/// Without the binary: a pagent command is answered by the plugin itself with the command
/// that installs it (issue 34), the model never asked; any other prompt goes on as usual,
/// every hook allowing, with one line on the hook's stderr.
#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn without_the_binary_the_session_ends_normally_and_says_so() {
    let e2e = E2e::start(vec![Reply::text("Nothing to do.")]);
    let plugin = e2e.home.join("plugin-copy");
    crate::harness::stage_plugin(&plugin);
    let run = e2e
        .claude("/pagent:ralph Some task")
        .plugin_dir(Some(plugin.clone()))
        .env_remove("PAGENT_BIN")
        .env("PATH", "/usr/bin:/bin")
        .run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 0);
    let result = run.result()["result"].as_str().unwrap().to_owned();
    assert!(
        result.starts_with(
            "UserPromptExpansion operation blocked by hook:\npagent: the pagent binary is not \
             installed, so nothing was done: run `npx pagent install` in a terminal"
        ),
        "{result}"
    );
    let run = e2e
        .claude("Say hello")
        .plugin_dir(Some(plugin))
        .env_remove("PAGENT_BIN")
        .env("PATH", "/usr/bin:/bin")
        .run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 1);
    let stop = run.hook_responses("Stop");
    assert_eq!(stop.len(), 1);
    let stderr = stop[0]["stderr"].as_str().unwrap();
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("pagent: the pagent binary is not installed"),
        "{stderr}"
    );
    assert_eq!(stop[0]["exit_code"], 0);
    assert!(!e2e.path(".claude/pagent-pipeline.json").exists());
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn installed_from_a_local_marketplace_the_hook_fires_without_plugin_dir() {
    let e2e = E2e::start(vec![Reply::text("One."), Reply::text("Two.")]);
    let market = e2e.home.join("market");
    crate::harness::stage_plugin(&market);
    for args in [
        vec!["plugin", "marketplace", "add", market.to_str().unwrap()],
        vec!["plugin", "install", "pagent@pagent"],
    ] {
        let out = Command::new(claude_binary())
            .args(&args)
            .env("HOME", &e2e.home)
            .env_remove("CLAUDE_CONFIG_DIR")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{args:?}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
    }
    // As scripts/install.sh does: the binary in the plugin's data folder.
    let data_bin = e2e
        .home
        .join(".claude/plugins/data/pagent-pagent/bin/pagent");
    std::fs::create_dir_all(data_bin.parent().unwrap()).unwrap();
    std::fs::copy(crate::harness::pagent_bin(), &data_bin).unwrap();

    let run = e2e
        .claude("/pagent:ralph Task --max-iterations 2")
        .plugin_dir(None)
        .env_remove("PAGENT_BIN")
        .env("PATH", "/usr/bin:/bin")
        .run();
    assert_eq!(run.code, Some(0));
    let plugins = run.init()["plugins"].to_string();
    assert!(plugins.contains("pagent"), "{plugins}");
    assert_eq!(e2e.mock.requests().len(), 2);
    assert!(
        e2e.mock
            .stop_feedback(1)
            .starts_with("pagent · ralph loop · iteration 2 of 2")
    );
    assert_eq!(e2e.status()["status"], "gave_up");
}

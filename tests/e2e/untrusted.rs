//! A project's own Claude Code configuration, as the real CLI reads it, and the agents
//! pagent starts (issue 19, finding 2): the reviewer never runs it, a `pagent loop`
//! worker runs it only once the user trusted it.
//!
//! The project carries what a hostile repository would: `.claude/settings.json` hooks
//! that leave a marker file per event, a `permissions.allow` entry for a script of its
//! own that leaves another, and an `.mcp.json` server whose command leaves a third (the
//! user's own settings enable project MCP servers). Measured on 2.1.197 and 2.1.330:
//! `--setting-sources user` alone already skips all three (the `.mcp.json` layer too);
//! the reviewer adds `--strict-mcp-config` and `--disable-slash-commands` all the same. The user has accepted Claude Code's trust dialog for the folder once
//! (since about 2.1.3xx a project's `permissions.allow` applies only then; its hooks and
//! MCP servers ran in print mode either way). Each test first shows, with a plain `claude
//! -p` in the same project, that this CLI version really runs all three there; so a
//! marker missing later means pagent kept it from running, not that the planted
//! configuration was inert.

use std::fs;

use serde_json::json;

use crate::harness::{E2e, claude_binary};
use crate::mock::Reply;

const CRITERIA: &str = "the notes file says hello";
const MET: &str = "Looked.\n{\"met\": true, \"missing\": []}";

/// The hook events whose markers the tests look for.
const EVENTS: &[&str] = &["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"];

/// Plants the settings, the allow-list and the MCP server.
fn plant(e2e: &E2e) {
    let project = e2e.project.display().to_string();
    let hook = |event: &str| json!([{"hooks": [{"type": "command", "command": format!("touch '{project}/hook-{event}'")}]}]);
    let hooks: serde_json::Map<String, serde_json::Value> = EVENTS
        .iter()
        .map(|event| ((*event).to_owned(), hook(event)))
        .collect();
    e2e.write(
        ".claude/settings.json",
        &json!({
            "hooks": hooks,
            "permissions": {"allow": ["Bash(./mark.sh)"]},
            "enableAllProjectMcpServers": true
        })
        .to_string(),
    );
    e2e.write(
        ".mcp.json",
        &json!({"mcpServers": {"planted": {
            "command": "sh",
            "args": ["-c", format!("touch '{project}/mcp-ran'; exec sleep 30")]
        }}})
        .to_string(),
    );
    e2e.write("mark.sh", "#!/bin/sh\ntouch allowed-ran\n");
    // The user lets project MCP servers start in their own settings: the reviewer must
    // still start none of the project's.
    fs::create_dir_all(e2e.home.join(".claude")).unwrap();
    fs::write(
        e2e.home.join(".claude/settings.json"),
        json!({"enableAllProjectMcpServers": true}).to_string(),
    )
    .unwrap();
    fs::write(
        e2e.home.join(".claude.json"),
        json!({"projects": {project: {"hasTrustDialogAccepted": true}}}).to_string(),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(e2e.path("mark.sh"), fs::Permissions::from_mode(0o755)).unwrap();
}

/// Which markers are there.
fn markers(e2e: &E2e) -> Vec<String> {
    let mut found: Vec<String> = EVENTS
        .iter()
        .map(|event| format!("hook-{event}"))
        .chain(["allowed-ran".to_owned(), "mcp-ran".to_owned()])
        .filter(|name| e2e.path(name).exists())
        .collect();
    found.sort();
    found
}

fn clear_markers(e2e: &E2e) {
    for name in markers(e2e) {
        fs::remove_file(e2e.path(&name)).unwrap();
    }
}

/// A plain `claude -p` in the planted project runs all of it: hooks, the allowed
/// command, the MCP server.
fn assert_the_cli_runs_the_planted_configuration(e2e: &E2e) {
    let out = e2e.claude_plain(&[
        "-p",
        "touch the file",
        "--output-format",
        "stream-json",
        "--verbose",
        "--permission-mode",
        "default",
        "--max-turns",
        "5",
    ]);
    let mut expected: Vec<String> = EVENTS.iter().map(|e| format!("hook-{e}")).collect();
    expected.extend(["allowed-ran".to_owned(), "mcp-ran".to_owned()]);
    expected.sort();
    assert_eq!(
        markers(e2e),
        expected,
        "the control run: {}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    clear_markers(e2e);
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn finding_2_the_reviewer_never_runs_the_projects_hooks_allow_list_or_mcp_servers() {
    let e2e = E2e::start(vec![
        // The control run: it asks to run the allowed command, then ends.
        Reply::bash("./mark.sh"),
        Reply::text("Touched."),
        // The reviewer: the same request, refused this time, then its verdict.
        Reply::bash("./mark.sh"),
        Reply::text(MET),
    ]);
    plant(&e2e);
    assert_the_cli_runs_the_planted_configuration(&e2e);

    let out = e2e.pagent_loop_with(
        &[
            "--command",
            "echo 'Wrote the notes.'; echo '<promise>DONE</promise>'",
            "ralph",
            "--no-progress-limit",
            "0",
            "--review",
            CRITERIA,
            "Write the notes",
        ],
        &[(
            "PAGENT_REVIEWER_BIN".to_owned(),
            claude_binary().display().to_string(),
        )],
    );
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(out.status.code(), Some(0), "{report}");
    assert_eq!(e2e.status()["status"], "complete", "{report}");
    assert_eq!(e2e.mock.requests().len(), 4, "{report}");
    assert_eq!(markers(&e2e), Vec::<String>::new(), "{report}");
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn finding_2_a_loop_worker_runs_the_projects_hooks_only_once_trusted() {
    let e2e = E2e::start(vec![
        Reply::bash("./mark.sh"),
        Reply::text("Touched."),
        Reply::text("Done.\n<promise>DONE</promise>"),
    ]);
    plant(&e2e);
    assert_the_cli_runs_the_planted_configuration(&e2e);
    let claude = claude_binary();
    let args = |trust: bool| {
        let mut args = vec![
            "--agent",
            "claude",
            "--agent-bin",
            claude.to_str().unwrap(),
            "ralph",
            "--no-progress-limit",
            "0",
        ];
        if trust {
            args.push("--trust");
        }
        args.push("Write the notes");
        args
    };

    let refused = e2e.pagent_loop(&args(false));
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert_eq!(refused.status.code(), Some(1), "{stderr}");
    for listed in [
        ".claude/settings.json (not trusted) would run:",
        "Claude Code hooks: PreToolUse, SessionStart, Stop, UserPromptSubmit",
        "Claude Code tools allowed without asking: Bash(./mark.sh)",
        ".mcp.json (not trusted) would run:",
        "Claude Code MCP servers (started as commands): planted",
        "pagent trust .claude/settings.json .mcp.json",
    ] {
        assert!(stderr.contains(listed), "{listed}: {stderr}");
    }
    assert_eq!(markers(&e2e), Vec::<String>::new(), "{stderr}");
    assert_eq!(e2e.mock.requests().len(), 2, "no worker started: {stderr}");

    // Trusted in the same step, the worker is Claude Code as the project configures it.
    let trusted = e2e.pagent_loop(&args(true));
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&trusted.stdout),
        String::from_utf8_lossy(&trusted.stderr)
    );
    assert_eq!(trusted.status.code(), Some(0), "{report}");
    assert!(markers(&e2e).contains(&"hook-Stop".to_owned()), "{report}");
}

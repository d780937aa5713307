//! Codex's and OpenCode's project configuration, as the real CLIs read it, and the agents
//! pagent starts (issue 19, finding 2): the reviewer never reads it, a `pagent loop`
//! worker only once the user trusted it.
//!
//! Codex: a `.codex/config.toml` that starts an MCP server leaving a marker; the user has
//! marked the project trusted in their own Codex config (Codex 0.169 loads a project's
//! layer only then). The reviewer marks the project untrusted for its run. OpenCode: a
//! plugin in `.opencode/plugin/` that leaves a marker when it loads. OpenCode 1.18.33
//! loads it even with `OPENCODE_DISABLE_PROJECT_CONFIG=1`, so an OpenCode reviewer does
//! not start in such a project until the user trusts that configuration. Each test first
//! shows with a plain run of the CLI in the project that this version really runs the
//! planted configuration.

use std::fs;

use serde_json::json;

use super::Agent;
use crate::harness::E2e;
use crate::mock::Reply;

const MET: &str = "Looked.\n{\"met\": true, \"missing\": []}";
const MARKER: &str = "project-config-ran";

/// Plants `agent`'s project configuration, which leaves [`MARKER`] when it runs.
fn plant(e2e: &E2e, agent: Agent) {
    let marker = e2e.path(MARKER).display().to_string();
    match agent {
        Agent::Codex => {
            e2e.write(
                ".codex/config.toml",
                &format!(
                    "[mcp_servers.planted]\ncommand = \"sh\"\nargs = [\"-c\", \"touch '{marker}'; exec sleep 30\"]\n"
                ),
            );
            // The user trusted the folder in Codex once: its project layer is read.
            let config = e2e.home.join(".codex/config.toml");
            let Ok(mut text) = fs::read_to_string(&config) else {
                return;
            };
            text.push_str(&format!(
                "\n[projects.\"{}\"]\ntrust_level = \"trusted\"\n",
                e2e.project.display()
            ));
            fs::write(config, text).unwrap();
        }
        Agent::Opencode => {
            e2e.write(
                ".opencode/plugin/planted.js",
                &format!(
                    "require('fs').writeFileSync({}, '');\nexport const Planted = async () => ({{}});\n",
                    json!(marker)
                ),
            );
            e2e.write(
                "opencode.json",
                "{\"$schema\": \"https://opencode.ai/config.json\"}\n",
            );
        }
    }
}

/// A plain run of the CLI in the project, as its user would start it.
fn control_run(e2e: &E2e, agent: Agent, env: &[(String, String)]) -> String {
    let mut command = std::process::Command::new(agent.binary());
    match agent {
        Agent::Codex => command.args(["exec", "--json", "look around"]),
        Agent::Opencode => command.args(["run", "--format", "json", "look around"]),
    };
    command
        .current_dir(&e2e.project)
        .env("HOME", &e2e.home)
        .env("PWD", &e2e.project)
        .stdin(std::process::Stdio::null());
    for (key, value) in env {
        command.env(key, value);
    }
    let out = command.output().unwrap();
    format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn the_reviewer_never_reads_the_projects_config(agent: Agent) {
    let e2e = E2e::start(match agent {
        Agent::Codex => vec![Reply::text("Looked around."), Reply::text(MET)],
        // The control run (and its session title); the reviewer never asks.
        Agent::Opencode => vec![Reply::text("Looked around."), Reply::text("title")],
    });
    let mut env = agent.offline(&e2e);
    plant(&e2e, agent);
    let control = control_run(&e2e, agent, &env);
    assert!(e2e.path(MARKER).exists(), "the control run: {control}");
    fs::remove_file(e2e.path(MARKER)).unwrap();

    env.push((
        "PAGENT_REVIEWER_BIN".to_owned(),
        agent.binary().display().to_string(),
    ));
    let out = e2e.pagent_loop_with(
        &[
            "--command",
            "echo '<promise>DONE</promise>'",
            "ralph",
            "--no-progress-limit",
            "0",
            "--max-iterations",
            "1",
            "--review",
            "the notes are written",
            "--reviewer",
            agent.name(),
            "Write the notes",
        ],
        &env,
    );
    let report = format!(
        "{}\n{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(!e2e.path(MARKER).exists(), "the reviewer ran it: {report}");
    let review = e2e.status()["review"].clone();
    match agent {
        // Codex reviews, with the user's configuration only.
        Agent::Codex => {
            assert_eq!(out.status.code(), Some(0), "{report}");
            assert_eq!(review["met"], true, "{report}");
        }
        // OpenCode is not started: the loop is told why and gives up at its limit.
        Agent::Opencode => {
            assert_eq!(out.status.code(), Some(3), "{report}");
            let detail = review["detail"].as_str().unwrap_or_default();
            assert!(
                detail.contains(
                    "OpenCode configuration you have not trusted (opencode.json, .opencode)"
                ),
                "{review}\n{report}"
            );
        }
    }
}

fn a_worker_needs_the_projects_config_trusted(agent: Agent) {
    let e2e = E2e::start(vec![Reply::text("Done.\n<promise>DONE</promise>")]);
    plant(&e2e, agent);
    let (code, _, report) = agent.pagent_loop(&e2e, &["ralph", "Write the notes"]);
    assert_eq!(code, Some(1), "{report}");
    let listed = match agent {
        Agent::Codex => ".codex (not trusted) would run:",
        Agent::Opencode => "opencode.json (not trusted) would run:",
    };
    assert!(report.contains(listed), "{report}");
    assert!(!e2e.path(MARKER).exists(), "{report}");
    assert!(e2e.mock.requests().is_empty(), "{report}");
}

#[test]
#[ignore = "end-to-end: needs the Codex CLI (scripts/test.sh runs it)"]
fn codex_finding_2_the_reviewer_never_reads_the_projects_config() {
    the_reviewer_never_reads_the_projects_config(Agent::Codex);
}

#[test]
#[ignore = "end-to-end: needs the OpenCode CLI (scripts/test.sh runs it)"]
fn opencode_finding_2_the_reviewer_never_reads_the_projects_config() {
    the_reviewer_never_reads_the_projects_config(Agent::Opencode);
}

#[test]
#[ignore = "end-to-end: needs the Codex CLI (scripts/test.sh runs it)"]
fn codex_finding_2_a_worker_needs_the_projects_config_trusted() {
    a_worker_needs_the_projects_config_trusted(Agent::Codex);
}

#[test]
#[ignore = "end-to-end: needs the OpenCode CLI (scripts/test.sh runs it)"]
fn opencode_finding_2_a_worker_needs_the_projects_config_trusted() {
    a_worker_needs_the_projects_config_trusted(Agent::Opencode);
}

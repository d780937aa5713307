//! `pagent loop --agent codex` and `--agent opencode` with the real CLIs (Codex 0.171.0 and
//! OpenCode 1.18.33, pinned in scripts/clients.sh and installed into target/clients/ by
//! scripts/install-client.sh) against the mock: the Responses API for Codex, chat
//! completions for OpenCode.
//!
//! Each runs offline: a scratch HOME (and CODEX_HOME, XDG folders) whose config names the
//! mock as the only provider and turns off everything that would reach a network (Codex:
//! analytics, feedback, plugins, update checks; OpenCode: `OPENCODE_PURE`, model list
//! fetches, auto-update, default plugins, LSP downloads, sharing). docs/testing.md says how this
//! was checked with strace.

use std::fs;
use std::path::{Path, PathBuf};

use serde_json::{Value, json};

use crate::harness::{E2e, pinned, repo_root};
use crate::mock::Reply;

mod sandbox;
mod untrusted;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Agent {
    Codex,
    Opencode,
}

impl Agent {
    fn name(self) -> &'static str {
        match self {
            Agent::Codex => "codex",
            Agent::Opencode => "opencode",
        }
    }

    /// `$PAGENT_CODEX` / `$PAGENT_OPENCODE` (scripts/test.sh sets them), else the npm
    /// entry of the pinned install.
    fn binary(self) -> PathBuf {
        let (var, version) = match self {
            Agent::Codex => ("PAGENT_CODEX", pinned("CODEX_VERSION")),
            Agent::Opencode => ("PAGENT_OPENCODE", pinned("OPENCODE_VERSION")),
        };
        let path = std::env::var_os(var).map(PathBuf::from).unwrap_or_else(|| {
            repo_root().join(format!(
                "target/clients/{}-{version}/node_modules/.bin/{}",
                self.name(),
                self.name()
            ))
        });
        assert!(
            path.exists(),
            "{} is not installed at {}: run scripts/install-client.sh {} (scripts/test.sh does)",
            self.name(),
            path.display(),
            self.name()
        );
        path
    }

    /// A tool call that writes `content` to `rel` in the project, as this agent's model
    /// would ask for it: Codex's `exec_command`, OpenCode's `write`.
    fn write(self, rel: &str, content: &str) -> Reply {
        match self {
            Agent::Codex => Reply::Tool {
                text: None,
                name: "exec_command".into(),
                input: json!({"cmd": format!("printf '%s' '{content}' > {rel}")}),
            },
            Agent::Opencode => Reply::Tool {
                text: None,
                name: "write".into(),
                input: json!({"filePath": rel, "content": content}),
            },
        }
    }

    /// A shell command as this agent's model would ask for it: Codex's `exec_command`,
    /// OpenCode's `bash`.
    fn shell(self, command: &str) -> Reply {
        match self {
            Agent::Codex => Reply::Tool {
                text: None,
                name: "exec_command".into(),
                input: json!({"cmd": command}),
            },
            Agent::Opencode => Reply::Tool {
                text: None,
                name: "bash".into(),
                input: json!({"command": command, "description": "run a command"}),
            },
        }
    }

    /// An API error the agent gives up on at once, so that pagent retries it: a 500 for
    /// Codex (its own retries are off in the config); a 400 for OpenCode, which retries a
    /// 500 by itself for about 70 s first.
    fn api_error(self) -> Reply {
        match self {
            Agent::Codex => Reply::Error(500),
            Agent::Opencode => Reply::Error(400),
        }
    }

    /// Writes the agent's offline config under the e2e HOME; the environment it needs.
    fn offline(self, e2e: &E2e) -> Vec<(String, String)> {
        let home = &e2e.home;
        let base = format!("{}/v1", e2e.mock.base_url());
        // Any package install an agent attempts goes to the mock, which refuses it: OpenCode
        // 1.18.33 installs packages into its config folder on start, OPENCODE_PURE or not.
        let registry = format!("{}/npm/", e2e.mock.base_url());
        let mut env = vec![
            ("MOCK_API_KEY".to_owned(), "sk-test".to_owned()),
            ("NPM_CONFIG_REGISTRY".to_owned(), registry.clone()),
            ("BUN_CONFIG_REGISTRY".to_owned(), registry),
        ];
        match self {
            Agent::Codex => env.extend(codex_offline(home, &base)),
            Agent::Opencode => env.extend(opencode_offline(home, &base)),
        }
        env
    }

    /// `pagent loop --json --agent NAME ARGS...` in the project, offline; the exit code
    /// and the events it printed.
    fn pagent_loop(self, e2e: &E2e, args: &[&str]) -> (Option<i32>, Vec<Value>, String) {
        let binary = self.binary();
        let mut all = vec![
            "--json",
            "--agent",
            self.name(),
            "--agent-bin",
            binary.to_str().unwrap(),
            "--retry-delay",
            "1s",
            "--iteration-timeout",
            "2m",
        ];
        all.extend_from_slice(args);
        let out = e2e.pagent_loop_with(&all, &self.offline(e2e));
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        let events = stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|_| panic!("not JSON: {l}")))
            .collect();
        let report = format!(
            "{stdout}\n--- stderr ---\n{}\n--- runs ---\n{}",
            String::from_utf8_lossy(&out.stderr),
            run_logs(e2e)
        );
        (out.status.code(), events, report)
    }
}

/// With `PAGENT_E2E_RECORD=DIR`, each agent run's stdout (its JSON stream, stderr lines
/// left out) is copied to `DIR/<scenario>-<log name>.jsonl`, temp paths rewritten to
/// `/home/user/...`: how the real streams in `tests/fixtures/agents/` were recorded.
fn record(e2e: &E2e, scenario: &str) {
    let Some(dir) = std::env::var_os("PAGENT_E2E_RECORD").map(PathBuf::from) else {
        return;
    };
    fs::create_dir_all(&dir).unwrap();
    let runs = e2e.path(".claude/pagent/runs");
    for entry in fs::read_dir(&runs).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_none_or(|x| x != "log") {
            continue;
        }
        let stream: String = fs::read_to_string(&path)
            .unwrap()
            .lines()
            .filter(|l| !l.starts_with("[stderr] "))
            .map(|l| format!("{l}\n"))
            .collect();
        let stream = stream
            .replace(&e2e.project.display().to_string(), "/home/user/project")
            .replace(&e2e.home.display().to_string(), "/home/user");
        // The run id (a timestamp) is left out of the name.
        let name = path.file_stem().unwrap().to_string_lossy().into_owned();
        let name = name.split_once('-').map_or(name.as_str(), |(_, rest)| rest);
        fs::write(dir.join(format!("{scenario}-{name}.jsonl")), stream).unwrap();
    }
}

/// Every agent log of the loop, for a failure's report.
fn run_logs(e2e: &E2e) -> String {
    let Ok(entries) = fs::read_dir(e2e.path(".claude/pagent/runs")) else {
        return String::new();
    };
    let mut paths: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    paths.sort();
    paths
        .iter()
        .filter(|p| p.extension().is_some_and(|x| x == "log"))
        .map(|p| format!("== {}\n{}", p.display(), fs::read_to_string(p).unwrap()))
        .collect()
}

fn of<'a>(events: &'a [Value], name: &str) -> Vec<&'a Value> {
    events.iter().filter(|e| e["event"] == name).collect()
}

/// A tool call on iteration 1, an API error on iteration 2 that pagent retries without
/// counting, and the promise on iteration 3.
fn ralph_reaches_the_promise_on_iteration_three(agent: Agent) {
    let e2e = E2e::start(vec![
        agent.write("one.txt", "one"),
        Reply::text("Wrote one.txt."),
        agent.api_error(),
        Reply::text("Still working."),
        Reply::text("All done.\n<promise>DONE</promise>"),
    ]);
    let (code, events, report) = agent.pagent_loop(
        &e2e,
        &["ralph", "--no-progress-limit", "0", "Write one.txt"],
    );
    record(&e2e, &format!("{}-ralph", agent.name()));
    assert_eq!(code, Some(0), "{report}");
    assert_eq!(fs::read_to_string(e2e.path("one.txt")).unwrap(), "one");
    let status = e2e.status();
    assert_eq!(
        (status["status"].as_str(), status["iterations"].as_u64()),
        (Some("complete"), Some(3)),
        "{report}"
    );
    assert_eq!(
        e2e.actions(),
        ["ralph", "block", "retry", "block", "complete"],
        "{report}"
    );
    // One tool event for the one call (Codex reports it started and completed), one retry,
    // and a last event that says how the loop ended.
    assert_eq!(of(&events, "tool").len(), 1, "{report}");
    assert_eq!(of(&events, "retry").len(), 1, "{report}");
    // Issue 30, §2: classified as the agent reported it: Codex's 500 is the service's
    // outage; OpenCode's 400 (a request it will not retry) an agent error.
    let class = match agent {
        Agent::Codex => "outage",
        Agent::Opencode => "crash",
    };
    assert_eq!(of(&events, "retry")[0]["failure"], class, "{report}");
    if agent == Agent::Codex {
        // "Model metadata for `mock-model` not found", once in each of the 4 runs: a warning, not an
        // error, and no reason to retry.
        let warnings = of(&events, "warning");
        assert_eq!(warnings.len(), 4, "{report}");
        assert!(
            warnings[0]["text"]
                .as_str()
                .unwrap()
                .starts_with("Model metadata for `mock-model` not found"),
            "{report}"
        );
    }
    let last = events.last().unwrap();
    assert_eq!(
        (last["event"].as_str(), last["outcome"].as_str()),
        (Some("finished"), Some("complete")),
        "{report}"
    );
    // What the model was sent: each iteration's prompt, the retry with the same one.
    let requests = e2e.mock.requests();
    assert_eq!(requests.len(), 5, "{report}");
    for (index, iteration) in [(0, 1), (1, 1), (2, 2), (3, 2), (4, 3)] {
        let sent = requests[index].to_string();
        assert!(
            sent.contains(&format!(
                "pagent · ralph loop · iteration {iteration} of 25"
            )),
            "request {index}: {sent}"
        );
        assert!(sent.contains("Write one.txt"), "request {index}: {sent}");
    }
}

/// A two-stage pipeline: the first stage's file written by a tool call, the second
/// stage's promise.
fn a_pipeline_stage_advances_on_its_file(agent: Agent) {
    let e2e = E2e::start(vec![
        agent.write("design.md", "# Design\nOne part.\nAnother part.\n"),
        Reply::text("Design written."),
        Reply::text("Checked against the PRD.\n<promise>DONE</promise>"),
    ]);
    e2e.write("prd.md", "# PRD\nA tiny tool.\n");
    e2e.write(
        ".claude/pagent/workflows/two.json",
        &json!({"stages": [
            {"name": "design", "prompt": "Write design.md for {{prd_path}}.",
             "exit_when": {"file_exists": "design.md", "min_lines": 3}},
            {"name": "verify", "prompt": "Check design.md against {{prd_path}}.",
             "exit_when": {"promise_in_output": "DONE"}}
        ]})
        .to_string(),
    );
    let (code, events, report) = agent.pagent_loop(&e2e, &["run", "prd.md", "--workflow", "two"]);
    record(&e2e, &format!("{}-pipeline", agent.name()));
    assert_eq!(code, Some(0), "{report}");
    let state = e2e.state();
    assert_eq!(state["status"], "complete", "{report}");
    assert_eq!(state["iterations"], json!([1, 1]), "{report}");
    let requests = e2e.mock.requests();
    assert_eq!(requests.len(), 3, "{report}");
    assert!(
        requests[2]
            .to_string()
            .contains("pagent · stage 2 of 2: verify · iteration 1 of 25"),
        "{}",
        requests[2]
    );
    assert_eq!(
        of(&events, "iteration_finished")
            .iter()
            .map(|e| e["outcome"].as_str().unwrap())
            .collect::<Vec<_>>(),
        ["advance", "complete"],
        "{report}"
    );
}

#[test]
#[ignore = "end-to-end: needs the Codex CLI (scripts/test.sh runs it)"]
fn codex_ralph_reaches_the_promise_on_iteration_three() {
    ralph_reaches_the_promise_on_iteration_three(Agent::Codex);
}

#[test]
#[ignore = "end-to-end: needs the Codex CLI (scripts/test.sh runs it)"]
fn codex_pipeline_stage_advances_on_its_file() {
    a_pipeline_stage_advances_on_its_file(Agent::Codex);
}

#[test]
#[ignore = "end-to-end: needs the OpenCode CLI (scripts/test.sh runs it)"]
fn opencode_ralph_reaches_the_promise_on_iteration_three() {
    ralph_reaches_the_promise_on_iteration_three(Agent::Opencode);
}

#[test]
#[ignore = "end-to-end: needs the OpenCode CLI (scripts/test.sh runs it)"]
fn opencode_pipeline_stage_advances_on_its_file() {
    a_pipeline_stage_advances_on_its_file(Agent::Opencode);
}

/// Codex's offline config: the mock as its provider, no retries of its own, nothing it
/// would fetch.
fn codex_offline(home: &Path, base: &str) -> Vec<(String, String)> {
    let codex_home = home.join(".codex");
    fs::create_dir_all(&codex_home).unwrap();
    fs::write(
        codex_home.join("config.toml"),
        format!(
            r#"model = "mock-model"
model_provider = "mock"
approval_policy = "never"
sandbox_mode = "danger-full-access"
check_for_update_on_startup = false

[model_providers.mock]
name = "mock"
base_url = "{base}"
env_key = "MOCK_API_KEY"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0

[analytics]
enabled = false

[feedback]
enabled = false

[features]
plugins = false
remote_plugin = false
plugin_sharing = false
apps = false
"#
        ),
    )
    .unwrap();
    vec![("CODEX_HOME".into(), codex_home.display().to_string())]
}

/// OpenCode's offline config and folders: the mock as its only provider, nothing it would
/// fetch or update.
fn opencode_offline(home: &Path, base: &str) -> Vec<(String, String)> {
    let mut env = Vec::new();
    for (var, rel) in [
        ("XDG_CONFIG_HOME", ".config"),
        ("XDG_DATA_HOME", ".local/share"),
        ("XDG_CACHE_HOME", ".cache"),
        ("XDG_STATE_HOME", ".local/state"),
    ] {
        fs::create_dir_all(home.join(rel)).unwrap();
        env.push((var.into(), home.join(rel).display().to_string()));
    }
    let config = home.join(".config/opencode/opencode.json");
    fs::create_dir_all(config.parent().unwrap()).unwrap();
    fs::write(
        config,
        json!({
            "model": "mock/mock-model",
            "small_model": "mock/mock-model",
            "autoupdate": false,
            "share": "disabled",
            "enabled_providers": ["mock"],
            "provider": {"mock": {
                "npm": "@ai-sdk/openai-compatible",
                "name": "Mock",
                "options": {"baseURL": base, "apiKey": "sk-test"},
                "models": {"mock-model": {"name": "Mock model", "tool_call": true}}
            }}
        })
        .to_string(),
    )
    .unwrap();
    for var in [
        "OPENCODE_PURE",
        "OPENCODE_DISABLE_MODELS_FETCH",
        "OPENCODE_DISABLE_AUTOUPDATE",
        "OPENCODE_DISABLE_DEFAULT_PLUGINS",
        "OPENCODE_DISABLE_LSP_DOWNLOAD",
        "OPENCODE_DISABLE_SHARE",
    ] {
        env.push((var.into(), "1".into()));
    }
    env
}

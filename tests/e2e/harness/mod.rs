//! Per-test world for the end-to-end suite: a temp git project and HOME, the mock API,
//! and the real Claude Code CLI run with pagent as a plugin.
//!
//! When a test fails, dropping the harness prints everything needed to see why: each
//! request's last message, the CLI's stream and stderr, pagent's event log and state, and
//! the project's files.

use std::cell::RefCell;
use std::ffi::OsStr;
use std::fmt::Write as _;
use std::fs;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::git::git;
use crate::mock::{MockApi, Reply};

mod claude;
mod cost;
mod record;

pub use claude::{ClaudeCommand, ClaudeRun};
pub use cost::{claude_at_least, context_costs, reason_copies};

/// What logs Claude Code in with a subscription against the mock, instead of an API key.
pub const SUBSCRIPTION: [(&str, &str); 3] = [
    (
        "CLAUDE_CODE_OAUTH_TOKEN",
        "sk-ant-oat01-pagent-e2e-mock-token",
    ),
    ("CLAUDE_CODE_SUBSCRIPTION_TYPE", "max"),
    ("TZ", "Europe/Paris"),
];

/// Longest a single `claude -p` run may take before it is killed and the test fails.
const RUN_TIMEOUT: Duration = Duration::from_secs(90);

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The CLI under test: `$PAGENT_CLAUDE` (scripts/test.sh sets it, once per version of the
/// matrix), else the newest pinned version as scripts/install-client.sh installs it.
pub fn claude_binary() -> PathBuf {
    match std::env::var_os("PAGENT_CLAUDE") {
        Some(path) => installed(PathBuf::from(path)),
        None => pinned_claude(&pinned("CLAUDE_CODE_NEWEST")),
    }
}

/// Claude Code `version` as scripts/install-client.sh installs it under target/clients/.
pub fn pinned_claude(version: &str) -> PathBuf {
    installed(repo_root().join(format!(
        "target/clients/claude-{version}/node_modules/.bin/claude"
    )))
}

fn installed(path: PathBuf) -> PathBuf {
    assert!(
        path.exists(),
        "the Claude Code CLI is not installed at {}: run scripts/install-client.sh claude VERSION (scripts/test.sh does)",
        path.display()
    );
    path
}

/// A version pinned in scripts/clients.sh (`NAME=VERSION` lines).
pub fn pinned(name: &str) -> String {
    let text = fs::read_to_string(repo_root().join("scripts/clients.sh")).unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix(name)?.strip_prefix('='))
        .unwrap_or_else(|| panic!("scripts/clients.sh pins no {name}"))
        .trim()
        .to_owned()
}

pub struct E2e {
    _dir: tempfile::TempDir,
    pub project: PathBuf,
    pub home: PathBuf,
    pub config: PathBuf,
    pub mock: MockApi,
    runs: RefCell<Vec<ClaudeRun>>,
    started: Instant,
}

impl E2e {
    /// A fresh project (git repository with one commit) and a mock answering `script`.
    pub fn start(script: Vec<Reply>) -> E2e {
        E2e::start_with(|_| script)
    }

    /// The same, for a script that needs the project's paths (e.g. Write tool calls).
    pub fn start_with(script: impl FnOnce(&E2e) -> Vec<Reply>) -> E2e {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let (project, home, config) =
            (base.join("project"), base.join("home"), base.join("config"));
        fs::create_dir_all(&project).unwrap();
        fs::create_dir_all(&home).unwrap();
        fs::write(project.join("README.md"), "# demo\n").unwrap();
        git(&project, &["init", "-q"]);
        git(&project, &["add", "README.md"]);
        git(&project, &["commit", "-qm", "init"]);
        let mut e2e = E2e {
            _dir: dir,
            project,
            home,
            config,
            mock: MockApi::start(Vec::new()),
            runs: RefCell::new(Vec::new()),
            started: Instant::now(),
        };
        e2e.mock = MockApi::start(script(&e2e));
        e2e
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.project.join(rel)
    }

    pub fn write(&self, rel: &str, content: &str) {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
    }

    /// `claude -p PROMPT` with pagent loaded from this repository.
    pub fn claude(&self, prompt: &str) -> ClaudeCommand<'_> {
        let mut command = Command::new(claude_binary());
        command
            .arg("-p")
            .arg(prompt)
            .args([
                "--output-format",
                "stream-json",
                "--verbose",
                "--include-hook-events",
                "--permission-mode",
                "acceptEdits",
                "--max-turns",
                "40",
            ])
            .current_dir(&self.project)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        self.offline_env(&mut command);
        ClaudeCommand {
            e2e: self,
            command,
            plugin_dir: Some(repo_root()),
        }
    }

    /// `claude ARGS` in the project as a person would start it: offline, no plugin, no
    /// pagent in the way; for what Claude Code itself does with a project's files.
    pub fn claude_plain(&self, args: &[&str]) -> std::process::Output {
        let mut command = Command::new(claude_binary());
        command
            .args(args)
            .current_dir(&self.project)
            .stdin(Stdio::null());
        self.offline_env(&mut command);
        command.output().unwrap()
    }

    /// `pagent loop ARGS` in the project with the environment `claude()` gives the CLI, so
    /// the agents it starts talk to the mock.
    pub fn pagent_loop(&self, args: &[impl AsRef<OsStr>]) -> std::process::Output {
        self.pagent_loop_with(args, &[])
    }

    /// `pagent parallel ARGS` in the project, its agents talking to the mock.
    pub fn pagent_parallel(&self, args: &[&str]) -> std::process::Output {
        let mut command = self.driving("parallel", args);
        command.env("NO_COLOR", "1");
        command.output().unwrap()
    }

    /// `pagent team ARGS` in the project, its agents talking to the mock.
    pub fn pagent_team(&self, args: &[&str]) -> std::process::Output {
        let mut command = self.driving("team", args);
        command.env("NO_COLOR", "1").env("HOSTNAME", "e2ehost");
        command.output().unwrap()
    }

    /// `pagent loop ARGS` whose Claude Code agents are logged in with a subscription
    /// (an OAuth token, no API key; the zone Europe/Paris): only then does Claude Code
    /// take a 429 for a usage limit (`research/cc-facts.md`, B6).
    pub fn pagent_loop_subscribed(&self, args: &[impl AsRef<OsStr>]) -> std::process::Output {
        let mut command = self.driving("loop", args);
        for (key, value) in SUBSCRIPTION {
            command.env(key, value);
        }
        command.env_remove("ANTHROPIC_API_KEY");
        command.output().unwrap()
    }

    /// The same, with more environment for the agents (Codex's and OpenCode's set-up).
    pub fn pagent_loop_with(
        &self,
        args: &[impl AsRef<OsStr>],
        env: &[(String, String)],
    ) -> std::process::Output {
        let mut command = self.driving("loop", args);
        for (key, value) in env {
            command.env(key, value);
        }
        command.output().unwrap()
    }

    /// `pagent SUBCOMMAND ARGS` (one that drives agents) in the project, its agents
    /// talking to the mock (a test that must see it running spawns it).
    pub fn driving(&self, subcommand: &str, args: &[impl AsRef<OsStr>]) -> Command {
        let mut command = Command::new(pagent_bin());
        command
            .arg(subcommand)
            .args(args)
            .current_dir(&self.project)
            .stdin(Stdio::null());
        self.offline_env(&mut command);
        command
    }

    /// The environment CLAUDE-CODE.md gives for running the CLI against the mock: no
    /// inherited Claude/pagent/Anthropic variables, a scratch HOME, no retries, no
    /// traffic but the mock's; pagent found through PAGENT_BIN (`record::hook_bin`).
    fn offline_env(&self, command: &mut Command) {
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            if key.starts_with("CLAUDE")
                || key.starts_with("PAGENT")
                || key.starts_with("ANTHROPIC")
            {
                command.env_remove(&key);
            }
        }
        command
            .env("HOME", &self.home)
            .env("ANTHROPIC_BASE_URL", self.mock.base_url())
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_MAX_RETRIES", "0")
            .env("PAGENT_BIN", self.hook_bin())
            .env("PAGENT_CONFIG_DIR", &self.config);
    }

    /// The pagent binary on this project, with the same config folder as the hooks.
    pub fn pagent(&self, args: &[&str]) -> std::process::Output {
        self.pagent_as(None, args)
    }

    /// The same, as if run from inside the Claude Code session `session`.
    pub fn pagent_as(&self, session: Option<&str>, args: &[&str]) -> std::process::Output {
        let mut command = Command::new(pagent_bin());
        command.env_remove("CLAUDE_CODE_SESSION_ID");
        if let Some(session) = session {
            command.env("CLAUDE_CODE_SESSION_ID", session);
        }
        command
            .arg("--project")
            .arg(&self.project)
            .args(args)
            .env_remove("CLAUDE_PROJECT_DIR")
            .env("PAGENT_CONFIG_DIR", &self.config)
            .env("NO_COLOR", "1")
            .output()
            .unwrap()
    }

    pub fn status(&self) -> Value {
        let out = self.pagent(&["status", "--json"]);
        assert!(out.status.success(), "{out:?}");
        serde_json::from_slice(&out.stdout).unwrap()
    }

    /// The `action` of every event of the project's log, in order.
    pub fn actions(&self) -> Vec<String> {
        pagent_test_support::project::actions(&self.project)
    }

    pub fn state(&self) -> Value {
        serde_json::from_str(
            &fs::read_to_string(self.path(".claude/pagent-pipeline.json")).unwrap(),
        )
        .unwrap()
    }

    fn dump(&self) -> String {
        let mut out = format!(
            "===== e2e failure after {:.1?} =====\n",
            self.started.elapsed()
        );
        for (i, request) in self.mock.requests().iter().enumerate() {
            let told = crate::mock::told(request).join("\n");
            let _ = writeln!(
                out,
                "--- request {i}: the messages after the last assistant message ---\n{told}"
            );
        }
        for (i, run) in self.runs.borrow().iter().enumerate() {
            let _ = writeln!(
                out,
                "--- claude run {i}: exit {:?}, {:.1?}{} ---",
                run.code,
                run.elapsed,
                if run.timed_out { ", TIMED OUT" } else { "" }
            );
            for line in &run.lines {
                let _ = writeln!(out, "{}", truncate(line, 600));
            }
            let _ = writeln!(out, "--- claude run {i}: stderr ---\n{}", run.stderr);
        }
        for rel in [
            ".claude/pagent/events.jsonl",
            ".claude/pagent-pipeline.json",
        ] {
            if let Ok(text) = fs::read_to_string(self.path(rel)) {
                let _ = writeln!(out, "--- {rel} ---\n{text}");
            }
        }
        let _ = writeln!(out, "--- project files ---");
        for file in pagent_test_support::project::files(&self.project) {
            let _ = writeln!(out, "{file}");
        }
        out
    }
}

impl Drop for E2e {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.dump());
        }
        self.save_records();
    }
}

fn truncate(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Copies the plugin's files (not target/) to `dest`, as scripts/install.sh stages them.
pub fn stage_plugin(dest: &Path) {
    fs::create_dir_all(dest).unwrap();
    for item in [".claude-plugin", "hooks", "commands", "agents", "scripts"] {
        let out = Command::new("cp")
            .arg("-R")
            .arg(repo_root().join(item))
            .arg(dest)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
}

/// `pagent loop`'s arguments for Claude Code agents with this checkout as their plugin:
/// `--json --agent claude --agent-bin CLAUDE --agent-arg=--plugin-dir --agent-arg=REPO`,
/// then `rest`.
pub fn claude_agent_args(rest: &[&str]) -> Vec<String> {
    let mut args: Vec<String> = ["--json", "--agent", "claude", "--agent-bin"]
        .map(str::to_owned)
        .into();
    args.push(claude_binary().display().to_string());
    args.push("--agent-arg=--plugin-dir".to_owned());
    args.push(format!("--agent-arg={}", repo_root().display()));
    args.extend(rest.iter().map(|a| (*a).to_owned()));
    args
}

/// The binary under test: `$PAGENT_TEST_BIN` (another build of the same source, e.g. the
/// static one scripts/install.sh makes), else the one cargo built for these tests.
pub fn pagent_bin() -> std::path::PathBuf {
    pagent_test_support::project::pagent_bin(env!("CARGO_BIN_EXE_pagent"))
}

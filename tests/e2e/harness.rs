//! Per-test world for the end-to-end suite: a temp git project and HOME, the mock API,
//! and the real Claude Code CLI run with pagent as a plugin.
//!
//! When a test fails, dropping the harness prints everything needed to see why: each
//! request's last message, the CLI's stream and stderr, pagent's event log and state, and
//! the project's files.

use std::cell::RefCell;
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

/// Longest a single `claude -p` run may take before it is killed and the test fails.
const RUN_TIMEOUT: Duration = Duration::from_secs(90);

pub fn repo_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The CLI under test: `$PAGENT_CLAUDE` (scripts/test.sh sets it, once per version of the
/// matrix), else the newest pinned version as scripts/install-client.sh installs it.
pub fn claude_binary() -> PathBuf {
    let path = std::env::var_os("PAGENT_CLAUDE")
        .map(PathBuf::from)
        .unwrap_or_else(|| {
            let version = pinned("CLAUDE_CODE_NEWEST");
            repo_root().join(format!(
                "target/clients/claude-{version}/node_modules/.bin/claude"
            ))
        });
    assert!(
        path.exists(),
        "the Claude Code CLI is not installed at {}: run scripts/install-client.sh claude (scripts/test.sh does)",
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

    /// `pagent loop ARGS` in the project with the environment `claude()` gives the CLI, so
    /// the agents it starts talk to the mock.
    pub fn pagent_loop(&self, args: &[&str]) -> std::process::Output {
        self.pagent_loop_with(args, &[])
    }

    /// The same, with more environment for the agents (Codex's and OpenCode's set-up).
    pub fn pagent_loop_with(
        &self,
        args: &[&str],
        env: &[(String, String)],
    ) -> std::process::Output {
        let mut command = Command::new(pagent_bin());
        command
            .arg("loop")
            .args(args)
            .current_dir(&self.project)
            .stdin(Stdio::null());
        self.offline_env(&mut command);
        for (key, value) in env {
            command.env(key, value);
        }
        command.output().unwrap()
    }

    /// The environment CLAUDE-CODE.md gives for running the CLI against the mock: no
    /// inherited Claude/pagent/Anthropic variables, a scratch HOME, no retries, no
    /// traffic but the mock's; pagent found through PAGENT_BIN.
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
            .env("PAGENT_BIN", pagent_bin())
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
        for entry in walkdir::WalkDir::new(&self.project)
            .into_iter()
            .filter_entry(|e| e.file_name() != ".git")
            .flatten()
        {
            let _ = writeln!(
                out,
                "{}",
                entry.path().strip_prefix(&self.project).unwrap().display()
            );
        }
        out
    }
}

impl Drop for E2e {
    fn drop(&mut self) {
        if std::thread::panicking() {
            eprintln!("{}", self.dump());
        }
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
    for item in [
        ".claude-plugin",
        "hooks",
        "commands",
        "agents",
        "scripts",
        "plugin",
    ] {
        let out = Command::new("cp")
            .arg("-R")
            .arg(repo_root().join(item))
            .arg(dest)
            .output()
            .unwrap();
        assert!(out.status.success(), "{out:?}");
    }
}

pub struct ClaudeCommand<'a> {
    e2e: &'a E2e,
    command: Command,
    plugin_dir: Option<PathBuf>,
}

impl ClaudeCommand<'_> {
    pub fn arg(mut self, arg: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.arg(arg);
        self
    }

    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    pub fn env_remove(mut self, key: &str) -> Self {
        self.command.env_remove(key);
        self
    }

    pub fn plugin_dir(mut self, dir: Option<PathBuf>) -> Self {
        self.plugin_dir = dir;
        self
    }

    /// Runs the CLI to its end (killing its process group after [`RUN_TIMEOUT`]).
    pub fn run(mut self) -> ClaudeRun {
        if let Some(dir) = &self.plugin_dir {
            self.command.arg("--plugin-dir").arg(dir);
        }
        let started = Instant::now();
        let child = self.command.spawn().unwrap();
        let pid = child.id() as i32;
        let (tx, rx) = mpsc::channel();
        std::thread::spawn(move || {
            let _ = tx.send(child.wait_with_output());
        });
        let (output, timed_out) = match rx.recv_timeout(RUN_TIMEOUT) {
            Ok(output) => (output.unwrap(), false),
            Err(_) => {
                // SAFETY: signals the process group the CLI leads; no memory is touched.
                unsafe { libc::kill(-pid, libc::SIGKILL) };
                (
                    rx.recv_timeout(Duration::from_secs(10)).unwrap().unwrap(),
                    true,
                )
            }
        };
        // Hooks or tools the CLI left behind die with it.
        unsafe { libc::kill(-pid, libc::SIGKILL) };
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let run = ClaudeRun {
            code: output.status.code(),
            lines: stdout.lines().map(str::to_owned).collect(),
            events: stdout
                .lines()
                .filter_map(|l| serde_json::from_str(l).ok())
                .collect(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            timed_out,
            elapsed: started.elapsed(),
        };
        self.e2e.runs.borrow_mut().push(run.clone());
        assert!(
            !timed_out,
            "claude -p did not finish within {RUN_TIMEOUT:?}"
        );
        run
    }
}

#[derive(Debug, Clone)]
pub struct ClaudeRun {
    pub code: Option<i32>,
    pub lines: Vec<String>,
    pub events: Vec<Value>,
    pub stderr: String,
    pub timed_out: bool,
    pub elapsed: Duration,
}

impl ClaudeRun {
    pub fn init(&self) -> &Value {
        self.events
            .iter()
            .find(|e| e["type"] == "system" && e["subtype"] == "init")
            .expect("no init event in the stream")
    }

    pub fn result(&self) -> &Value {
        self.events
            .iter()
            .rev()
            .find(|e| e["type"] == "result")
            .expect("no result event in the stream")
    }

    /// The stdout of every Stop hook run, in order, parsed (`Null` for an empty output).
    pub fn stop_hook_outputs(&self) -> Vec<Value> {
        self.hook_responses("Stop")
            .iter()
            .map(|e| {
                serde_json::from_str(e["stdout"].as_str().unwrap_or("").trim())
                    .unwrap_or(Value::Null)
            })
            .collect()
    }

    /// The reasons of the Stop hook's blocks, in order.
    pub fn block_reasons(&self) -> Vec<String> {
        self.stop_hook_outputs()
            .iter()
            .filter(|o| o["decision"] == "block")
            .map(|o| o["reason"].as_str().unwrap().to_owned())
            .collect()
    }

    pub fn hook_responses(&self, event: &str) -> Vec<&Value> {
        self.events
            .iter()
            .filter(|e| {
                e["type"] == "system" && e["subtype"] == "hook_response" && e["hook_event"] == event
            })
            .collect()
    }
}

/// What the model received of pagent's text in one iteration: the block reason, how many
/// messages carried it whole, and the bytes that makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextCost {
    pub iteration: usize,
    pub reason_bytes: usize,
    pub copies: usize,
    pub bytes: usize,
}

/// For each block of `run`, the next request's messages after the last assistant one that
/// contain its reason: Claude Code up to 2.1.258 sends the reason once (the Stop feedback),
/// later versions twice (and the second copy as a `role:"system"` message). Printed for the
/// context table in BENCHMARKS.md (`-- --nocapture`).
pub fn context_costs(e2e: &E2e, run: &ClaudeRun, flow: &str) -> Vec<ContextCost> {
    let version = claude_version();
    let requests = e2e.mock.requests();
    let mut next = 0;
    let costs: Vec<ContextCost> = run
        .block_reasons()
        .iter()
        .enumerate()
        .map(|(block, reason)| {
            // The first request after the previous block's that carries this reason.
            let (index, copies) = (next..requests.len())
                .map(|i| {
                    let told = crate::mock::told(&requests[i]);
                    (
                        i,
                        told.iter().filter(|t| t.contains(reason.as_str())).count(),
                    )
                })
                .find(|(_, copies)| *copies > 0)
                .unwrap_or((requests.len(), 0));
            next = index + 1;
            ContextCost {
                iteration: block + 2,
                reason_bytes: reason.len(),
                copies,
                bytes: copies * reason.len(),
            }
        })
        .collect();
    let total: usize = costs.iter().map(|c| c.bytes).sum();
    eprintln!(
        "context: Claude Code {version}, {flow}: {} blocks, {total} bytes of pagent text received; per block: {}",
        costs.len(),
        costs
            .iter()
            .map(|c| format!("{}x{}", c.copies, c.reason_bytes))
            .collect::<Vec<_>>()
            .join(", ")
    );
    costs
}

/// The CLI's version, e.g. "2.1.330".
pub fn claude_version() -> String {
    let out = Command::new(claude_binary())
        .arg("--version")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_owned()
}

/// How many times the CLI under test hands a Stop block's reason to the model: twice
/// since 2.1.259.
pub fn reason_copies() -> usize {
    let version: Vec<u32> = claude_version()
        .split('.')
        .map(|n| n.parse().unwrap())
        .collect();
    if version >= vec![2, 1, 259] { 2 } else { 1 }
}

/// The binary under test: `$PAGENT_TEST_BIN` (another build of the same source, e.g. the
/// static one scripts/install.sh makes), else the one cargo built for these tests.
pub fn pagent_bin() -> std::path::PathBuf {
    std::env::var_os("PAGENT_TEST_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_BIN_EXE_pagent")))
}

//! The test harness: a temp project with an isolated HOME and config folder, the binary
//! found through `CARGO_BIN_EXE_pagent` (or `$PAGENT_TEST_BIN`), and failures that print everything.
//!
//! Every command run here is also checked against pagent's one absolute rule: whatever
//! happens, it never exits 2 (Claude Code would read that as "block").

use std::fmt::Write as _;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::{Value, json};

pub const SESSION: &str = "35f641a1-e3ce-47f3-8fb7-50415b29808a";

pub struct TestEnv {
    _dir: tempfile::TempDir,
    pub root: PathBuf,
    pub home: PathBuf,
    pub config: PathBuf,
}

impl TestEnv {
    /// A git project (`git init`, nothing committed) with its own HOME and config folder.
    pub fn new() -> TestEnv {
        let env = TestEnv::plain();
        git2::Repository::init(&env.root).unwrap();
        env
    }

    /// A project that is not a git repository.
    pub fn plain() -> TestEnv {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let root = base.join("project");
        let home = base.join("home");
        let config = base.join("config");
        for d in [&root, &home] {
            fs::create_dir_all(d).unwrap();
        }
        TestEnv {
            _dir: dir,
            root,
            home,
            config,
        }
    }

    pub fn path(&self, rel: &str) -> PathBuf {
        self.root.join(rel)
    }

    pub fn write(&self, rel: &str, content: &str) -> &Self {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, content).unwrap();
        self
    }

    /// A file of `n` non-blank lines.
    pub fn write_lines(&self, rel: &str, n: usize) -> &Self {
        self.write(
            rel,
            &(1..=n).map(|i| format!("line {i}\n")).collect::<String>(),
        )
    }

    pub fn read(&self, rel: &str) -> String {
        fs::read_to_string(self.path(rel))
            .unwrap_or_else(|e| panic!("cannot read {rel}: {e}\n{}", self.dump()))
    }

    pub fn exists(&self, rel: &str) -> bool {
        self.path(rel).exists()
    }

    pub fn state(&self) -> Value {
        serde_json::from_str(&self.read(".claude/pagent-pipeline.json")).unwrap()
    }

    pub fn set_state(&self, state: &Value) {
        self.write(
            ".claude/pagent-pipeline.json",
            &serde_json::to_string_pretty(state).unwrap(),
        );
    }

    /// `pagent ARGS` in the project folder, with a clean environment.
    pub fn cmd(&self, args: &[&str]) -> TestCommand {
        let mut command = Command::new(pagent_bin());
        command.args(args).current_dir(&self.root);
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy().into_owned();
            if key.starts_with("CLAUDE") || key.starts_with("PAGENT") || key == "XDG_CONFIG_HOME" {
                command.env_remove(&key);
            }
        }
        command
            .env("HOME", &self.home)
            .env("PAGENT_CONFIG_DIR", &self.config)
            .env("NO_COLOR", "1");
        TestCommand {
            command,
            stdin: None,
            env: self.describe(),
        }
    }

    /// `pagent hook stop` as Claude Code runs it, with `input` on stdin.
    pub fn stop(&self, input: &Value) -> Run {
        self.stop_raw(serde_json::to_vec(input).unwrap())
    }

    pub fn stop_raw(&self, stdin: Vec<u8>) -> Run {
        self.cmd(&["hook", "stop"])
            .env("CLAUDE_PROJECT_DIR", &self.root)
            .stdin(stdin)
            .run()
    }

    /// `pagent hook post-tool-use` after `tool` wrote `rel`, with extra environment.
    pub fn post_tool_use(&self, tool: &str, rel: &str, env: &[(&str, &std::ffi::OsStr)]) -> Run {
        let field = if tool == "NotebookEdit" {
            "notebook_path"
        } else {
            "file_path"
        };
        let input = json!({
            "session_id": SESSION,
            "cwd": self.root,
            "hook_event_name": "PostToolUse",
            "tool_name": tool,
            "tool_input": {field: self.path(rel)},
            "tool_response": {"type": "update"},
        });
        let mut command = self
            .cmd(&["hook", "post-tool-use"])
            .env("CLAUDE_PROJECT_DIR", &self.root)
            .stdin(input.to_string());
        for (key, value) in env {
            command = command.env(key, value);
        }
        command.run()
    }

    /// Writes an executable script (a fake tool) and returns its folder.
    pub fn fake_tool(&self, dir: &str, name: &str, script: &str) -> PathBuf {
        use std::os::unix::fs::PermissionsExt;
        let folder = self.home.join(dir);
        fs::create_dir_all(&folder).unwrap();
        let path = folder.join(name);
        fs::write(&path, format!("#!/bin/sh\n{script}\n")).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        folder
    }

    /// A Stop hook input from `SESSION` with this last assistant message.
    pub fn stop_input(&self, message: &str) -> Value {
        json!({
            "session_id": SESSION,
            "transcript_path": self.home.join("transcript.jsonl"),
            "cwd": self.root,
            "hook_event_name": "Stop",
            "stop_hook_active": false,
            "last_assistant_message": message,
        })
    }

    fn describe(&self) -> String {
        format!("project {}", self.root.display())
    }

    /// Everything a failing test should show: the project's files and pagent's state.
    pub fn dump(&self) -> String {
        let mut out = String::from("--- project files ---\n");
        for entry in walkdir::WalkDir::new(&self.root)
            .into_iter()
            .filter_entry(|e| e.file_name() != ".git")
            .flatten()
        {
            let _ = writeln!(
                out,
                "{}",
                entry.path().strip_prefix(&self.root).unwrap().display()
            );
        }
        for rel in [
            ".claude/pagent-pipeline.json",
            ".claude/pagent/events.jsonl",
        ] {
            if let Ok(text) = fs::read_to_string(self.path(rel)) {
                let _ = writeln!(out, "--- {rel} ---\n{text}");
            }
        }
        out
    }
}

pub struct TestCommand {
    command: Command,
    stdin: Option<Vec<u8>>,
    env: String,
}

impl TestCommand {
    pub fn env(mut self, key: &str, value: impl AsRef<std::ffi::OsStr>) -> Self {
        self.command.env(key, value);
        self
    }

    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    pub fn current_dir(mut self, dir: &Path) -> Self {
        self.command.current_dir(dir);
        self
    }

    pub fn run(mut self) -> Run {
        self.command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = self.command.spawn().unwrap();
        let mut pipe = child.stdin.take().unwrap();
        let stdin = self.stdin.take().unwrap_or_default();
        // The binary may exit without reading stdin (the fast path): ignore EPIPE.
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(&stdin);
        });
        let output = child.wait_with_output().unwrap();
        let _ = writer.join();
        let run = Run {
            code: output.status.code(),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            command: format!("{:?} ({})", self.command, self.env),
        };
        assert_ne!(
            run.code,
            Some(2),
            "pagent exited 2, which blocks in Claude Code\n{run}"
        );
        run
    }

    /// Runs with a time limit (the whole process group is killed past it) and reports
    /// the elapsed time and the peak memory: for inputs that could hang or grow a hook.
    pub fn run_bounded(mut self, limit: std::time::Duration) -> Bounded {
        use std::io::Read;
        use std::os::unix::process::CommandExt;
        // Peak memory through GNU time: a child forked from this (large, threaded) test
        // process would count the test's own pages in its rusage.
        let rss_file = tempfile::NamedTempFile::new().unwrap();
        let mut timed = Command::new("/usr/bin/time");
        timed
            .args(["-f", "%M", "-o"])
            .arg(rss_file.path())
            .arg(self.command.get_program())
            .args(self.command.get_args());
        if let Some(dir) = self.command.get_current_dir() {
            timed.current_dir(dir);
        }
        for (key, value) in self.command.get_envs() {
            match value {
                Some(value) => timed.env(key, value),
                None => timed.env_remove(key),
            };
        }
        timed
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let started = std::time::Instant::now();
        // Reaped below with wait4, which also reports how it ended.
        #[allow(clippy::zombie_processes)]
        let mut child = timed.spawn().unwrap();
        let mut pipe = child.stdin.take().unwrap();
        let stdin = self.stdin.take().unwrap_or_default();
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(&stdin);
        });
        let read_all = |mut r: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = r.read_to_end(&mut bytes);
                bytes
            })
        };
        let out = read_all(Box::new(child.stdout.take().unwrap()));
        let err = read_all(Box::new(child.stderr.take().unwrap()));
        let pid = i32::try_from(child.id()).unwrap();
        let mut status = 0;
        // SAFETY: zeroed rusage filled by wait4 for our own child.
        let mut usage: libc::rusage = unsafe { std::mem::zeroed() };
        let mut hung = false;
        loop {
            // SAFETY: wait4 on our own child with valid out-pointers.
            let done = unsafe { libc::wait4(pid, &raw mut status, libc::WNOHANG, &raw mut usage) };
            if done == pid {
                break;
            }
            if started.elapsed() > limit {
                hung = true;
                // SAFETY: kill the child's own process group, then reap it.
                unsafe {
                    libc::kill(-pid, libc::SIGKILL);
                    libc::wait4(pid, &raw mut status, 0, &raw mut usage);
                }
                break;
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let elapsed = started.elapsed();
        let _ = writer.join();
        let code = libc::WIFEXITED(status).then(|| libc::WEXITSTATUS(status));
        let run = Run {
            code,
            stdout: String::from_utf8_lossy(&out.join().unwrap()).into_owned(),
            stderr: String::from_utf8_lossy(&err.join().unwrap()).into_owned(),
            command: format!("{:?} ({})", self.command, self.env),
        };
        assert!(!hung, "hung for {elapsed:?} (killed)\n{run}");
        assert_ne!(
            run.code,
            Some(2),
            "pagent exited 2, which blocks in Claude Code\n{run}"
        );
        let max_rss_kb = fs::read_to_string(rss_file.path())
            .ok()
            .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()))
            .unwrap_or_else(|| panic!("no peak memory from /usr/bin/time\n{run}"));
        Bounded { run, max_rss_kb }
    }

    pub fn success(self) -> Run {
        let run = self.run();
        assert_eq!(run.code, Some(0), "expected success\n{run}");
        run
    }

    pub fn failure(self) -> Run {
        let run = self.run();
        assert_eq!(run.code, Some(1), "expected exit 1\n{run}");
        run
    }
}

/// A [`TestCommand::run_bounded`] result.
#[derive(Debug)]
pub struct Bounded {
    pub run: Run,
    /// Peak resident memory of the process, in KiB.
    pub max_rss_kb: i64,
}

#[derive(Debug)]
pub struct Run {
    pub code: Option<i32>,
    pub stdout: String,
    pub stderr: String,
    command: String,
}

impl std::fmt::Display for Run {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(
            f,
            "command: {}\nexit: {:?}\n--- stdout ---\n{}\n--- stderr ---\n{}",
            self.command, self.code, self.stdout, self.stderr
        )
    }
}

impl Run {
    /// The hook's decision JSON; `None` when it printed nothing (allow).
    pub fn decision(&self) -> Option<Value> {
        let text = self.stdout.trim();
        (!text.is_empty()).then(|| {
            serde_json::from_str(text)
                .unwrap_or_else(|e| panic!("hook stdout is not JSON: {e}\n{self}"))
        })
    }

    /// Asserts a block and returns its reason.
    pub fn blocked(&self) -> String {
        let decision = self
            .decision()
            .unwrap_or_else(|| panic!("expected a block, got an allow\n{self}"));
        assert_eq!(decision["decision"], "block", "{self}");
        decision["reason"].as_str().unwrap().to_owned()
    }

    /// The PostToolUse additional context, or `None` when the hook said nothing.
    pub fn context(&self) -> Option<String> {
        assert_eq!(self.code, Some(0), "{self}");
        let decision = self.decision()?;
        assert_eq!(
            decision["hookSpecificOutput"]["hookEventName"], "PostToolUse",
            "{self}"
        );
        Some(
            decision["hookSpecificOutput"]["additionalContext"]
                .as_str()
                .unwrap()
                .to_owned(),
        )
    }

    /// Asserts the stop is allowed and returns the user message, if any.
    pub fn allowed(&self) -> Option<String> {
        match self.decision() {
            None => None,
            Some(decision) => {
                assert!(
                    decision.get("decision").is_none(),
                    "expected an allow, got a block\n{self}"
                );
                decision["systemMessage"].as_str().map(str::to_owned)
            }
        }
    }
}

/// Writes a transcript in Claude Code 2.1.197's line shapes.
pub fn transcript_line_text(id: &str, text: &str) -> String {
    json!({"type": "assistant", "message": {"id": id, "type": "message", "role": "assistant", "content": [{"type": "text", "text": text}]}}).to_string()
}

pub fn transcript_line_user(text: &str, meta: bool) -> String {
    json!({"type": "user", "isMeta": meta, "message": {"role": "user", "content": text}})
        .to_string()
}

pub fn transcript_line_tool_result(content: &str) -> String {
    json!({"type": "user", "message": {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1", "content": content}]}}).to_string()
}

/// The binary under test: `$PAGENT_TEST_BIN` (another build of the same source, e.g. the
/// static one scripts/install.sh makes), else the one cargo built for these tests.
pub fn pagent_bin() -> std::path::PathBuf {
    std::env::var_os("PAGENT_TEST_BIN")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| std::path::PathBuf::from(env!("CARGO_BIN_EXE_pagent")))
}

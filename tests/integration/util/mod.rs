//! The test harness: a temp project with an isolated HOME and config folder, commands
//! run in-process through `pagent::run` or as the binary found through
//! `CARGO_BIN_EXE_pagent` (or `$PAGENT_TEST_BIN`), see [`command`], and failures that
//! print everything.
//!
//! Every command run here is also checked against pagent's one absolute rule: whatever
//! happens, it never exits 2 (Claude Code would read that as "block").

mod command;
mod run;
pub mod snapshot;
mod tmux;

use std::fmt::Write as _;
use std::fs;
use std::path::PathBuf;

use serde_json::{Value, json};

pub use command::{TestCommand, wine_did_not_start};
pub use pagent_test_support::lines::Lines;
pub use pagent_test_support::timing::Baseline;
pub use pagent_test_support::wait::{wait_for, wait_showing, wait_until};
pub use run::Run;
pub(crate) use snapshot::{Said, assert_text, prompt_elided};
pub use tmux::{Tmux, pagent_script};

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

    /// `pagent ARGS` in the project folder, with a clean environment: in-process where
    /// it can be (see [`command`]).
    pub fn cmd(&self, args: &[&str]) -> TestCommand {
        self.command(args, false)
    }

    /// `pagent ARGS` as [`TestEnv::cmd`], always the real binary: for the binary's
    /// contract (exit codes, signals, resource limits, the hooks' fast path).
    pub fn bin(&self, args: &[&str]) -> TestCommand {
        self.command(args, true)
    }

    fn command(&self, args: &[&str], whole_binary: bool) -> TestCommand {
        TestCommand::new(args, &self.root, self.describe(), whole_binary)
            .env("HOME", &self.home)
            .env("PAGENT_CONFIG_DIR", &self.config)
            .env("NO_COLOR", "1")
    }

    /// Every event of the project's event log, in order.
    pub fn events(&self) -> Vec<Value> {
        pagent_test_support::project::events(&self.root)
    }

    /// The `action` of every event of the log, in order.
    pub fn actions(&self) -> Vec<String> {
        pagent_test_support::project::actions(&self.root)
    }

    /// `pagent status --json`, parsed.
    pub fn status(&self) -> Value {
        let out = self.cmd(&["status", "--json"]).success();
        serde_json::from_str(&out.stdout).unwrap_or_else(|e| panic!("{e}\n{out}"))
    }

    /// What one short command of the real binary (`pagent status` in this project) takes
    /// here now, the fastest of three: the unit of the suite's time limits ("cancel takes
    /// effect within 20 of these"), so a limit grows with a slow or loaded machine (qemu,
    /// two cores beside the 64-hook stress test) but not with a regression.
    pub fn baseline(&self) -> Baseline {
        Baseline::measure(3, || {
            self.bin(&["status"]).success();
        })
    }

    /// `pagent hook stop` as Claude Code runs it, with `input` on stdin. The transcript
    /// [`TestEnv::stop_input`] names is sent only once the test wrote it, as Claude Code
    /// names a transcript it keeps: a first Stop waits up to a second for one not yet
    /// created (2.1.197's `claude -p`, proven in tests/e2e), which tests that never write
    /// one need not pay.
    pub fn stop(&self, input: &Value) -> Run {
        let mut input = input.clone();
        let default = self.home.join("transcript.jsonl");
        if input["transcript_path"].as_str() == default.to_str() && !default.exists() {
            input.as_object_mut().unwrap().remove("transcript_path");
        }
        self.stop_raw(serde_json::to_vec(&input).unwrap())
    }

    pub fn stop_raw(&self, stdin: Vec<u8>) -> Run {
        self.cmd(&["hook", "stop"])
            .env("CLAUDE_PROJECT_DIR", &self.root)
            .stdin(stdin)
            .run()
    }

    /// `pagent hook post-tool-use` after `tool` wrote `rel`, with extra environment. The
    /// hook must answer (exit 0, no crash): every test that runs it means a normal run,
    /// and one that failed open would pass many of them by saying nothing.
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
        let run = command.run();
        run.answered();
        run
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
        for file in pagent_test_support::project::files(&self.root) {
            let _ = writeln!(out, "{file}");
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

/// The most memory, in KiB, a command bounded at `native_kb` may show here: the same,
/// unless the binary under test runs under an emulator, whose own memory (its translated
/// code and tables) is in the process's peak too. scripts/test.sh sets
/// `PAGENT_TEST_EMULATOR_KB` to that allowance for its qemu run; a file read whole, the
/// failure these bounds are there for, is gigabytes over either.
pub fn memory_limit_kb(native_kb: i64) -> i64 {
    let allowance = std::env::var("PAGENT_TEST_EMULATOR_KB").ok().map(|kb| {
        kb.parse::<i64>()
            .expect("PAGENT_TEST_EMULATOR_KB is a number of KiB")
    });
    native_kb + allowance.unwrap_or(0)
}

/// The binary under test: `$PAGENT_TEST_BIN` (another build of the same source, e.g. the
/// static one scripts/install.sh makes), else the one cargo built for these tests.
pub fn pagent_bin() -> std::path::PathBuf {
    pagent_test_support::project::pagent_bin(env!("CARGO_BIN_EXE_pagent"))
}

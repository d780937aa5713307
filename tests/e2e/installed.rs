//! pagent as a user installs it, on every platform: `pagent install` of this repository
//! into a scratch HOME, then the real Claude Code CLI (no `--plugin-dir`, no `PAGENT_BIN`)
//! through a Ralph loop, `/pagent:status`, `/pagent:cancel`, and `pagent loop` driving that
//! Claude Code as its agent, against the suite's mock API.
//!
//! The one end-to-end test that builds and runs on Windows too (the rest of the suite is a
//! Unix program: tmux, the CLIs' Unix builds): the release workflow's Windows runner runs
//! it natively through each pinned Claude Code version (`scripts/test.sh`'s MINGW
//! branch), and `scripts/test.sh` runs it on Linux under Wine with Claude Code's Windows
//! build and the cross-built `pagent.exe`: `PAGENT_E2E_WINE=1`, `PAGENT_CLAUDE` and
//! `PAGENT_TEST_BIN` naming the two Windows programs, which then run under `wine` and are
//! handed paths as Wine names them (`Z:\...`). On Windows `pagent install` also stages the
//! binary as `scripts\pagent.exe`, which the exec-form hooks start with no shell; the
//! short command names run the staged launcher from the Bash tool (Git Bash), so its path
//! must hold no backslash. Each step's failure is collected and all are said at the end,
//! with what `pagent install` and the CLI printed.

use std::ffi::OsString;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::mock::{MockApi, Reply};

/// A run of one program: how it ended and what it said.
struct Ran {
    code: Option<i32>,
    stdout: String,
    stderr: String,
}

impl Ran {
    fn said(&self) -> String {
        let tail = |s: &str| s[s.len().saturating_sub(3000)..].to_owned();
        format!(
            "exit {:?}\n{}{}",
            self.code,
            tail(&self.stdout),
            tail(&self.stderr)
        )
    }
}

/// The programs under test, how they are started, and the scratch places they share.
struct Installed {
    wine: bool,
    claude: PathBuf,
    pagent: PathBuf,
    tmp: tempfile::TempDir,
    problems: Vec<String>,
}

impl Installed {
    fn new() -> Installed {
        let claude = std::env::var_os("PAGENT_CLAUDE")
            .map(PathBuf::from)
            .expect("PAGENT_CLAUDE names the Claude Code CLI to test (scripts/test.sh sets it)");
        let pagent = std::env::var_os("PAGENT_TEST_BIN").map_or_else(
            || PathBuf::from(env!("CARGO_BIN_EXE_pagent")),
            PathBuf::from,
        );
        let tmp = tempfile::tempdir().unwrap();
        for dir in ["project", "home"] {
            std::fs::create_dir_all(tmp.path().join(dir)).unwrap();
        }
        Installed {
            wine: std::env::var_os("PAGENT_E2E_WINE").is_some_and(|v| v == "1"),
            claude,
            pagent,
            tmp,
            problems: Vec::new(),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.tmp.path().join(name)
    }

    /// `path` as the programs under test name it: as it is, or under Wine `Z:\...`.
    fn native(&self, path: &Path) -> OsString {
        if !self.wine {
            return path.into();
        }
        let absolute = std::path::absolute(path).unwrap();
        format!("Z:{}", absolute.display().to_string().replace('/', "\\")).into()
    }

    /// `program` started as the platform starts it, with a clean, offline environment
    /// talking to `mock`, in the project.
    fn command(&self, program: &Path, mock: &MockApi) -> Command {
        let mut command = if self.wine {
            let mut wine = Command::new("wine");
            wine.arg(program);
            wine
        } else {
            Command::new(program)
        };
        for (key, _) in std::env::vars_os() {
            let key = key.to_string_lossy();
            if ["CLAUDE", "PAGENT", "ANTHROPIC"]
                .iter()
                .any(|p| key.starts_with(p))
            {
                command.env_remove(&*key);
            }
        }
        let home = self.native(&self.path("home"));
        command
            .current_dir(self.path("project"))
            .env("HOME", &home)
            .env("USERPROFILE", &home)
            .env("PAGENT_CONFIG_DIR", self.native(&self.path("config")))
            .env("CLAUDE_CONFIG_DIR", self.native(&self.path("claude")))
            .env("PAGENT_MARKETPLACE_DIR", self.native(&self.path("market")))
            .env("NO_COLOR", "1")
            .env("ANTHROPIC_BASE_URL", mock.base_url())
            .env("ANTHROPIC_API_KEY", "sk-test")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_TELEMETRY", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env("CLAUDE_CODE_MAX_RETRIES", "0");
        command
    }

    fn pagent(&self, mock: &MockApi, args: &[&str]) -> Ran {
        let mut command = self.command(&self.pagent, mock);
        command
            .arg("--project")
            .arg(self.native(&self.path("project")))
            .args(args);
        run(command)
    }

    fn claude(&self, mock: &MockApi, args: &[&str]) -> Ran {
        let mut command = self.command(&self.claude, mock);
        command.args(args);
        run(command)
    }

    /// `pagent status --json` of the project, and its words for a failure.
    fn status(&self, mock: &MockApi) -> (Value, String) {
        let ran = self.pagent(mock, &["status", "--json"]);
        let value = serde_json::from_str(&ran.stdout).unwrap_or(Value::Null);
        (value, ran.said())
    }

    fn expect(&mut self, holds: bool, problem: impl FnOnce() -> String) {
        if !holds {
            self.problems.push(problem());
        }
    }

    /// A slash command answered by pagent's UserPromptExpansion hook, which blocks the
    /// expansion: no shell runs and the model is never asked.
    fn slash(&mut self, mock: &MockApi, command: &str, expected: &str) {
        let ran = self.claude(mock, &["-p", command, "--output-format", "json"]);
        let answer: Value = serde_json::from_str(&ran.stdout).unwrap_or(Value::Null);
        let result = answer["result"].as_str().unwrap_or("").to_owned();
        self.expect(result.contains(expected), || {
            format!(
                "{command} answered {result:?}, not {expected:?}: {}",
                ran.said()
            )
        });
    }
}

/// Runs `command` with no stdin, its output captured, killed past five minutes (a first
/// `pagent install` under Wine on a loaded machine takes one).
fn run(mut command: Command) -> Ran {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|err| panic!("cannot start {command:?}: {err}"));
    let reader = |mut pipe: Box<dyn Read + Send>| {
        std::thread::spawn(move || {
            let mut bytes = Vec::new();
            let _ = pipe.read_to_end(&mut bytes);
            String::from_utf8_lossy(&bytes).into_owned()
        })
    };
    let stdout = reader(Box::new(child.stdout.take().unwrap()));
    let stderr = reader(Box::new(child.stderr.take().unwrap()));
    let deadline = Instant::now() + Duration::from_secs(300);
    let code = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status.code();
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            break None;
        }
        std::thread::sleep(Duration::from_millis(50));
    };
    Ran {
        code,
        stdout: stdout.join().unwrap(),
        stderr: stderr.join().unwrap(),
    }
}

/// One user turn per request: each a fresh conversation, told the task and nothing of a
/// Stop hook (the plugin's hooks leave `pagent loop`'s agent alone).
fn fresh_conversations_told_the_task(requests: &[Value]) -> Result<(), String> {
    let users: Vec<usize> = requests
        .iter()
        .map(|request| {
            request["messages"]
                .as_array()
                .map_or(0, |m| m.iter().filter(|m| m["role"] == "user").count())
        })
        .collect();
    if users != [1, 1] {
        return Err(format!(
            "pagent loop's iterations are not two fresh conversations: {users:?} user turns"
        ));
    }
    let told: Vec<String> = requests.iter().map(|r| r["messages"].to_string()).collect();
    if told
        .iter()
        .any(|t| !t.contains("Fix it") || t.contains("Stop hook"))
    {
        return Err(format!(
            "pagent loop's agent was not told the task alone: {told:#?}"
        ));
    }
    Ok(())
}

/// The short name `/pagent-status` runs the staged launcher by a path with no backslash
/// (Git Bash, which runs it on Windows, would read one as an escape).
fn short_name_runs_a_plain_launcher_path(claude_config: &Path) -> Result<(), String> {
    let short = claude_config.join("commands/pagent-status.md");
    let text = std::fs::read_to_string(&short).unwrap_or_default();
    let launcher: Vec<&str> = text
        .lines()
        .filter(|line| line.starts_with('"') && line.contains("/scripts/pagent\" "))
        .collect();
    if launcher.len() != 1 || launcher[0].contains('\\') {
        return Err(format!(
            "the short name /pagent-status runs no plain launcher path: {launcher:?} in {}",
            short.display()
        ));
    }
    Ok(())
}

/// The Ralph loop through the installed plugin: the Stop hook blocks the first answer with
/// iteration 2 of the task and lets the promise end the loop; then pagent answers
/// `/pagent:status`, and `/pagent:cancel` cancels a second loop.
fn ralph_loop_status_and_cancel(t: &mut Installed) -> Ran {
    let mock = MockApi::start(vec![
        Reply::text("First pass done."),
        Reply::text("Finished.\n<promise>DONE</promise>"),
    ]);
    let setup = t.pagent(&mock, &["ralph", "--promise", "DONE", "Fix it"]);
    t.expect(setup.code == Some(0), || {
        format!("pagent ralph failed: {}", setup.said())
    });
    let claude = t.claude(
        &mock,
        &[
            "-p",
            "Fix it",
            "--output-format",
            "stream-json",
            "--verbose",
            "--include-hook-events",
            "--permission-mode",
            "acceptEdits",
            "--max-turns",
            "10",
        ],
    );
    t.expect(claude.code == Some(0), || {
        format!("claude exited {:?}", claude.code)
    });
    let (got, said) = t.status(&mock);
    t.expect(
        got["status"] == "complete" && got["iterations"] == 2,
        || format!("after the loop, pagent status: {said}"),
    );
    let told = mock.requests().get(1).map(Value::to_string);
    t.expect(
        told.is_some_and(|t| t.contains("iteration 2 of 25") && t.contains("Fix it")),
        || "the second request does not carry the Stop hook's re-prompt".to_owned(),
    );
    t.slash(&mock, "/pagent:status", "pagent ralph loop · complete");
    let again = t.pagent(&mock, &["ralph", "Again"]);
    t.expect(again.code == Some(0), || {
        format!("pagent ralph failed: {}", again.said())
    });
    t.slash(&mock, "/pagent:cancel", "pagent: cancelled the Ralph loop");
    let (got, said) = t.status(&mock);
    t.expect(got["status"] == "cancelled", || {
        format!("after /pagent:cancel, pagent status: {said}")
    });
    let turns = mock.requests().len();
    t.expect(turns == 2, || {
        format!("{turns} turns reached the mock, not 2")
    });
    claude
}

/// `pagent loop --agent claude`: pagent starts a fresh Claude Code per iteration through
/// its process door (an absolute program, a clean PATH; on Windows a job object), reads its
/// stream and decides; the installed plugin's Stop hook runs in each and stays silent.
fn pagent_loop_drives_claude_code(t: &mut Installed) {
    let mock = MockApi::start(vec![
        Reply::text("First pass done."),
        Reply::text("Finished.\n<promise>DONE</promise>"),
    ]);
    let agent = t.native(&t.claude);
    let agent = agent.to_string_lossy();
    let ran = t.pagent(
        &mock,
        &[
            "loop",
            "--agent",
            "claude",
            "--agent-bin",
            &agent,
            "--retries",
            "0",
            "ralph",
            "--promise",
            "DONE",
            "Fix it",
        ],
    );
    let (got, said) = t.status(&mock);
    t.expect(
        ran.code == Some(0) && got["status"] == "complete" && got["iterations"] == 2,
        || format!("pagent loop: {}; pagent status: {said}", ran.said()),
    );
    if let Err(problem) = fresh_conversations_told_the_task(&mock.requests()) {
        t.problems.push(problem);
    }
}

#[test]
#[ignore = "needs the Claude Code CLI (PAGENT_CLAUDE; scripts/test.sh)"]
fn pagent_install_then_a_ralph_loop_status_cancel_and_pagent_loop_through_claude_code() {
    let started = Instant::now();
    let mut t = Installed::new();
    let mock = MockApi::start(Vec::new());
    let plugin = t.native(&PathBuf::from(env!("CARGO_MANIFEST_DIR")));
    let mut command = t.command(&t.pagent, &mock);
    command
        .arg("install")
        .arg("--claude")
        .arg(t.native(&t.claude))
        .arg("--from")
        .arg(plugin);
    let install = run(command);
    t.expect(install.code == Some(0), || {
        format!("pagent install failed: {}", install.said())
    });
    let claude = ralph_loop_status_and_cancel(&mut t);
    pagent_loop_drives_claude_code(&mut t);
    if let Err(problem) = short_name_runs_a_plain_launcher_path(&t.path("claude")) {
        t.problems.push(problem);
    }
    let under = if t.wine { ", under Wine" } else { "" };
    assert!(
        t.problems.is_empty(),
        "with Claude Code {}{under}:\n- {}\n\npagent install said:\n{}\n\nthe CLI's Ralph \
         loop said:\n{}",
        t.claude.display(),
        t.problems.join("\n- "),
        install.said(),
        claude.said()
    );
    eprintln!(
        "installed: pagent install, a Ralph loop, /pagent:status, /pagent:cancel and pagent \
         loop through {}{under}: {:.1?}",
        t.claude.display(),
        started.elapsed()
    );
}

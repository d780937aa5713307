//! The real Claude Code terminal UI under tmux, as a person uses it: typed keys in,
//! the screen (`capture-pane`) out, with pagent set up by `pagent install` (the plugin
//! from a local marketplace, the binary in its data folder, the short command names).
//!
//! Each session gets its own tmux server (`tests/support/tmux.rs`, shared with the
//! integration suite), so tests run in parallel and a dead test leaves nothing behind. The
//! CLI starts through a small script with an explicit environment: the test's HOME
//! (pre-seeded so onboarding, the API-key question and the trust dialog are skipped, see
//! CLAUDE-CODE.md), the mock API, and pagent installed as a user installs it (its hooks
//! start the binary `pagent install` staged). Waiting is polling the screen with a
//! deadline, never a fixed sleep; a wait that times out fails with the screen the user
//! would have seen.
//!
//! Claude Code wraps its own lines (with an indent) at the terminal's width, so texts are
//! compared with the screen's whitespace collapsed and its gutter marks (`⎿`, `●`)
//! dropped ([`flat`]): a sentence matches at 80 columns as at 200.

use std::fs;
use std::process::Command;
use std::time::{Duration, Instant};

use pagent_test_support::tmux::Server;
use pagent_test_support::wait::wait_showing_every;

use serde_json::json;

use crate::harness::{E2e, claude_binary, pagent_bin, repo_root};

/// The API key the UI is started with; its last 20 characters are pre-approved.
const API_KEY: &str = "sk-ant-api03-pagent-e2e-interactive-0123456789";
/// Longest any single wait for the screen may take.
pub const WAIT: Duration = Duration::from_secs(45);

pub struct Tmux {
    server: Server,
    started: Instant,
}

fn sh_quote(text: &str) -> String {
    format!("'{}'", text.replace('\'', "'\\''"))
}

impl Tmux {
    /// Starts `claude` in the project of `e2e`, in a 200x50 terminal, with pagent
    /// installed from this repository into the test's HOME as a user installs it.
    pub fn start(e2e: &E2e) -> Tmux {
        Tmux::with(e2e).start()
    }

    /// [`Tmux::start`] in a terminal of `width` x `height` (80x24: what a user has).
    pub fn start_sized(e2e: &E2e, width: u16, height: u16) -> Tmux {
        Tmux::with(e2e).size(width, height).start()
    }

    /// [`Tmux::start`], logged in with a subscription instead of an API key
    /// (`harness::SUBSCRIPTION`): the one login with usage limits.
    pub fn start_subscribed(e2e: &E2e) -> Tmux {
        Tmux::with(e2e).subscribed().start()
    }

    /// `claude` in a terminal of `width` x `height` with whatever the test set up in its
    /// HOME and no pagent of the test's own: no `pagent install`, no `PAGENT_BIN`, and a
    /// `PATH` of the system's folders only.
    pub fn start_as_set_up(e2e: &E2e, width: u16, height: u16) -> Tmux {
        Tmux::with(e2e).size(width, height).without_pagent().start()
    }

    /// A start to set up: a terminal size, more of the CLI's arguments or environment.
    pub fn with(e2e: &E2e) -> Start<'_> {
        Start {
            e2e,
            size: (200, 50),
            subscribed: false,
            pagent: true,
            args: Vec::new(),
            env: Vec::new(),
        }
    }

    fn start_as(start: Start<'_>) -> Tmux {
        let e2e = start.e2e;
        seed_home(e2e);
        let mut vars = vec![
            ("HOME".to_owned(), e2e.home.display().to_string()),
            ("LANG".to_owned(), "C.UTF-8".into()),
            ("ANTHROPIC_BASE_URL".to_owned(), e2e.mock.base_url()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_owned(),
                "1".into(),
            ),
            ("DISABLE_TELEMETRY".to_owned(), "1".into()),
            ("DISABLE_AUTOUPDATER".to_owned(), "1".into()),
            ("CLAUDE_CODE_MAX_RETRIES".to_owned(), "0".into()),
            (
                "PAGENT_CONFIG_DIR".to_owned(),
                e2e.config.display().to_string(),
            ),
        ];
        if start.pagent {
            install_pagent(e2e);
            vars.push(("PATH".to_owned(), std::env::var("PATH").unwrap_or_default()));
            // The plugin's hooks start the binary `pagent install` staged (no launcher);
            // when recording, the recorder's wrapper is the PAGENT_BIN it hands over to.
            let hook_bin = e2e.hook_bin();
            if hook_bin != pagent_bin() {
                vars.push(("PAGENT_BIN".to_owned(), hook_bin.display().to_string()));
            }
        } else {
            vars.push(("PATH".to_owned(), "/usr/bin:/bin".into()));
        }
        let script = e2e.home.join("start-claude.sh");
        if start.subscribed {
            vars.extend(
                crate::harness::SUBSCRIPTION
                    .iter()
                    .map(|(key, value)| ((*key).to_owned(), (*value).to_owned())),
            );
        } else {
            vars.push(("ANTHROPIC_API_KEY".to_owned(), API_KEY.into()));
        }
        vars.extend(start.env);
        let mut text = String::from("#!/bin/sh\nexec env -i TERM=\"$TERM\"");
        for (key, value) in vars {
            text.push_str(&format!(" {key}={}", sh_quote(&value)));
        }
        text.push_str(&format!(
            " {} --permission-mode acceptEdits --allowedTools 'Bash(sleep:*)'",
            sh_quote(&claude_binary().display().to_string()),
        ));
        for arg in &start.args {
            text.push_str(&format!(" {}", sh_quote(arg)));
        }
        text.push('\n');
        fs::write(&script, text).unwrap();
        let tmux = Tmux {
            server: Server::start(
                "pagent-e2e",
                start.size,
                &e2e.project,
                &format!("sh {}", sh_quote(&script.display().to_string())),
            ),
            started: Instant::now(),
        };
        // History to look back over what scrolled away.
        tmux.run(&["set-option", "-g", "history-limit", "5000"]);
        tmux.wait_for("accept edits on");
        tmux
    }

    fn run(&self, args: &[&str]) -> String {
        self.server.run(args)
    }

    /// Types `text` (literally) and presses Enter, as a person would: once the typed text
    /// is on screen and the screen has settled (the slash-command menu drawn: two looks
    /// in a row the same), so that Enter submits what was typed.
    pub fn type_line(&self, text: &str) {
        self.run(&["send-keys", "-t", "ui", "-l", text]);
        let typed = text.lines().next().unwrap_or(text);
        let mut last = String::new();
        self.wait_until(
            "the typed text to appear and the screen to settle",
            |screen| {
                let settled = screen == last;
                screen.clone_into(&mut last);
                settled && screen.contains(typed)
            },
        );
        self.run(&["send-keys", "-t", "ui", "Enter"]);
    }

    pub fn key(&self, key: &str) {
        self.run(&["send-keys", "-t", "ui", key]);
    }

    /// The whole screen and what scrolled off it.
    pub fn screen(&self) -> String {
        self.run(&["capture-pane", "-p", "-J", "-t", "ui", "-S", "-5000"])
    }

    /// Waits until the screen contains `text` (as [`flat`] compares); returns the screen.
    pub fn wait_for(&self, text: &str) -> String {
        let wanted = flat(text);
        self.wait_until(&format!("{text:?} on screen"), |s| {
            flat(s).contains(&wanted)
        })
    }

    /// Claude Code 2.1.330's "send now" of a queued message: ctrl+x ctrl+s.
    pub fn send_now(&self) {
        self.key("C-x");
        self.key("C-s");
    }

    /// Waits until `ready(screen)`; fails with the screen after [`WAIT`].
    pub fn wait_until(&self, what: &str, ready: impl FnMut(&str) -> bool) -> String {
        self.wait_longer(what, WAIT, ready)
    }

    /// [`Tmux::wait_until`] with its own limit (Claude Code's own timers: a usage limit's
    /// reset, its resume a minute after).
    pub fn wait_longer(
        &self,
        what: &str,
        limit: Duration,
        mut ready: impl FnMut(&str) -> bool,
    ) -> String {
        wait_showing_every(limit, Duration::from_millis(100), what, || {
            let screen = self.screen();
            if ready(&screen) {
                Ok(screen)
            } else {
                Err(screen)
            }
        })
    }
}

/// How [`Tmux::with`] starts the CLI.
pub struct Start<'a> {
    e2e: &'a E2e,
    size: (u16, u16),
    subscribed: bool,
    pagent: bool,
    args: Vec<String>,
    env: Vec<(String, String)>,
}

impl Start<'_> {
    pub fn size(mut self, width: u16, height: u16) -> Self {
        self.size = (width, height);
        self
    }

    pub fn subscribed(mut self) -> Self {
        self.subscribed = true;
        self
    }

    /// No pagent of the test's own: no `pagent install`, no `PAGENT_BIN`, and a `PATH` of
    /// the system's folders only (whatever the test set up in HOME stays).
    pub fn without_pagent(mut self) -> Self {
        self.pagent = false;
        self
    }

    /// More arguments for `claude` (`--resume ID`).
    pub fn args(mut self, args: &[&str]) -> Self {
        self.args.extend(args.iter().map(|a| (*a).to_owned()));
        self
    }

    /// A variable of the CLI's environment (and so of every hook it runs).
    pub fn env(mut self, key: &str, value: &str) -> Self {
        self.env.push((key.to_owned(), value.to_owned()));
        self
    }

    pub fn start(self) -> Tmux {
        Tmux::start_as(self)
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        if std::thread::panicking() {
            // The CLI may have exited (and its server with it): a second panic would abort.
            let screen = self
                .server
                .try_run(&["capture-pane", "-p", "-J", "-t", "ui", "-S", "-5000"])
                .unwrap_or_else(|err| format!("(no screen: {err})"));
            eprintln!(
                "===== the screen after {:.1?} =====\n{screen}",
                self.started.elapsed(),
            );
        }
    }
}

/// `pagent install` into the test's HOME, with this checkout as the plugin and the binary
/// under test: the one writer of the short command names the interactive tests type.
fn install_pagent(e2e: &E2e) {
    let mut command = Command::new(pagent_bin());
    command
        .args(["install", "--claude"])
        .arg(claude_binary())
        .arg("--from")
        .arg(repo_root())
        .arg("--binary")
        .arg(pagent_bin())
        .current_dir(&e2e.project)
        .env("HOME", &e2e.home)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1");
    for key in [
        "CLAUDE_CONFIG_DIR",
        "XDG_DATA_HOME",
        "PAGENT_MARKETPLACE_DIR",
        "PAGENT_PLUGIN_SOURCE",
    ] {
        command.env_remove(key);
    }
    let out = command.output().unwrap();
    assert!(
        out.status.success(),
        "pagent install: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    for short in ["ralph", "ralph-cancel", "pagent-run", "pagent-status"] {
        let file = e2e.home.join(format!(".claude/commands/{short}.md"));
        assert!(
            fs::read_to_string(&file).is_ok_and(|t| t.contains("pagent install")),
            "pagent install wrote no /{short}: {}",
            String::from_utf8_lossy(&out.stdout)
        );
    }
}

/// `.claude.json` that starts the UI straight at the prompt (CLAUDE-CODE.md).
fn seed_home(e2e: &E2e) {
    let approved = &API_KEY[API_KEY.len() - 20..];
    let config = json!({
        "hasCompletedOnboarding": true,
        "theme": "dark",
        "customApiKeyResponses": {"approved": [approved], "rejected": []},
        "projects": {e2e.project.display().to_string(): {"hasTrustDialogAccepted": true}},
    });
    fs::write(e2e.home.join(".claude.json"), config.to_string()).unwrap();
}

/// `text` with its whitespace collapsed to single spaces and the UI's gutter marks
/// dropped, so a sentence Claude Code wrapped at the terminal's width still matches.
pub fn flat(text: &str) -> String {
    text.split(|c: char| c.is_whitespace() || "⎿●⏺│".contains(c))
        .filter(|w| !w.is_empty())
        .collect::<Vec<_>>()
        .join(" ")
}

/// How often `text` appears in `screen`, as [`flat`] compares.
pub fn count(screen: &str, text: &str) -> usize {
    flat(screen).matches(&flat(text)).count()
}

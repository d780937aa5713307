//! One agent process for one `pagent loop` iteration: start it, feed it the prompt, read
//! its stream, enforce its time limits, and say how it ended.
//!
//! The agent runs in its own process group (so Ctrl-C reaches pagent, which stops it
//! deliberately) with `PAGENT_DRIVER=loop` (so the Stop hook inside a Claude Code child
//! stands aside). Its stdout and stderr are kept verbatim in a log file per iteration.
//! Two clocks guard it: the iteration timeout (the whole run) and the watchdog (no output
//! at all for too long, the signature of a hung agent). Either stops the whole group:
//! SIGTERM, a grace period, then SIGKILL.
//!
//! Which CLI and how to start it is [`spec`]; reading its two streams line by line,
//! memory bounded, is [`reader`].

mod options;
mod reader;
pub mod review;
mod spec;

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::mpsc::{self, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use pagent_protocol::stream::{
    LimitHit, LimitWatch, RunSummary, StreamEvent, UsageRecord, parse_line, parse_usage,
};

use crate::cli::env;
use crate::process::signals;
use crate::process::{Input, SearchPath, Streams};

pub use options::Options;
use reader::{Msg, spawn_reader};
pub use spec::AgentSpec;

/// How long a stopped agent gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(3);
/// How much of a custom command's stdout is kept as its final message.
const KEEP_STDOUT: usize = 64 * 1024;
/// How long the agent's pipes may stay open after it ended (a grandchild that left its
/// group holds them) before the run counts as ended anyway.
const DRAIN: Duration = Duration::from_secs(2);

#[derive(Debug, Clone, Copy)]
pub struct Limits {
    pub iteration_timeout: Duration,
    pub idle_timeout: Duration,
}

/// How the agent process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum End {
    Exited(Option<i32>),
    TimedOut,
    /// The watchdog fired: no output for the idle timeout.
    Stalled,
    Interrupted,
    /// The caller asked to stop (the loop was cancelled or replaced meanwhile).
    Stopped,
    NotStarted(String),
}

#[derive(Debug)]
pub struct AgentRun {
    pub end: End,
    pub summary: RunSummary,
    /// The usage records the agent printed (for budgets and status).
    pub usage: Vec<UsageRecord>,
    /// The usage limit the run ended on, if the agent printed one.
    pub limit: Option<LimitHit>,
    /// The service error the run ended on (the agent's words), if it reported one.
    pub outage: Option<String>,
    /// The last bytes of stdout (a custom command's final message).
    pub stdout_tail: String,
    pub elapsed: Duration,
}

impl AgentRun {
    /// The agent's final message, which `promise_in_output` is checked against.
    pub fn final_message(&self) -> Option<String> {
        self.summary
            .final_message
            .clone()
            .or_else(|| (!self.stdout_tail.trim().is_empty()).then(|| self.stdout_tail.clone()))
    }

    /// Why this run failed rather than ended (a crash, a bad exit, an API error): what
    /// the runner classifies and retries (`pagent_engine::failure`).
    pub fn failure(&self, spec: &AgentSpec) -> Option<String> {
        let errors = || self.summary.errors.last().cloned().unwrap_or_default();
        match (&self.end, spec.kind()) {
            (End::Exited(code), Some(_)) if self.summary.is_error => Some(format!(
                "the agent reported an error (exit {}): {}",
                code.unwrap_or(-1),
                errors()
            )),
            (End::Exited(Some(0)), _) => None,
            (End::Exited(_), Some(_)) if self.summary.finished => None,
            (End::Exited(code), _) => Some(match code {
                Some(code) => format!(
                    "the agent exited with code {code}{}",
                    if errors().is_empty() {
                        String::new()
                    } else {
                        format!(": {}", errors())
                    }
                ),
                None => "the agent was killed by a signal".to_owned(),
            }),
            _ => None,
        }
    }
}

/// Runs the agent once in `cwd` with `prompt` (already written to `prompt_file`), logging
/// its output to `log`, reporting stream events. `on_event` is also called about ten
/// times a second with `None`; when it returns false the agent is stopped.
#[allow(clippy::too_many_arguments)]
pub fn run_agent(
    spec: &AgentSpec,
    search: &SearchPath,
    cwd: &Path,
    prompt: &str,
    prompt_file: &Path,
    log_file: Option<File>,
    env: &[(&str, String)],
    limits: Limits,
    on_event: &mut dyn FnMut(Option<&StreamEvent>) -> bool,
) -> AgentRun {
    run_agent_with(
        spec,
        search,
        cwd,
        prompt,
        prompt_file,
        log_file,
        env,
        &[],
        limits,
        on_event,
    )
}

/// [`run_agent`], with these variables removed from the agent's environment (a reviewer
/// started inside a Claude Code session must not look like part of it).
#[allow(clippy::too_many_arguments)]
pub fn run_agent_with(
    spec: &AgentSpec,
    search: &SearchPath,
    cwd: &Path,
    prompt: &str,
    prompt_file: &Path,
    mut log_file: Option<File>,
    env: &[(&str, String)],
    remove: &[&str],
    limits: Limits,
    on_event: &mut dyn FnMut(Option<&StreamEvent>) -> bool,
) -> AgentRun {
    let started = Instant::now();
    let not_started = |why: String| AgentRun {
        end: End::NotStarted(why),
        summary: RunSummary::default(),
        usage: Vec::new(),
        limit: None,
        outage: None,
        stdout_tail: String::new(),
        elapsed: started.elapsed(),
    };
    let (mut launch, prompt_on_stdin) = spec.build(prompt_file, cwd, search);
    launch = launch
        // OpenCode takes its project folder from $PWD, not from its working directory: an
        // inherited PWD made it write into the folder pagent was started from.
        .env("PWD", cwd)
        .env(env::PAGENT_DRIVER, "loop")
        // The launcher's loop guard is for a chain of launchers; this binary ends any
        // chain, so the agent's own hooks start afresh (and take the launcher's fast path).
        .env_remove(env::PAGENT_LAUNCHER_SEEN)
        .env(env::PAGENT_PROMPT_FILE, prompt_file);
    for key in remove {
        launch = launch.env_remove(key);
    }
    for (key, value) in env {
        launch = launch.env(key, value);
    }
    let streams = Streams {
        stdin: if prompt_on_stdin {
            Input::Piped
        } else {
            Input::Null
        },
        output: true,
    };
    let mut child = match launch.spawn(streams) {
        Ok(child) => child,
        Err(err) => return not_started(format!("cannot start {}: {err}", spec.label())),
    };
    let (tx, rx) = mpsc::channel();
    if let Some(mut stdin) = child.take_stdin() {
        let prompt = prompt.to_owned();
        thread::spawn(move || {
            let _ = stdin.write_all(prompt.as_bytes());
        });
    }
    spawn_reader(child.take_stdout(), tx.clone(), Msg::Out);
    spawn_reader(child.take_stderr(), tx, Msg::Err);

    let kind = spec.kind();
    let mut summary = RunSummary::default();
    let mut usage = Vec::new();
    let mut limit_watch = LimitWatch::default();
    let mut tail = String::new();
    let mut open = 2;
    let mut last_output = Instant::now();
    let mut end = None;
    let mut exited_at: Option<(Instant, Option<i32>)> = None;
    while open > 0 {
        if signals::interrupted() {
            end = Some(End::Interrupted);
            break;
        }
        if started.elapsed() >= limits.iteration_timeout {
            end = Some(End::TimedOut);
            break;
        }
        if last_output.elapsed() >= limits.idle_timeout {
            end = Some(End::Stalled);
            break;
        }
        match rx.recv_timeout(Duration::from_millis(100)) {
            Ok(Msg::Out(line)) => {
                last_output = Instant::now();
                if let Some(f) = log_file.as_mut() {
                    let _ = f.write_all(line.as_bytes());
                }
                if let Some(kind) = kind {
                    usage.extend(parse_usage(kind, line.trim_end()));
                    limit_watch.push(kind, line.trim_end());
                    for event in parse_line(kind, line.trim_end()) {
                        // A tool reported again (Codex: started, then completed) is told once.
                        if summary.push(&event) && !on_event(Some(&event)) {
                            end = Some(End::Stopped);
                        }
                    }
                }
                if end.is_some() {
                    break;
                }
                tail.push_str(&line);
                if tail.len() > 2 * KEEP_STDOUT {
                    let cut = tail.len() - KEEP_STDOUT;
                    let cut = (cut..tail.len())
                        .find(|i| tail.is_char_boundary(*i))
                        .unwrap_or(tail.len());
                    tail.drain(..cut);
                }
            }
            Ok(Msg::Err(line)) => {
                last_output = Instant::now();
                if let Some(f) = log_file.as_mut() {
                    let _ = write!(f, "[stderr] {line}");
                }
            }
            Ok(Msg::Closed) => open -= 1,
            Err(RecvTimeoutError::Timeout) => {
                if !on_event(None) {
                    end = Some(End::Stopped);
                    break;
                }
                // The agent ended but something it started holds its pipes open.
                match exited_at {
                    None => exited_at = child.try_wait().map(|code| (Instant::now(), code)),
                    Some((at, code)) if at.elapsed() >= DRAIN => {
                        child.kill_leftovers();
                        end = Some(End::Exited(code));
                        break;
                    }
                    Some(_) => {}
                }
            }
            Err(RecvTimeoutError::Disconnected) => break,
        }
    }
    let end = match end {
        Some(End::Exited(code)) => End::Exited(code),
        Some(end) => {
            child.stop(GRACE);
            end
        }
        // Anything the agent left running in its group goes with it.
        None => End::Exited(child.wait()),
    };
    let start = tail.len().saturating_sub(KEEP_STDOUT);
    let start = (start..tail.len())
        .find(|i| tail.is_char_boundary(*i))
        .unwrap_or(tail.len());
    AgentRun {
        end,
        summary,
        usage,
        limit: limit_watch.hit(),
        outage: limit_watch.outage(),
        stdout_tail: tail[start..].to_owned(),
        elapsed: started.elapsed(),
    }
}

#[cfg(test)]
mod tests;

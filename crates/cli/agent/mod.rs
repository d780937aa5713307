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
//! Which CLI and how to start it is [`spec`]; what one process is started with, and its
//! run from start to end, is [`invocation`]; reading its two streams line by line, memory
//! bounded, is [`reader`].

mod invocation;
mod options;
mod reader;
pub mod review;
mod spec;

use std::time::Duration;

use pagent_protocol::stream::{LimitHit, RunSummary, UsageRecord};

pub use invocation::Invocation;
pub use options::Options;
pub use spec::{AgentSpec, Sandbox};

/// The most bytes of one run's output written to its log: a run that prints without end
/// must not fill the disk before the folder's cap is next applied.
pub const LOG_CAP: u64 = 64 * 1024 * 1024;

/// A run's log, written up to its cap; past it, one line says the rest is not kept.
struct CappedLog {
    file: std::fs::File,
    written: u64,
    cap: u64,
}

impl CappedLog {
    fn new(file: std::fs::File) -> CappedLog {
        CappedLog {
            file,
            written: 0,
            cap: LOG_CAP,
        }
    }

    fn write(&mut self, bytes: &[u8]) {
        use std::io::Write;
        if self.written >= self.cap {
            return;
        }
        self.written = self.written.saturating_add(bytes.len() as u64);
        let _ = if self.written < self.cap {
            self.file.write_all(bytes)
        } else {
            writeln!(
                self.file,
                "[pagent] this run printed more than {} MiB: the rest is not logged",
                self.cap >> 20
            )
        };
    }
}

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
    /// A run that never started, and why.
    fn not_started(why: String, elapsed: Duration) -> AgentRun {
        AgentRun {
            end: End::NotStarted(why),
            summary: RunSummary::default(),
            usage: Vec::new(),
            limit: None,
            outage: None,
            stdout_tail: String::new(),
            elapsed,
        }
    }

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

#[cfg(test)]
mod tests;

//! One agent process from start to end, as one value: [`Invocation`] says what the agent
//! is started with (which CLI, where, its prompt, its log, its environment, its clocks),
//! and [`Invocation::run`] starts it, feeds it the prompt, reads its two streams and says
//! how it ended.
//!
//! The run reads as three parts: [`Invocation::start`] (the launch through the process
//! door, the prompt on stdin, a reader thread per pipe), the watch (one message or a
//! tenth of a second at a time: Ctrl-C, the two clocks, the caller's say, an agent that
//! ended while something it started holds its pipes), and [`Output`], what the run's
//! lines leave behind (the log, the stream's summary and usage, a limit or outage seen,
//! the tail of stdout).

use std::fs::File;
use std::io::Write;
use std::path::Path;
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::thread;
use std::time::{Duration, Instant};

use pagent_protocol::stream::{
    AgentKind, LimitWatch, RunSummary, StreamEvent, UsageRecord, parse_line, parse_usage,
};

use super::reader::{Msg, spawn_reader};
use super::{AgentRun, AgentSpec, End, Limits};
use crate::cli::env;
use pagent_door::process::signals;
use pagent_door::process::{Input, Running, SearchPath, Streams};

/// How long a stopped agent gets between SIGTERM and SIGKILL.
const GRACE: Duration = Duration::from_secs(3);
/// How much of a custom command's stdout is kept as its final message.
const KEEP_STDOUT: usize = 64 * 1024;
/// How long the agent's pipes may stay open after it ended (a grandchild that left its
/// group holds them) before the run counts as ended anyway.
const DRAIN: Duration = Duration::from_secs(2);
/// How long the watch waits for a line before it looks at the clocks again.
const TICK: Duration = Duration::from_millis(100);

/// What one agent process is started with.
pub struct Invocation<'a> {
    pub spec: &'a AgentSpec,
    pub search: &'a SearchPath,
    /// The agent's working folder (and its `$PWD`).
    pub cwd: &'a Path,
    pub prompt: &'a str,
    /// The file the prompt is already written to (`$PAGENT_PROMPT_FILE`).
    pub prompt_file: &'a Path,
    /// Where its stdout and stderr are kept verbatim, if anywhere.
    pub log: Option<File>,
    /// Variables set for the agent, beside pagent's own.
    pub env: &'a [(&'a str, String)],
    /// Variables removed from its environment (a reviewer started inside a Claude Code
    /// session must not look like part of it).
    pub remove: &'a [&'a str],
    pub limits: Limits,
}

impl Invocation<'_> {
    /// Runs the agent to its end. `on_event` hears each stream event, and is asked about
    /// ten times a second with `None`; when it returns false the agent is stopped.
    pub fn run(self, on_event: &mut dyn FnMut(Option<&StreamEvent>) -> bool) -> AgentRun {
        let started = Instant::now();
        let (mut child, rx) = match self.start() {
            Ok(started) => started,
            Err(why) => return AgentRun::not_started(why, started.elapsed()),
        };
        let mut output = Output::new(self.spec.kind(), self.log);
        let end = match watch(&mut child, &rx, self.limits, &mut output, on_event) {
            Some(End::Exited(code)) => End::Exited(code),
            Some(end) => {
                child.stop(GRACE);
                end
            }
            // Anything the agent left running in its group goes with it.
            None => End::Exited(child.wait()),
        };
        output.into_run(end, started.elapsed())
    }

    /// The agent started, its prompt on its way, its two pipes read into one channel.
    fn start(&self) -> Result<(Running, Receiver<Msg>), String> {
        let (mut launch, prompt_on_stdin) =
            self.spec.build(self.prompt_file, self.cwd, self.search);
        launch = launch
            // OpenCode takes its project folder from $PWD, not from its working directory:
            // an inherited PWD made it write into the folder pagent was started from.
            .env("PWD", self.cwd)
            .env(env::PAGENT_DRIVER, "loop")
            // The launcher's loop guard is for a chain of launchers; this binary ends any
            // chain, so the agent's own hooks start afresh (and take the launcher's fast
            // path).
            .env_remove(env::PAGENT_LAUNCHER_SEEN)
            .env(env::PAGENT_PROMPT_FILE, self.prompt_file);
        for key in self.remove {
            launch = launch.env_remove(key);
        }
        for (key, value) in self.env {
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
        let mut child = launch
            .spawn(streams)
            .map_err(|err| format!("cannot start {}: {err}", self.spec.label()))?;
        if let Some(mut stdin) = child.take_stdin() {
            let prompt = self.prompt.to_owned();
            thread::spawn(move || {
                let _ = stdin.write_all(prompt.as_bytes());
            });
        }
        let (tx, rx) = mpsc::channel();
        spawn_reader(child.take_stdout(), tx.clone(), Msg::Out);
        spawn_reader(child.take_stderr(), tx, Msg::Err);
        Ok((child, rx))
    }
}

/// Reads the agent's lines until both pipes close (`None`) or something ends the run
/// first: Ctrl-C, a clock, the caller, or an agent that ended while something it started
/// holds its pipes open.
fn watch(
    child: &mut Running,
    rx: &Receiver<Msg>,
    limits: Limits,
    output: &mut Output,
    on_event: &mut dyn FnMut(Option<&StreamEvent>) -> bool,
) -> Option<End> {
    let started = Instant::now();
    let mut last_output = Instant::now();
    let mut open = 2;
    let mut exited_at: Option<(Instant, Option<i32>)> = None;
    while open > 0 {
        if signals::interrupted() {
            return Some(End::Interrupted);
        }
        if started.elapsed() >= limits.iteration_timeout {
            return Some(End::TimedOut);
        }
        if last_output.elapsed() >= limits.idle_timeout {
            return Some(End::Stalled);
        }
        match rx.recv_timeout(TICK) {
            Ok(Msg::Out(line)) => {
                last_output = Instant::now();
                if !output.out(&line, on_event) {
                    return Some(End::Stopped);
                }
            }
            Ok(Msg::Err(line)) => {
                last_output = Instant::now();
                output.err(&line);
            }
            Ok(Msg::Closed) => open -= 1,
            Err(RecvTimeoutError::Timeout) => {
                if !on_event(None) {
                    return Some(End::Stopped);
                }
                // The agent ended but something it started holds its pipes open.
                match exited_at {
                    None => exited_at = child.try_wait().map(|code| (Instant::now(), code)),
                    Some((at, code)) if at.elapsed() >= DRAIN => {
                        child.kill_leftovers();
                        return Some(End::Exited(code));
                    }
                    Some(_) => {}
                }
            }
            Err(RecvTimeoutError::Disconnected) => return None,
        }
    }
    None
}

/// What a run's lines leave behind.
struct Output {
    kind: Option<AgentKind>,
    log: Option<super::CappedLog>,
    summary: RunSummary,
    usage: Vec<UsageRecord>,
    limit_watch: LimitWatch,
    /// The last bytes of stdout, at most twice [`KEEP_STDOUT`] between cuts.
    tail: String,
}

impl Output {
    fn new(kind: Option<AgentKind>, log: Option<File>) -> Output {
        Output {
            kind,
            log: log.map(super::CappedLog::new),
            summary: RunSummary::default(),
            usage: Vec::new(),
            limit_watch: LimitWatch::default(),
            tail: String::new(),
        }
    }

    /// A line of stdout: logged, read as the agent's stream, kept in the tail; false
    /// when `on_event` asked to stop at one of its events.
    fn out(&mut self, line: &str, on_event: &mut dyn FnMut(Option<&StreamEvent>) -> bool) -> bool {
        if let Some(log) = self.log.as_mut() {
            log.write(line.as_bytes());
        }
        if let Some(kind) = self.kind {
            let record = line.trim_end();
            self.usage.extend(parse_usage(kind, record));
            self.limit_watch.push(kind, record);
            for event in parse_line(kind, record) {
                // A tool reported again (Codex: started, then completed) is told once.
                if self.summary.push(&event) && !on_event(Some(&event)) {
                    return false;
                }
            }
        }
        self.tail.push_str(line);
        if self.tail.len() > 2 * KEEP_STDOUT {
            let cut = char_boundary_after(&self.tail, self.tail.len() - KEEP_STDOUT);
            self.tail.drain(..cut);
        }
        true
    }

    /// A line of stderr: logged, marked as such.
    fn err(&mut self, line: &str) {
        if let Some(log) = self.log.as_mut() {
            log.write(format!("[stderr] {line}").as_bytes());
        }
    }

    fn into_run(self, end: End, elapsed: Duration) -> AgentRun {
        let start = char_boundary_after(&self.tail, self.tail.len().saturating_sub(KEEP_STDOUT));
        AgentRun {
            end,
            summary: self.summary,
            usage: self.usage,
            limit: self.limit_watch.hit(),
            outage: self.limit_watch.outage(),
            stdout_tail: self.tail[start..].to_owned(),
            elapsed,
        }
    }
}

/// The first character boundary of `text` at or after `at`.
fn char_boundary_after(text: &str, at: usize) -> usize {
    (at..text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len())
}

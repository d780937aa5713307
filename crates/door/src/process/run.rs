//! A child run to its end within a time limit: checks ([`Launch::run`], stdout and stderr
//! merged into one pipe, in the order a person would have seen them) and short commands
//! whose two streams are kept apart ([`Launch::output`]: `git push`, `gh`, `claude
//! plugin`).
//!
//! One thread does everything: it `poll`s the pipes, reads what is there (keeping only
//! the last `keep` bytes of each, so a chatty test suite cannot eat memory), notices the
//! child's end, the deadline and the caller's "stop" (asked a few times a second), and
//! then kills the child's whole group, so a check never leaves anything running in it.
//! A grandchild that left the group (`setsid`) may still hold a pipe open: the pipes are
//! drained for at most [`DRAIN`] more, and whatever was read by then is the output. No
//! reader thread is ever left blocked on a pipe nobody will close.

use std::io::Read;
use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use super::sys::{self, Ready};
use super::{Input, Launch, StartError};

/// How long the pipes are drained after the child ended and its group was killed.
const DRAIN: Duration = Duration::from_secs(2);
/// How often a running child's caller is asked whether to go on.
const ASK_EVERY: Duration = Duration::from_millis(200);
/// The longest one `poll` waits, so a child's end is noticed while a pipe stays open.
const TICK: Duration = Duration::from_millis(50);

/// How long a child may run and how much of its output is kept.
#[derive(Debug, Clone, Copy)]
pub struct RunLimits {
    pub timeout: Duration,
    /// Bytes kept of each stream: the last ones.
    pub keep: usize,
}

/// How a child run by [`Launch::run`] ended, with the tail of its merged output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Ran {
    /// `code` is `None` when a signal ended it.
    Exited {
        code: Option<i32>,
        output: String,
    },
    TimedOut {
        output: String,
    },
    NotStarted(String),
    /// The caller said to stop before it ended.
    Stopped,
}

/// What [`Launch::output`] collected.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Output {
    /// `None` when a signal ended it, or it was stopped at the time limit.
    pub code: Option<i32>,
    pub timed_out: bool,
    pub stdout: String,
    pub stderr: String,
}

impl Output {
    pub fn success(&self) -> bool {
        self.code == Some(0)
    }
}

/// One output pipe and the tail read from it.
struct Stream {
    pipe: std::io::PipeReader,
    tail: Vec<u8>,
    keep: usize,
    ended: bool,
}

impl Stream {
    fn new(pipe: std::io::PipeReader, keep: usize) -> Stream {
        Stream {
            pipe,
            tail: Vec::new(),
            keep,
            ended: false,
        }
    }

    /// Reads what the pipe has (it was reported readable, so this does not block).
    fn read_some(&mut self) {
        let mut buf = [0u8; 16 * 1024];
        match self.pipe.read(&mut buf) {
            Ok(0) => self.ended = true,
            Ok(n) => {
                self.tail.extend_from_slice(&buf[..n]);
                if self.tail.len() > 2 * self.keep.max(1) {
                    self.tail.drain(..self.tail.len() - self.keep);
                }
            }
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
            Err(_) => self.ended = true,
        }
    }

    fn text(&self) -> String {
        let start = self.tail.len().saturating_sub(self.keep);
        String::from_utf8_lossy(&self.tail[start..]).into_owned()
    }
}

/// How the supervision of a child ended.
enum Ending {
    Exited(ExitStatus),
    WaitFailed(std::io::Error),
    TimedOut,
    Stopped,
}

/// Reads `streams` until `child` ends, the deadline passes or `keep_going` says no; then
/// kills the group, reaps the child and drains the pipes for at most [`DRAIN`].
fn supervise(
    child: &mut Child,
    streams: &mut [Stream],
    timeout: Duration,
    keep_going: &mut dyn FnMut() -> bool,
) -> Ending {
    let started = Instant::now();
    let deadline = started + timeout;
    let mut next_ask = started + ASK_EVERY;
    let ending = loop {
        pump(
            streams,
            TICK.min(deadline.saturating_duration_since(Instant::now())),
        );
        match child.try_wait() {
            Ok(Some(status)) => break Ending::Exited(status),
            Ok(None) => {}
            Err(err) => break Ending::WaitFailed(err),
        }
        let now = Instant::now();
        if now >= deadline {
            break Ending::TimedOut;
        }
        if now >= next_ask {
            next_ask = now + ASK_EVERY;
            if !keep_going() {
                break Ending::Stopped;
            }
        }
    };
    // Whatever is left in the group goes: leftovers after an exit, everything otherwise.
    sys::signal_group(child.id(), sys::SIGKILL);
    if !matches!(ending, Ending::Exited(_)) {
        let _ = child.kill();
        let _ = child.wait();
    }
    let drain_until = Instant::now() + DRAIN;
    while streams.iter().any(|s| !s.ended) {
        let left = drain_until.saturating_duration_since(Instant::now());
        if left.is_zero() {
            break;
        }
        pump(streams, left.min(TICK));
    }
    ending
}

/// One `poll` of the open streams for at most `wait`, reading each that is ready; sleeps
/// `wait` when every stream has ended (the child may still be running).
fn pump(streams: &mut [Stream], wait: Duration) {
    let open: Vec<usize> = (0..streams.len()).filter(|i| !streams[*i].ended).collect();
    if open.is_empty() {
        std::thread::sleep(wait.min(Duration::from_millis(10)));
        return;
    }
    let ready = {
        let fds: Vec<sys::Raw<'_>> = open.iter().map(|i| sys::raw(&streams[*i].pipe)).collect();
        sys::poll_readable(&fds, wait)
    };
    for (i, state) in open.into_iter().zip(ready) {
        if state == Ready::Readable {
            streams[i].read_some();
        }
    }
}

impl Launch {
    /// Runs the child with stdout and stderr merged into one pipe, for at most
    /// `limits.timeout`, stopping it (its whole group) as soon as `keep_going` says no.
    pub fn run(&self, limits: RunLimits, keep_going: &mut dyn FnMut() -> bool) -> Ran {
        let (reader, writer) = match std::io::pipe() {
            Ok(pair) => pair,
            Err(err) => return Ran::NotStarted(format!("cannot create a pipe: {err}")),
        };
        let writer_too = match writer.try_clone() {
            Ok(w) => w,
            Err(err) => return Ran::NotStarted(format!("cannot create a pipe: {err}")),
        };
        let mut command = match self.command(Input::Null) {
            Ok(command) => command,
            Err(err) => return Ran::NotStarted(err.to_string()),
        };
        command.stdout(writer).stderr(writer_too);
        let spawned = self.start(&mut command);
        // `command` holds the pipe's write ends; drop them so EOF arrives when the child
        // (and everything it started) is gone.
        drop(command);
        let mut child = match spawned {
            Ok(child) => child,
            Err(err) => return Ran::NotStarted(err.to_string()),
        };
        sys::adopt(&child, self.own_group);
        let mut streams = [Stream::new(reader, limits.keep)];
        let ending = supervise(&mut child, &mut streams, limits.timeout, keep_going);
        let output = streams[0].text();
        match ending {
            Ending::Exited(status) => Ran::Exited {
                code: status.code(),
                output,
            },
            Ending::WaitFailed(why) => Ran::NotStarted(why.to_string()),
            Ending::TimedOut => Ran::TimedOut { output },
            Ending::Stopped => Ran::Stopped,
        }
    }

    /// Runs the child with its two streams kept apart (each capped at `keep` bytes), for
    /// at most `timeout`; an error when it could not start.
    pub fn output(&self, timeout: Duration, keep: usize) -> Result<Output, StartError> {
        let mut command = self.command(Input::Null)?;
        command
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped());
        let mut child = self.start(&mut command)?;
        sys::adopt(&child, self.own_group);
        let (Some(out), Some(err)) = (child.stdout.take(), child.stderr.take()) else {
            let _ = child.kill();
            let _ = child.wait();
            return Err(StartError::NoPipes(self.program.path().to_path_buf()));
        };
        let mut streams = [
            Stream::new(sys::pipe_reader(out), keep),
            Stream::new(sys::pipe_reader(err), keep),
        ];
        let ending = supervise(&mut child, &mut streams, timeout, &mut || true);
        let (code, timed_out) = match ending {
            Ending::Exited(status) => (status.code(), false),
            Ending::WaitFailed(error) => {
                return Err(StartError::Wait {
                    program: self.program.path().to_path_buf(),
                    error,
                });
            }
            Ending::TimedOut | Ending::Stopped => (None, true),
        };
        Ok(Output {
            code,
            timed_out,
            stdout: streams[0].text(),
            stderr: streams[1].text(),
        })
    }
}

//! Children that outlive the call that starts them: an agent of `pagent loop` (its
//! streams read line by line by the caller), a loop of `pagent parallel`, the detached
//! notifier helper, and a set-up command that talks to the terminal.
//!
//! A [`Running`] child is owned: it is stopped as a group (SIGTERM, a grace period, then
//! SIGKILL), whatever it left in its group is killed once it has ended, and it is always
//! reaped. [`Streams`] says which pipes the caller gets.

use std::process::{Child, ChildStderr, ChildStdin, ChildStdout, Stdio};
use std::time::{Duration, Instant};

use super::sys;
use super::{Input, Launch, StartError};

/// Which of the child's streams are pipes for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Streams {
    pub stdin: Input,
    /// stdout and stderr piped (else `/dev/null`).
    pub output: bool,
}

/// A child started by [`Launch::spawn`].
#[derive(Debug)]
pub struct Running {
    child: Child,
    own_group: bool,
}

impl Running {
    /// Its process id (the group's, when it has its own).
    pub fn id(&self) -> u32 {
        self.child.id()
    }

    pub fn take_stdin(&mut self) -> Option<ChildStdin> {
        self.child.stdin.take()
    }

    pub fn take_stdout(&mut self) -> Option<ChildStdout> {
        self.child.stdout.take()
    }

    pub fn take_stderr(&mut self) -> Option<ChildStderr> {
        self.child.stderr.take()
    }

    /// `Some(exit code)` once it has ended (`Some(None)`: killed by a signal).
    pub fn try_wait(&mut self) -> Option<Option<i32>> {
        match self.child.try_wait() {
            Ok(Some(status)) => Some(status.code()),
            Ok(None) => None,
            Err(_) => Some(None),
        }
    }

    /// Waits for its end, then kills anything it left running in its group.
    pub fn wait(&mut self) -> Option<i32> {
        let code = self.child.wait().ok().and_then(|s| s.code());
        self.kill_leftovers();
        code
    }

    /// SIGTERM to the group, up to `grace` for it to end, then SIGKILL; reaped.
    pub fn stop(&mut self, grace: Duration) {
        self.signal(sys::SIGTERM);
        let deadline = Instant::now() + grace;
        while Instant::now() < deadline {
            if let Ok(Some(_)) = self.child.try_wait() {
                self.kill_leftovers();
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        self.signal(sys::SIGKILL);
        let _ = self.child.kill();
        let _ = self.child.wait();
    }

    /// SIGINT to the child alone, as a terminal's Ctrl-C would send it: a `pagent loop`
    /// of `pagent parallel` then saves its state and stops. For a stop the parent decided
    /// (a SIGTERM to it), which the children in its group did not get.
    pub fn interrupt(&mut self) {
        sys::signal_process(self.child.id(), sys::SIGINT);
    }

    /// SIGKILL to what is left of its group, after it ended.
    pub fn kill_leftovers(&mut self) {
        if self.own_group {
            sys::signal_group(self.child.id(), sys::SIGKILL);
        }
    }

    fn signal(&mut self, signal: sys::Signal) {
        if self.own_group {
            sys::signal_group(self.child.id(), signal);
        } else {
            sys::signal_process(self.child.id(), signal);
        }
    }
}

impl Launch {
    /// Starts the child and hands it back running, with the pipes `streams` asks for.
    pub fn spawn(&self, streams: Streams) -> Result<Running, StartError> {
        let mut command = self.command(streams.stdin)?;
        let output = || {
            if streams.output {
                Stdio::piped()
            } else {
                Stdio::null()
            }
        };
        command.stdout(output()).stderr(output());
        let child = self.start(&mut command)?;
        sys::adopt(&child, self.own_group);
        Ok(Running {
            child,
            own_group: self.own_group,
        })
    }

    /// Starts the child with no stdio in its own group and lets it go: nobody waits for
    /// it (the notifier helper, which must outlive a hook that returns at once).
    pub fn spawn_detached(&self) -> Result<(), StartError> {
        let mut command = self.command(Input::Null)?;
        command.stdout(Stdio::null()).stderr(Stdio::null());
        let child = self.start(&mut command)?;
        sys::adopt(&child, self.own_group);
        Ok(())
    }

    /// Runs the child with the caller's stdin, stdout and stderr (a set-up command the
    /// user watches) and waits for it; its exit code, `None` for a signal.
    pub fn status(&self) -> Result<Option<i32>, StartError> {
        let mut command = self.command(Input::Inherit)?;
        command.stdout(Stdio::inherit()).stderr(Stdio::inherit());
        let mut child = self.start(&mut command)?;
        sys::adopt(&child, self.own_group);
        let status = child.wait().map_err(|error| StartError::Wait {
            program: self.program.path().to_path_buf(),
            error,
        })?;
        Ok(status.code())
    }
}

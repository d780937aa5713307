//! Running a check command (`custom` / `command` conditions) within its time budget.
//!
//! The command runs in the project root, in its own process group, with stdin closed and
//! stdout and stderr merged into one pipe (the order a person would have seen). Only the
//! last [`KEEP`] bytes are kept while reading, so a chatty test suite cannot eat memory.
//! When the budget runs out the whole group is killed, not just the shell; when the command
//! ends, anything it left running in its group is killed too, so a check can never keep
//! the hook (or a pipe) open behind it. While it runs, the caller is asked a few times a
//! second whether to go on: a loop cancelled meanwhile stops its check at once.

use std::io::Read;
use std::os::unix::process::CommandExt;
use std::path::Path;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use pagent_engine::{Check, CheckOutcome, CheckShape};

/// Bytes of output kept (the engine then keeps the last couple of thousand characters).
const KEEP: usize = 64 * 1024;
use crate::cli::env;
/// How long to wait for the output pipe to close after the command ended.
const DRAIN: Duration = Duration::from_secs(2);

/// How often a running check asks whether to go on.
const ASK_EVERY: Duration = Duration::from_millis(200);

/// Runs `check` in `root` for the exit condition of `stage`, while `keep_going` says so.
pub fn run_check(
    root: &Path,
    check: &Check,
    stage: &str,
    keep_going: &mut dyn FnMut() -> bool,
) -> CheckOutcome {
    let root_text = root.to_string_lossy();
    match run_command_while(
        root,
        check,
        &[
            (env::PAGENT_STAGE, stage),
            (env::PAGENT_PROJECT_DIR, &root_text),
        ],
        keep_going,
    ) {
        Ran::Exited { code: Some(0), .. } => CheckOutcome::Passed,
        Ran::Exited { code, output } => CheckOutcome::Failed { code, tail: output },
        Ran::TimedOut { output } => CheckOutcome::TimedOut {
            after_secs: check.timeout_secs,
            tail: output,
        },
        Ran::NotStarted(why) => CheckOutcome::Error(why),
        Ran::Stopped => CheckOutcome::Error("stopped: the loop ended while it ran".into()),
    }
}

/// How a command ended, with the tail of its merged output.
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

/// Runs `check` in `cwd` with extra environment variables.
pub fn run_command(cwd: &Path, check: &Check, env: &[(&str, &str)]) -> Ran {
    run_command_while(cwd, check, env, &mut || true)
}

/// [`run_command`], stopping it (the whole group) as soon as `keep_going` says no.
pub fn run_command_while(
    cwd: &Path,
    check: &Check,
    env: &[(&str, &str)],
    keep_going: &mut dyn FnMut() -> bool,
) -> Ran {
    let mut command = match &check.shape {
        CheckShape::Shell(line) => {
            let mut c = Command::new("sh");
            c.arg("-c").arg(line);
            c
        }
        CheckShape::Argv(argv) => {
            let mut c = Command::new(&argv[0]);
            c.args(&argv[1..]);
            c
        }
    };
    let (mut reader, writer) = match std::io::pipe() {
        Ok(pair) => pair,
        Err(err) => return Ran::NotStarted(format!("cannot create a pipe: {err}")),
    };
    let writer_too = match writer.try_clone() {
        Ok(w) => w,
        Err(err) => return Ran::NotStarted(format!("cannot create a pipe: {err}")),
    };
    command
        .current_dir(cwd)
        .stdin(Stdio::null())
        .stdout(writer)
        .stderr(writer_too)
        .process_group(0);
    for (key, value) in env {
        command.env(key, value);
    }
    let spawned = command.spawn();
    // `command` holds the pipe's write ends; drop them so EOF arrives when the child exits.
    drop(command);
    let mut child = match spawned {
        Ok(child) => child,
        Err(err) => return Ran::NotStarted(err.to_string()),
    };
    let pid = child.id();

    let (output_tx, output_rx) = mpsc::channel();
    thread::spawn(move || {
        let mut tail: Vec<u8> = Vec::new();
        let mut buf = [0u8; 16 * 1024];
        while let Ok(n) = reader.read(&mut buf) {
            if n == 0 {
                break;
            }
            tail.extend_from_slice(&buf[..n]);
            if tail.len() > 2 * KEEP {
                tail.drain(..tail.len() - KEEP);
            }
        }
        let start = tail.len().saturating_sub(KEEP);
        let _ = output_tx.send(String::from_utf8_lossy(&tail[start..]).into_owned());
    });
    let (status_tx, status_rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = status_tx.send(child.wait());
    });

    let deadline = std::time::Instant::now() + Duration::from_secs(check.timeout_secs);
    let waited = loop {
        let left = deadline.saturating_duration_since(std::time::Instant::now());
        match status_rx.recv_timeout(left.min(ASK_EVERY)) {
            Ok(status) => break Ok(status),
            Err(_) if left.is_zero() => break Err(false),
            Err(_) if !keep_going() => break Err(true),
            Err(_) => {}
        }
    };
    kill_group(pid);
    let output = output_rx.recv_timeout(DRAIN).unwrap_or_default();
    match waited {
        Ok(Ok(status)) => Ran::Exited {
            code: status.code(),
            output,
        },
        Ok(Err(err)) => Ran::NotStarted(err.to_string()),
        Err(stopped) => {
            let _ = status_rx.recv_timeout(DRAIN);
            if stopped {
                Ran::Stopped
            } else {
                Ran::TimedOut { output }
            }
        }
    }
}

fn kill_group(pid: u32) {
    if let Ok(pid) = i32::try_from(pid) {
        // SAFETY: kill(2) with a negative pid signals the process group we created for
        // the check; it has no memory-safety preconditions.
        unsafe {
            libc::kill(-pid, libc::SIGKILL);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::time::Instant;

    use super::*;

    fn run_check_all(root: &Path, check: &Check, stage: &str) -> CheckOutcome {
        run_check(root, check, stage, &mut || true)
    }

    #[test]
    fn a_check_stops_as_soon_as_the_caller_says_so() {
        let root = tempfile::tempdir().unwrap();
        let started = Instant::now();
        let mut asked = 0;
        let outcome = run_check(root.path(), &shell("sleep 30", 60), "s", &mut || {
            asked += 1;
            asked < 3
        });
        assert!(
            started.elapsed() < Duration::from_secs(5),
            "{:?}",
            started.elapsed()
        );
        assert!(matches!(outcome, CheckOutcome::Error(ref why) if why.contains("stopped")));
    }

    fn shell(line: &str, timeout_secs: u64) -> Check {
        Check {
            shape: CheckShape::Shell(line.into()),
            timeout_secs,
        }
    }

    #[test]
    fn passes_fails_and_keeps_the_merged_output() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(
            run_check_all(root.path(), &shell("true", 5), "s"),
            CheckOutcome::Passed
        );
        let outcome = run_check_all(
            root.path(),
            &shell("echo out; echo err >&2; echo $PAGENT_STAGE; exit 3", 5),
            "qa",
        );
        assert_eq!(
            outcome,
            CheckOutcome::Failed {
                code: Some(3),
                tail: "out\nerr\nqa\n".into()
            }
        );
        let argv = Check {
            shape: CheckShape::Argv(vec!["sh".into(), "-c".into(), "exit 4".into()]),
            timeout_secs: 5,
        };
        assert!(matches!(
            run_check_all(root.path(), &argv, "s"),
            CheckOutcome::Failed { code: Some(4), .. }
        ));
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        let argv = Check {
            shape: CheckShape::Argv(vec!["/nonexistent/program".into()]),
            timeout_secs: 5,
        };
        assert!(matches!(
            run_check_all(root.path(), &argv, "s"),
            CheckOutcome::Error(_)
        ));
    }

    #[test]
    fn times_out_and_kills_the_whole_group() {
        let root = tempfile::tempdir().unwrap();
        let started = Instant::now();
        // The background sleep holds the pipe open: only a group kill ends it.
        let outcome = run_check_all(
            root.path(),
            &shell("echo started; sleep 30 & sleep 30", 1),
            "s",
        );
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        assert_eq!(
            outcome,
            CheckOutcome::TimedOut {
                after_secs: 1,
                tail: "started\n".into()
            }
        );
    }

    #[test]
    fn background_leftovers_do_not_hold_the_check() {
        let root = tempfile::tempdir().unwrap();
        let started = Instant::now();
        assert_eq!(
            run_check_all(root.path(), &shell("sleep 30 & echo done", 20), "s"),
            CheckOutcome::Passed
        );
        assert!(started.elapsed() < Duration::from_secs(10));
    }

    #[test]
    fn keeps_only_the_tail_of_long_output() {
        let root = tempfile::tempdir().unwrap();
        let outcome = run_check_all(root.path(), &shell("seq 1 100000; exit 1", 20), "s");
        let CheckOutcome::Failed { tail, .. } = outcome else {
            panic!("{outcome:?}")
        };
        assert!(tail.len() <= KEEP);
        assert!(tail.ends_with("99999\n100000\n"));
    }
}

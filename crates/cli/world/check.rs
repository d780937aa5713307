//! Running a check command (`custom` / `command` conditions) within its time budget.
//!
//! The command is the user's (typed at set-up, or in a workflow or config they trusted),
//! so it runs in the project root, through the process door (`pagent_door::process`): by
//! absolute path (`sh` is `/bin/sh`, a bare program name is found on the cleaned `PATH`,
//! a path with a `/` is the trusted project file it names), in its own process group,
//! stdin closed, stdout and stderr merged into one pipe and only its tail kept, the whole
//! group killed when it ends, times out, or the loop is cancelled meanwhile (the caller
//! is asked a few times a second).

use std::ffi::OsStr;
use std::path::Path;
use std::time::Duration;

use pagent_engine::{Check, CheckOutcome, CheckShape};

use crate::cli::env;
use pagent_door::process::{Containment, Launch, Program, Ran, RunLimits, SearchPath};

/// Bytes of output kept (the engine then keeps the last couple of thousand characters).
const KEEP: usize = 64 * 1024;

/// Runs `check` in `root` for the exit condition of `stage`, while `keep_going` says so:
/// with the programs of `PATH` as pagent got it, inside a contained loop's walls if any
/// (the check's refusals are then its output, which the next iteration's prompt shows).
pub fn run_check(
    root: &Path,
    check: &Check,
    stage: &str,
    (path_env, walls): (Option<&OsStr>, Option<&Containment>),
    keep_going: &mut dyn FnMut() -> bool,
) -> CheckOutcome {
    let search = SearchPath::new(path_env, &[root]);
    let launch = match launch_of(root, check, &search) {
        Ok(launch) => launch,
        Err(why) => return CheckOutcome::Error(why),
    };
    let launch = match walls {
        Some(walls) => launch.contained(walls.clone()),
        None => launch,
    };
    let launch = launch
        .env(env::PAGENT_STAGE, stage)
        .env(env::PAGENT_PROJECT_DIR, root);
    let limits = RunLimits {
        timeout: Duration::from_secs(check.timeout_secs),
        keep: KEEP,
    };
    match launch.run(limits, keep_going) {
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

/// The launch of a trusted check command in `root`: a shell line through `/bin/sh`, an
/// argv by its program (a bare name on the cleaned `PATH`, else the project file).
pub fn launch_of(root: &Path, check: &Check, search: &SearchPath) -> Result<Launch, String> {
    Ok(match &check.shape {
        CheckShape::Shell(line) => Launch::shell(line, root, search),
        CheckShape::Argv(argv) => {
            let Some((program, args)) = argv.split_first() else {
                return Err("no command".into());
            };
            let program = if program.contains('/') {
                if Path::new(program).is_absolute() {
                    Program::at(program.into())
                } else {
                    Program::trusted_in_project(root, program)
                }
            } else {
                Program::named(program, search).map_err(|e| e.to_string())?
            };
            Launch::new(program, root, search).args(args)
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(line: &str, timeout_secs: u64) -> Check {
        Check {
            shape: CheckShape::Shell(line.into()),
            timeout_secs,
        }
    }

    fn run(root: &Path, check: &Check, stage: &str) -> CheckOutcome {
        let path = crate::cli::env::Env::capture().path;
        run_check(root, check, stage, (path.as_deref(), None), &mut || true)
    }

    #[test]
    fn passes_fails_and_sees_its_stage() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(
            run(root.path(), &shell("true", 5), "s"),
            CheckOutcome::Passed
        );
        let outcome = run(
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
            run(root.path(), &argv, "s"),
            CheckOutcome::Failed { code: Some(4), .. }
        ));
    }

    #[test]
    fn a_missing_program_is_an_error() {
        let root = tempfile::tempdir().unwrap();
        for program in ["/nonexistent/program", "no-such-program-anywhere"] {
            let argv = Check {
                shape: CheckShape::Argv(vec![program.into()]),
                timeout_secs: 5,
            };
            assert!(
                matches!(run(root.path(), &argv, "s"), CheckOutcome::Error(_)),
                "{program}"
            );
        }
    }

    #[test]
    fn a_timeout_is_reported_with_the_output_so_far() {
        let root = tempfile::tempdir().unwrap();
        assert_eq!(
            run(root.path(), &shell("echo started; sleep 30", 1), "s"),
            CheckOutcome::TimedOut {
                after_secs: 1,
                tail: "started\n".into()
            }
        );
    }
}

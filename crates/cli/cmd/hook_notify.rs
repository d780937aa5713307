//! `pagent hook notify`: the detached helper the loop-end notice starts
//! (`session/notify.rs`), which runs the user's notifier in its own process group and
//! kills the group once the timeout passes. Nobody reads its exit status: its stdio is
//! closed.

use std::path::Path;
use std::time::{Duration, Instant};

use crate::cli::args::NotifyHelperArgs;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::session::notify::MAX_TIMEOUT_SECS;
use pagent_door::process::{Input, Launch, NEUTRAL_DIR, Program, SearchPath, Streams};

/// The detached helper: runs the notifier in its own process group and kills the group
/// once the timeout passes. Exit status is for nobody: stdio is closed. A program named
/// by a bare name is found on the `PATH` the helper was given (already cleaned); any
/// other must be an absolute path.
pub fn run(args: &NotifyHelperArgs, env: &Env) -> ExitStatus {
    let Some((program, rest)) = args.argv.split_first() else {
        return ExitStatus::Failure;
    };
    let search = SearchPath::new(env.path.as_deref(), &[]);
    let program = if program.contains('/') {
        Program::from_setting(Path::new(program), "notify.command", &search)
    } else {
        Program::named(program, &search)
    };
    let Ok(program) = program else {
        return ExitStatus::Failure;
    };
    let streams = Streams {
        stdin: Input::Null,
        output: false,
    };
    let Ok(mut child) = Launch::new(program, Path::new(NEUTRAL_DIR), &search)
        .args(rest)
        .spawn(streams)
    else {
        return ExitStatus::Failure;
    };
    let deadline = Instant::now() + Duration::from_secs(args.timeout.clamp(1, MAX_TIMEOUT_SECS));
    loop {
        match child.try_wait() {
            Some(Some(0)) => return ExitStatus::Success,
            Some(_) => return ExitStatus::Failure,
            None if Instant::now() >= deadline => {
                child.stop(Duration::ZERO);
                return ExitStatus::Failure;
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

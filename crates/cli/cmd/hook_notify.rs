//! `pagent hook notify`: the detached helper the loop-end notice starts
//! (`session/notify.rs`), which runs the user's notifier in its own process group and
//! kills the group once the timeout passes. Nobody reads its exit status: its stdio is
//! closed. Each failure still says why on stderr, as every failure of pagent's does
//! (a test under Wine retries a run that ends with exit 1 and nothing said, issue 31).

use std::io::Write;
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
pub fn run(args: &NotifyHelperArgs, env: &Env, stderr: &mut dyn Write) -> ExitStatus {
    match notify(args, env) {
        Ok(()) => ExitStatus::Success,
        Err(why) => {
            let _ = writeln!(stderr, "pagent hook notify: {why}");
            ExitStatus::Failure
        }
    }
}

fn notify(args: &NotifyHelperArgs, env: &Env) -> Result<(), String> {
    let (program, rest) = args.argv.split_first().ok_or("no notifier command given")?;
    let search = SearchPath::new(env.path.as_deref(), &[]);
    let program = if program.contains('/') {
        Program::from_setting(Path::new(program), "notify.command", &search)
    } else {
        Program::named(program, &search)
    }
    .map_err(|err| err.to_string())?;
    let streams = Streams {
        stdin: Input::Null,
        output: false,
    };
    let mut child = Launch::new(program, Path::new(NEUTRAL_DIR), &search)
        .args(rest)
        .spawn(streams)
        .map_err(|err| err.to_string())?;
    let timeout = args.timeout.clamp(1, MAX_TIMEOUT_SECS);
    let deadline = Instant::now() + Duration::from_secs(timeout);
    loop {
        match child.try_wait() {
            Some(Some(0)) => return Ok(()),
            Some(Some(code)) => return Err(format!("the notifier exited with {code}")),
            Some(None) => return Err("the notifier was ended by a signal".to_owned()),
            None if Instant::now() >= deadline => {
                child.stop(Duration::ZERO);
                return Err(format!("the notifier was stopped after {timeout} s"));
            }
            None => std::thread::sleep(Duration::from_millis(50)),
        }
    }
}

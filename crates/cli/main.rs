//! The `pagent` binary: parse the command line, capture the environment once, run, exit.
//!
//! Everything that touches the world lives in this crate; the decisions live in
//! `pagent-engine`. `main` stays small so that the only things it does are the ones a
//! test cannot reach from `run`: reading the real environment and choosing the exit code.
//! Nothing here exits with 2: for Claude Code a hook's exit code 2 means "block".

mod agent;
mod args;
mod backpressure;
mod check;
mod cmd;
mod config;
mod env;
mod eventlog;
mod exclude;
mod exit;
mod fingerprint;
mod probe;
mod progress;
mod project;
mod secret;
mod setup;
mod signals;
mod stdin_args;
mod store;
mod transcript;
mod ui;
mod workflows;
mod worktree;
mod world;

use std::process::ExitCode;

fn main() -> ExitCode {
    if let Some(status) = cmd::hook_fast_path() {
        return status.into();
    }
    let env = env::Env::capture();
    let status = std::panic::catch_unwind(|| cmd::run(std::env::args_os().collect(), &env))
        .unwrap_or_else(|_| {
            // The panic message was already printed by the default hook.
            ui::error("internal error (a bug in pagent); nothing was blocked");
            exit::ExitStatus::Failure
        });
    status.into()
}

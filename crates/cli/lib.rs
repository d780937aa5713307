//! pagent's binary crate as a library: every subcommand, and all the I/O the engine
//! leaves to its caller (state file, transcript tail, git fingerprint, probes, checks,
//! agent processes).
//!
//! `main.rs` is a few lines over [`run`]; the library shape lets the fuzz targets reach
//! the parsers that live here (the transcript tail reader) and keeps `run` callable from
//! tests. Nothing here exits the process: [`run`] returns an [`ExitStatus`], and nothing
//! maps to exit code 2, which Claude Code reads as "block".

mod agent;
mod args;
mod backpressure;
mod check;
mod cmd;
mod config;
mod consent;
mod env;
mod eventlog;
mod exclude;
mod exit;
mod fingerprint;
mod install;
mod probe;
mod progress;
mod project;
mod secret;
mod setup;
mod signals;
mod stdin_args;
mod store;
pub mod transcript;
mod ui;
mod workflows;
mod worktree;
mod world;

pub use cmd::{hook_fast_path, run};
pub use env::Env;
pub use exit::ExitStatus;

/// Reports a panic caught by `main` (the message itself was printed by the panic hook).
pub fn report_panic() {
    ui::error("internal error (a bug in pagent); nothing was blocked");
}

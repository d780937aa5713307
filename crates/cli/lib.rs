//! pagent's binary crate as a library: every subcommand, and all the I/O the engine
//! leaves to its caller (state file, transcript tail, git fingerprint, probes, checks,
//! agent processes).
//!
//! `main.rs` is a few lines over [`run`]; the library shape lets the fuzz targets reach
//! the parsers that live here (the transcript tail reader) and keeps `run` callable from
//! tests, which call it in-process with their own environment and streams ([`Io`]).
//! Nothing here exits the process: [`run`] returns an [`ExitStatus`], and nothing maps to
//! exit code 2, which Claude Code reads as "block".

#![forbid(unsafe_code)]

// Function length is kept by clippy (issue 31): at most 80 lines (clippy.toml), in every
// room.

#[warn(clippy::too_many_lines)]
mod agent;
#[warn(clippy::too_many_lines)]
mod cli;
#[warn(clippy::too_many_lines)]
mod cmd;
#[warn(clippy::too_many_lines)]
mod dashboard;
#[warn(clippy::too_many_lines)]
mod dispatch;
#[warn(clippy::too_many_lines)]
mod hooks;
#[warn(clippy::too_many_lines)]
mod install;
#[warn(clippy::too_many_lines)]
mod io;

#[warn(clippy::too_many_lines)]
mod runner;
#[warn(clippy::too_many_lines)]
mod session;
#[warn(clippy::too_many_lines)]
mod setup;
#[warn(clippy::too_many_lines)]
mod slash;
#[warn(clippy::too_many_lines)]
mod store;
#[warn(clippy::too_many_lines)]
mod world;

pub use world::{transcript, usage};

pub use cli::env::Env;
pub use cli::exit::ExitStatus;
pub use cli::terminal::console_takes_controls;
pub use dispatch::{hand_over_to_pagent_bin, hook_fast_path, run};
pub use io::Io;

/// pagent's binary as a contained agent's network forwarder, when the walls started it
/// so (see `pagent_door::process::proxy`): its exit code, else `None`.
pub fn forward_in_sandbox() -> Option<u8> {
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    pagent_door::process::proxy::forward_if_asked(&args)
}

/// What a user can hold, for the test that counts it in `docs/surface.md`: the command
/// line as clap builds it, and every environment variable pagent reads.
pub mod surface {
    pub use crate::cli::env::READ as VARIABLES;

    pub fn command() -> clap::Command {
        <crate::cli::args::Cli as clap::CommandFactory>::command()
    }
}

/// The JSON Schemas of the files a person writes, published in `docs/schemas/`, and the
/// parsers they describe (for the tests that hold the two together).
pub mod schemas {
    pub use crate::store::config::{check as check_config, schema as config};
    pub use pagent_engine::schema::workflow;
}

/// Reports a panic caught by `main` (the message itself was printed by the panic hook).
pub fn report_panic(stderr: &mut dyn std::io::Write) {
    cli::ui::error(
        stderr,
        "internal error (a bug in pagent); nothing was blocked",
    );
}

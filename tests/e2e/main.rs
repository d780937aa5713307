//! End-to-end tests: the real Claude Code CLI against a mock Messages API written here,
//! with pagent loaded as a plugin. They prove what unit and integration tests cannot: that
//! Claude Code loads the plugin, runs its commands, calls the hook and obeys its decisions.
//! `scripts/test.sh` runs the suite once per Claude Code version of the matrix in
//! `scripts/clients.sh` (the oldest supported, the newest proven).
//!
//! They are `#[ignore]`d by default because they need the CLI (installed by
//! `scripts/install-client.sh` into target/clients/); `scripts/test.sh` installs it and runs
//! them with `cargo test --test e2e -- --ignored`. A missing CLI is a failure there, not a
//! skip.
//!
//! A Unix program (tmux, the CLIs' Unix builds): built for Windows it holds no test, so
//! that clippy for Windows can check the whole workspace; the Windows runner proves the
//! loop with scripts/ralph-e2e.py instead.
#![cfg(unix)]
#![forbid(unsafe_code)]
// Function length is kept by clippy (issue 31): at most 80 lines (clippy.toml).
#![warn(clippy::too_many_lines)]
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

use pagent_test_support::git;

mod agents;
mod budgets;
mod costs;
mod harness;
mod interactive;
mod limits;
mod marketplace;
mod mock;
mod npm;
mod quickstart;
mod registry;
mod release;
mod review;
mod sandbox;
mod scenarios;
mod team;
mod tmux;
mod untrusted;

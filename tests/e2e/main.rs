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
//! A Unix program (tmux, the CLIs' Unix builds), but for `installed.rs` and the mock it
//! uses: built for Windows it holds that one test, which the release workflow's Windows
//! runner runs natively (and `scripts/test.sh` under Wine from Linux).
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

#[cfg(unix)]
use pagent_test_support::git;

#[cfg(unix)]
mod agents;
#[cfg(unix)]
mod budgets;
#[cfg(unix)]
mod costs;
#[cfg(unix)]
mod harness;
mod installed;
#[cfg(unix)]
mod interactive;
#[cfg(unix)]
mod limits;
#[cfg(unix)]
mod marketplace;
// Windows uses only what `installed.rs` needs of it.
#[cfg_attr(not(unix), allow(dead_code, unused_imports))]
mod mock;
#[cfg(unix)]
mod npm;
#[cfg(unix)]
mod quickstart;
#[cfg(unix)]
mod registry;
#[cfg(unix)]
mod release;
#[cfg(unix)]
mod review;
#[cfg(unix)]
mod sandbox;
#[cfg(unix)]
mod scenarios;
#[cfg(unix)]
mod team;
#[cfg(unix)]
mod tmux;
#[cfg(unix)]
mod untrusted;

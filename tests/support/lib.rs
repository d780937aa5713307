//! What every test suite of pagent shares: the unit tests of `crates/cli`, the
//! integration tests (`tests/integration`) and the end-to-end tests (`tests/e2e`) all
//! take it as a dev-dependency, so each helper exists once.
//!
//! It holds the helpers that keep a test from passing, or failing, by accident:
//!
//! - [`wait`]: a test that must see something happen waits for it, polling under a
//!   deadline, instead of sleeping a guessed time and then asserting. A fixed sleep
//!   either wastes time on a fast machine or decides the test wrongly on a slow one.
//! - [`timing`]: a test that asserts how long something took measures, on the same
//!   machine and at the same moment, what a reference run takes, and sets its limit in
//!   those units. A fixed limit tuned on a quiet laptop fails under qemu or beside 64
//!   stress hooks on two shared cores; a limit that scales with the machine still fails
//!   on a real regression (a wait that never ends, quadratic work), because that grows
//!   against the reference too.
//! - [`lines`]: a child's output read on a thread, so a test waits for the line it
//!   expects under a deadline rather than blocking on a read that never returns.
//! - [`project`]: pagent's event log in a test's project (what a test asserts on, rather
//!   than on timing) and the binary under test.
//! - [`tmux`]: a terminal of the test's own (a tmux server on its own socket, killed on
//!   drop), for the tests that look at the screen a user sees.
//! - [`git`]: `git` in a folder with an identity and no signing, on any machine.
//!
//! Helpers that need pagent's own types (a test project, a command's result) live in
//! each suite's harness (`tests/integration/util`, `tests/e2e/harness`); this crate
//! knows pagent only through its files.

#![forbid(unsafe_code)]
// Function length is kept by clippy (issue 31): at most 80 lines (clippy.toml).
#![warn(clippy::too_many_lines)]
// Test support fails loudly: a helper that cannot do its job panics with what it saw,
// and a measurement says its figures on stderr (shown with a failing test).
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::print_stderr
)]

pub mod git;
pub mod lines;
pub mod project;
pub mod timing;
pub mod tmux;
pub mod wait;

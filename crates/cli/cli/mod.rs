//! The command line: arguments (and the slash commands' arguments on stdin), the
//! environment pagent reads, exit codes, and what the user sees on the terminal.

pub mod agent_args;
pub mod args;
pub mod budget_args;
pub mod clap_error;
pub mod costs;
pub mod env;
pub mod exit;
pub mod hint;
pub mod loop_args;
pub mod sandbox;
pub mod screen;
pub mod stdin_args;
pub mod task;
pub mod team_args;
pub mod terminal;
pub mod ui;

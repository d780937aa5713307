//! One thin file per subcommand: parse what the user gave, call the rooms that do the
//! work (`store`, `world`, `runner`, `install`), print. No subcommand imports another.
//!
//! Function length is kept by clippy in each command (issue 31), as in every room.

#[warn(clippy::too_many_lines)]
pub mod cancel;
#[warn(clippy::too_many_lines)]
pub mod dashboard;
#[warn(clippy::too_many_lines)]
pub mod hook;
#[warn(clippy::too_many_lines)]
pub mod hook_notify;
#[warn(clippy::too_many_lines)]
pub mod install;
#[warn(clippy::too_many_lines)]
pub mod log;
#[warn(clippy::too_many_lines)]
pub mod loop_cmd;
#[warn(clippy::too_many_lines)]
pub mod parallel;
#[warn(clippy::too_many_lines)]
pub mod pause;
#[warn(clippy::too_many_lines)]
pub mod prompt;
#[warn(clippy::too_many_lines)]
pub mod ralph;
#[warn(clippy::too_many_lines)]
pub mod resume;
#[warn(clippy::too_many_lines)]
pub mod run;
#[warn(clippy::too_many_lines)]
pub mod status;
#[warn(clippy::too_many_lines)]
pub mod team;
#[warn(clippy::too_many_lines)]
pub mod trust;

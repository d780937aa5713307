//! One thin file per subcommand: parse what the user gave, call the rooms that do the
//! work (`store`, `world`, `runner`, `install`), print. No subcommand imports another.
//!
//! Function length is kept by clippy in each command (issue 31) but the Stop and
//! PostToolUse hooks', whose use cases are moving to a room of their own; once they have,
//! the lint covers the whole crate.

#[warn(clippy::too_many_lines)]
pub mod cancel;
#[warn(clippy::too_many_lines)]
pub mod dashboard;
#[warn(clippy::too_many_lines)]
pub mod hook_compact;
#[warn(clippy::too_many_lines)]
pub mod hook_expansion;
#[warn(clippy::too_many_lines)]
pub mod hook_notify;
pub mod hook_post_tool_use;
#[warn(clippy::too_many_lines)]
pub mod hook_session_end;
pub mod hook_stop;
#[warn(clippy::too_many_lines)]
pub mod hook_stop_failure;
#[warn(clippy::too_many_lines)]
pub mod hook_user_prompt;
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

//! One thin file per subcommand: parse what the user gave, call the rooms that do the
//! work (`store`, `world`, `runner`, `install`), print. No subcommand imports another.

pub mod cancel;
pub mod dashboard;
pub mod hook;
pub mod hook_notify;
pub mod install;
pub mod log;
pub mod loop_cmd;
pub mod parallel;
pub mod pause;
pub mod prompt;
pub mod ralph;
pub mod resume;
pub mod run;
pub mod status;
pub mod team;
pub mod trust;

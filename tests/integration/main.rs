//! Integration tests of the `pagent` binary: a temp project, JSON on stdin, decisions and
//! files checked. One test binary (ripgrep's shape) so the harness is compiled once.
//!
//! They are a Unix program, also for Windows: under Wine they drive the Windows build
//! (`PAGENT_TEST_BIN`, see scripts/test.sh). Built for Windows they hold no test, so that
//! clippy for Windows can check the whole workspace.
#![cfg(unix)]
#![forbid(unsafe_code)]
// Function length is kept by clippy (issue 31): at most 80 lines (clippy.toml).
#![warn(clippy::too_many_lines)]
// Tests touch the world freely and fail loudly: the purity bans are for the engine.
#![allow(
    clippy::disallowed_methods,
    clippy::disallowed_types,
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic
)]

use pagent_test_support::git;

mod agent_git_config;
mod all_loops;
mod architecture;
mod backpressure;
mod benchmarked;
mod budgets;
mod checkers;
mod config_place;
mod consent;
mod costs;
mod crashes;
mod dashboard;
mod docs;
mod during_turn;
mod escapes;
mod failed_runs;
mod failures_speak;
mod faults;
mod hook_input;
mod hostile_configs;
mod hostile_processes;
mod hostile_repo;
mod hostile_specials;
mod install;
mod issues;
mod launcher;
mod live_display;
mod loop_json;
mod loop_options;
mod loop_runner;
mod loop_tuning;
mod never_hostage;
mod no_progress;
mod notify;
mod own_texts;
mod own_voice;
mod own_voice_attacks;
mod parallel;
mod pause;
mod pipeline;
mod platform;
mod progress;
mod ralph;
mod release;
mod review;
mod safety;
mod sandbox;
mod secrets;
mod session_words;
mod soak;
mod status;
mod stories;
mod story_prompts;
mod streams;
mod team;
mod terminal_stdin;
mod texts;
mod trial_cli;
mod usage_limits;
mod usage_limits_ends;
mod usage_limits_session;
mod user_wins;
mod util;
mod windows;
mod wording;
mod worktrees;

//! pagent's decision engine: pure functions from (event, state, world, now) to a decision
//! and the state to write back.
//!
//! Nothing in this crate touches the file system, the environment, the clock, processes
//! or stdout (`clippy.toml` bans them). What the engine needs to know about the world it
//! asks through the [`World`] trait, which the binary implements over the real project and
//! tests implement in memory. That keeps every rule of the loop (advance, re-prompt, give
//! up, ignore another session, refuse an unsealed state) testable as a table of inputs and
//! outputs, and lets the Stop hook and the external loop runner share one engine.
//!
//! The modules follow the data: a [`Workflow`] is what a user writes, validated once at
//! set-up; a [`State`] is the sealed file a loop lives in; [`Condition`]s are evaluated
//! against the [`World`]; [`decide_stop`], [`decide_iteration`] and
//! [`decide_post_tool_use`] are the loop policy; [`prompt`] is every text the model reads.

#![forbid(unsafe_code)]
// Function length is kept by clippy (issue 31): at most 80 lines (clippy.toml).
#![warn(clippy::too_many_lines)]

mod action;
pub mod backpressure;
pub mod block_cap;
pub mod budget;
mod condition;
mod decide;
pub mod failure;
pub mod limit;
pub mod merge;
pub mod notice;
mod path;
pub mod pause;
pub mod progress;
mod promise;
pub mod prompt;
pub mod render;
pub mod review;
pub mod schema;
pub mod seal;
mod state;
pub mod stories;
mod syntax;
mod time;
pub mod usage;
mod workflow;
mod world;

#[cfg(any(test, feature = "testing"))]
pub mod testing;

pub use action::Action;
pub use backpressure::FailedCheck;
pub use budget::Budget;
pub use condition::{Check, CheckShape, Condition, ConditionError, Evaluation, Finding};
pub use decide::{
    Belongs, CheckPlan, Decision, EditEvent, LogEntry, Outcome, Step, StopEvent, Whose, belongs,
    decide_iteration, decide_post_tool_use, decide_stop, record_check, record_check_log,
    whose_loop,
};
pub use path::{RelPath, RelPathError};
pub use pause::Pause;
pub use promise::contains_promise;
pub use prompt::PROMPT_FILE;
pub use render::{MESSAGE_CAP, REASON_CAP, TAIL_CAP, cap_tail, count, render_template};
pub use review::{Review, ReviewOutcome, ReviewRecord, ReviewRequest, Reviewer};
pub use state::{Driver, Kind, STATE_VERSION, SetupOptions, Stage, State, StateError, Status};
pub use syntax::{Syntax, SyntaxError, check_syntax};
pub use time::{Timestamp, format_duration};
pub use usage::{Prices, Report, Tokens, Usage};
pub use workflow::{
    DEFAULT_MAX_ITERATIONS, DEFAULT_NO_PROGRESS_LIMIT, MAX_ITERATIONS_CEILING, PromptSource,
    StageSpec, Workflow, WorkflowError,
};
pub use world::{CheckOutcome, Probe, World};

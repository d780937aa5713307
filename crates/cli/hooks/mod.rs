//! The hooks' use cases: what each Claude Code hook decides and writes, given its typed
//! input (`pagent_protocol::HookInput`), inside one frame ([`frame::run_hook`]: stand
//! aside, read, decide, print, fail open). `cmd/hook.rs` is only the call.
//!
//! - [`stop`]: Stop, the loop's engine turn (continue, notify, pause at the cap);
//! - [`stop_failure`]: StopFailure, a usage limit makes the loop wait;
//! - [`post_tool_use`]: PostToolUse, backpressure on the edited file;
//! - [`user_prompt`]: UserPromptSubmit, the user's own words pause the loop;
//! - [`expansion`]: UserPromptExpansion, pagent answers its own slash commands;
//! - [`compact`]: PreCompact and SessionStart (compact), the full prompt is due again;
//! - [`session_end`]: SessionEnd, the loop of a session that was quit waits.
//!
//! What a hook says in its own words is in [`words`]. Every hook fails open and never
//! exits 2; none writes a state that is not the user's own.

pub mod compact;
pub mod expansion;
pub mod frame;
pub mod post_tool_use;
pub mod session_end;
pub mod stop;
pub mod stop_failure;
pub mod user_prompt;
pub mod words;

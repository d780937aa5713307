//! Claude Code's wire formats, as pagent reads and writes them.
//!
//! Three shapes cross the boundary between Claude Code and pagent: the JSON a hook reads
//! on stdin ([`HookInput`]), the JSON a hook prints ([`HookOutput`]), and the lines of the
//! session transcript ([`TranscriptLine`]). They are plain serde types with no I/O, so the
//! engine, the binary, the fuzz targets and the tests all share one definition.
//!
//! Inputs follow Claude Code's own snake_case names, ignore unknown keys and default every
//! missing one: clients differ across versions (2.1.47 added `last_assistant_message`) and
//! a hook that rejects an unfamiliar payload would trap its user. Outputs skip empty fields
//! so that "allow" serialises to nothing at all.

#![forbid(unsafe_code)]
// Function length is kept by clippy (issue 31): at most 80 lines (clippy.toml).
#![warn(clippy::too_many_lines)]

pub mod bytes;
mod edit;
mod event;
mod hook;
pub mod stream;
mod transcript;

pub use edit::edited_file;
pub use event::HookEvent;
pub use hook::{Decision, HookInput, HookOutput, HookSpecificOutput};
pub use stream::{AgentKind, RunSummary, StreamEvent, parse_line};
pub use transcript::{
    ContentBlock, MessageContent, QueueLine, TokenCounts, TranscriptLine, TranscriptMessage,
    UsageLine, UsageMessage, line_timestamp,
};

//! The engine's only window on the world. The binary implements it over the real project;
//! tests implement it in memory (`testing.rs`). Methods take `&mut self` so an
//! implementation may cache (the transcript is read at most once per decision).

use crate::merge::{MergeProbe, MergeSpec};
use crate::review::{ReviewOutcome, ReviewRequest};
use crate::stories::PlanReader;
use crate::{Check, RelPath};

/// The answer to "how many lines / files are there at this path?".
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Probe {
    Count(u64),
    Missing,
    /// A folder where a file was expected, or the other way round.
    WrongKind,
    /// The path resolves outside the project (through a symlink).
    Outside,
    Error(String),
}

/// How a check command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckOutcome {
    Passed,
    Failed {
        code: Option<i32>,
        tail: String,
    },
    TimedOut {
        after_secs: u64,
        tail: String,
    },
    /// The command could not start (not found, not executable).
    Error(String),
    /// The caller chose not to run commands (e.g. `pagent status`).
    NotRun,
}

pub trait World {
    /// Non-blank lines of a file. The count may stop at `enough` (a condition asks for
    /// the whole count, which status shows against the minimum; a file is read only as
    /// far as a cap of the binary's).
    fn count_lines(&mut self, path: &RelPath, enough: u64) -> Probe;
    /// Files under a folder, recursively, without `.git` and ignored build output. The
    /// count may stop at `enough`: only whether the minimum is reached matters.
    fn count_files(&mut self, path: &RelPath, enough: u64) -> Probe;
    /// The reader of plans of stories (the stories crate's, in the binary): the engine
    /// reads no plan format itself.
    fn plans(&self) -> &dyn PlanReader;
    /// A small text file's content (a PRD's stories), or why it cannot be read.
    fn read_text(&mut self, path: &RelPath) -> Result<String, Probe>;
    /// Replaces a small text file's content with `new` when it still is `old` (a story
    /// ticked in its plan); an error says why not. Read-only callers always refuse.
    fn replace_text(&mut self, path: &RelPath, old: &str, new: &str) -> Result<(), String>;
    /// The model's last message in the main conversation, if it can be known.
    fn last_assistant_message(&mut self) -> Option<String>;
    /// Runs a check command in the project root within its timeout.
    fn run_check(&mut self, check: &Check) -> CheckOutcome;
    /// Starts the reviewer agent in the project with the request's prompt, read-only but
    /// for the listed checks, its own hooks standing aside, within the request's timeout
    /// (or less, when the caller's own time limit is nearer), and returns how it ended.
    fn run_review(&mut self, request: &ReviewRequest) -> ReviewOutcome;
    /// A digest of the working tree, equal for equal trees; `None` when it cannot be taken.
    fn fingerprint(&mut self) -> Option<String>;
    /// Whether the merge `spec` names is committed in the project's repository (a
    /// `merge_committed` condition). A world without a repository cannot tell.
    fn merge_probe(&mut self, spec: &MergeSpec) -> MergeProbe {
        let _ = spec;
        MergeProbe::Error("this world has no git repository to look at".into())
    }
}

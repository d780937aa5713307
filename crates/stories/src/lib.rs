//! The plans people already write, read as one list of stories: snarktank's `prd.json`,
//! Chief's `prd.md`, spec-kit's `tasks.md`, a Kiro spec's `tasks.md`, a ralphex plan, and
//! the GitHub issues `pagent loop --issues` copies into a plan of its own.
//!
//! Each format has its reader (one file each, chosen by content in `detect`, or named
//! with `--format`); each gives the same [`Plan`]: stories in the file's order with their
//! id, title, body, acceptance criteria, whether they are done, whether they are optional,
//! what they wait for, where they are in the file, and what marking them done changes
//! (`mark`). The plan's own validation commands (ralphex's `## Validation Commands`) come
//! with it; whether they may run is the user's consent, decided by the binary.
//!
//! A plan is a stranger's text: readers cap its size and its story count, never index
//! past a line, and are fuzzed (`fuzz/fuzz_targets/plan_*.rs`). A plan is also the
//! user's: pagent changes only the marker of the story it ticks (`mark`), and the engine
//! reads the file again after every iteration (its stories stage), so a story the user
//! ticks or unticks by hand is taken as they left it.
//!
//! The crate sits on the engine: the engine knows the formats by name ([`Format`]) and
//! asks a plan only what the loop needs (`pagent_engine::stories::StoryPlan`); [`Reader`]
//! is the reader the binary hands it. Like the engine it is pure: text in, stories out.

#![forbid(unsafe_code)]
// Function length is kept by clippy (issue 31): at most 80 lines (clippy.toml).
#![warn(clippy::too_many_lines)]

mod chief;
mod detect;
mod issues;
mod json_span;
mod kiro;
mod mark;
mod prd_json;
mod ralphex;
mod render;
mod speckit;
mod text;

use std::ops::Range;

pub use issues::{Issue, issue_number, render_issues};
pub use mark::{MarkError, mark_done};
pub use pagent_engine::stories::Format;
use pagent_engine::stories::{PlanReader, StoryPlan};

/// Plans larger than this are refused (a plan is read at every decision).
pub const MAX_PLAN_BYTES: usize = 4 * 1024 * 1024;
/// More stories than this is not a plan a loop can work through.
pub const MAX_STORIES: usize = 10_000;

/// A plan: its stories in file order, and the commands it asks to run after each.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    pub format: Format,
    pub title: Option<String>,
    pub stories: Vec<Story>,
    /// The plan's own validation commands, as written (each a line for `sh -c`).
    pub checks: Vec<String>,
}

/// One story, whatever the format calls it (a user story, a task, an issue).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Story {
    pub id: String,
    pub title: String,
    /// Description and context (a spec-kit task's phase, a Kiro task's details).
    pub body: String,
    pub criteria: Vec<String>,
    pub done: bool,
    /// Left for the user: the loop neither picks it nor waits for it (Kiro's `[ ]*`).
    pub optional: bool,
    /// Ids of the stories this one waits for.
    pub depends_on: Vec<String>,
    /// Lower first; without one, file order.
    pub priority: Option<i64>,
    pub notes: Option<String>,
    /// The 1-based line where the story starts.
    pub line: usize,
    /// The story's bytes in the file.
    pub span: Range<usize>,
    /// What marking it done changes, in file order (nothing when it is done).
    pub(crate) marks: Vec<Mark>,
}

/// One change of a tick: a byte, a value, or a line inserted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Mark {
    /// The byte at `at` becomes `to` (a checkbox's ` ` becomes `x`).
    Byte { at: usize, to: u8 },
    /// The bytes in `range` become `text` (a status `todo`, a JSON `false`).
    Replace { range: Range<usize>, text: String },
    /// `text` goes in at `at` (a status line a story did not have).
    Insert { at: usize, text: String },
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("it is larger than {} MiB", MAX_PLAN_BYTES >> 20)]
    TooLarge,
    #[error("it has more than {MAX_STORIES} stories")]
    TooMany,
    #[error("it is not {kind}: {why}", kind = .0.describe(), why = .1)]
    Invalid(Format, String),
    #[error("it has no stories {}", empty_hint(*.0))]
    Empty(Format),
    #[error("two stories have the id {0:?} (lines {1} and {2}); ids must be unique")]
    Duplicate(String, usize, usize),
    #[error("the story on line {0} has no id")]
    NoId(usize),
    #[error(
        "pagent cannot tell which kind of plan it is; name it with --format (prd-json, chief, spec-kit, kiro, ralphex)"
    )]
    Unknown,
}

fn empty_hint(format: Format) -> &'static str {
    match format {
        Format::PrdJson => "(no \"userStories\")",
        Format::Chief => "(no `### US-001: Title` headings)",
        Format::SpecKit => "(no `- [ ] T001 Description` tasks)",
        Format::Kiro => "(no `- [ ] 1. Task` checkboxes)",
        Format::Ralphex => "(no `### Task 1: Title` sections)",
        Format::Issues => "(no `- [ ] #12 Title` lines)",
    }
}

impl Plan {
    /// Reads `text` as `format`, or as the format its content shows.
    pub fn read(text: &str, format: Option<Format>) -> Result<Plan, PlanError> {
        if text.len() > MAX_PLAN_BYTES {
            return Err(PlanError::TooLarge);
        }
        let format = format
            .or_else(|| detect::detect(text))
            .ok_or(PlanError::Unknown)?;
        let plan = match format {
            Format::PrdJson => prd_json::read(text)?,
            Format::Chief => chief::read(text),
            Format::SpecKit => speckit::read(text),
            Format::Kiro => kiro::read(text),
            Format::Ralphex => ralphex::read(text),
            Format::Issues => issues::read(text),
        };
        plan.validated()
    }

    fn validated(self) -> Result<Plan, PlanError> {
        if self.stories.is_empty() {
            return Err(PlanError::Empty(self.format));
        }
        if self.stories.len() > MAX_STORIES {
            return Err(PlanError::TooMany);
        }
        let mut seen = std::collections::HashMap::new();
        for story in &self.stories {
            if story.id.trim().is_empty() {
                return Err(PlanError::NoId(story.line));
            }
            if let Some(first) = seen.insert(story.id.as_str(), story.line) {
                return Err(PlanError::Duplicate(story.id.clone(), first, story.line));
            }
        }
        Ok(self)
    }

    pub fn story(&self, id: &str) -> Option<&Story> {
        self.stories.iter().find(|s| s.id == id)
    }

    fn required(&self) -> impl Iterator<Item = &Story> {
        self.stories.iter().filter(|s| !s.optional)
    }

    /// Stories the loop must finish (the optional ones are the user's).
    pub fn required_count(&self) -> usize {
        self.required().count()
    }

    /// Required stories done.
    pub fn done_count(&self) -> usize {
        self.required().filter(|s| s.done).count()
    }

    pub fn remaining(&self) -> usize {
        self.required_count() - self.done_count()
    }

    pub fn is_complete(&self) -> bool {
        self.required().all(|s| s.done)
    }

    /// Whether the story `id` waits for nothing that is not done.
    fn ready(&self, story: &Story) -> bool {
        story
            .depends_on
            .iter()
            .all(|dep| self.story(dep).is_some_and(|d| d.done))
    }

    /// The next story to work on: the first required story not done whose dependencies
    /// are done, lowest priority number first, file order breaking ties.
    pub fn next_story(&self) -> Option<&Story> {
        self.required()
            .filter(|s| !s.done && self.ready(s))
            .min_by_key(|s| s.priority.unwrap_or(i64::MAX))
    }

    /// Why no story is ready while some remain: each waiting story and one thing it
    /// waits for.
    pub fn waiting(&self) -> Vec<(&str, String)> {
        self.required()
            .filter(|s| !s.done)
            .filter_map(|s| {
                let dep = s
                    .depends_on
                    .iter()
                    .find(|d| !self.story(d).is_some_and(|d| d.done))?;
                let why = match self.story(dep) {
                    Some(_) => dep.clone(),
                    None => format!("{dep}, which the plan does not have"),
                };
                Some((s.id.as_str(), why))
            })
            .collect()
    }

    /// The progress in words: "2 of 5 stories in tasks.md are done; next: T003: ...".
    pub fn progress(&self, path: &str) -> (bool, String, String) {
        let total = self.required_count();
        let done = self.done_count();
        let verb = self.format.done_verb();
        if self.is_complete() {
            return (
                true,
                format!("all {total} stories in {path} {verb}"),
                format!("stories {total}/{total}"),
            );
        }
        let next = match self.next_story() {
            Some(story) => format!("next: {}: {}", story.id, story.title),
            None => {
                let waits: Vec<String> = self
                    .waiting()
                    .iter()
                    .take(3)
                    .map(|(id, dep)| format!("{id} waits for {dep}"))
                    .collect();
                format!(
                    "every story left waits for another ({}); fix the dependencies in {path}",
                    waits.join(", ")
                )
            }
        };
        (
            false,
            format!("{done} of {total} stories in {path} {verb}; {next}"),
            format!("stories {done}/{total}"),
        )
    }
}

/// The plan reader the binary hands the engine (through its world): every format here.
#[derive(Debug, Clone, Copy, Default)]
pub struct Reader;

impl PlanReader for Reader {
    fn read(&self, text: &str, format: Option<Format>) -> Result<Box<dyn StoryPlan>, String> {
        Plan::read(text, format)
            .map(|plan| Box::new(plan) as Box<dyn StoryPlan>)
            .map_err(|e| e.to_string())
    }

    fn mark_done(
        &self,
        text: &str,
        format: Option<Format>,
        id: &str,
    ) -> Result<Option<String>, String> {
        match mark_done(text, format, id) {
            Ok(new) => Ok(new),
            // Gone from the plan (the user removed it): nothing to tick.
            Err(MarkError::NoStory(_)) => Ok(None),
            Err(err) => Err(err.to_string()),
        }
    }
}

impl StoryPlan for Plan {
    fn format(&self) -> Format {
        self.format
    }

    fn is_complete(&self) -> bool {
        Plan::is_complete(self)
    }

    fn progress(&self, path: &str) -> (bool, String, String) {
        Plan::progress(self, path)
    }

    fn story_states(&self) -> Vec<(&str, bool)> {
        self.stories
            .iter()
            .map(|s| (s.id.as_str(), s.done))
            .collect()
    }

    fn next_story(&self) -> Option<(&str, String)> {
        Plan::next_story(self).map(|story| (story.id.as_str(), story.render_in(Some(self))))
    }
}

#[cfg(test)]
mod tests;

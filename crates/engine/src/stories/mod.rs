//! The stories stage, as the engine sees it: a stage whose condition is a plan of stories
//! (`{"stories_pass": "tasks.md"}`), the `{{story}}` its prompt names, and the claim
//! that ticks a story (`stage.rs`: loop policy, so it lives here).
//!
//! The engine reads no plan format itself. The formats it knows by name ([`Format`]: a
//! condition names one, the state keeps it), and it asks a read plan only what the loop
//! needs ([`StoryPlan`]); the readers of prd.json, Chief, spec-kit, Kiro, ralphex and
//! issue plans are the stories crate's (`crates/stories`, which depends on this one),
//! handed to the engine through the world ([`World::plans`](crate::World::plans)) as a
//! [`PlanReader`]. So the stack the compiler keeps is `stories -> engine`, never back.

mod stage;

pub use stage::{STORY_PROMISE, render_stage_prompt, story_in_prompt};
pub(crate) use stage::{evaluate_stage, stories_finding, story_states};

/// The kinds of plan pagent reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Format {
    /// snarktank's `prd.json` (Ralph, older Chief): `userStories` with `passes`.
    PrdJson,
    /// Chief's `prd.md`: `### US-001: Title` sections with `**Status:**`.
    Chief,
    /// GitHub spec-kit's `tasks.md`: `- [ ] T001 [P] [US1] Description` under phases.
    SpecKit,
    /// A Kiro spec's `tasks.md`: numbered, nested checkboxes, `[ ]*` optional.
    Kiro,
    /// A ralphex plan: `### Task N:` sections of checkboxes, `## Validation Commands`.
    Ralphex,
    /// GitHub issues, as `pagent loop --issues` writes them down.
    Issues,
}

impl Format {
    pub const ALL: [Format; 6] = [
        Format::PrdJson,
        Format::Chief,
        Format::SpecKit,
        Format::Kiro,
        Format::Ralphex,
        Format::Issues,
    ];

    /// The name `--format` takes and the state file keeps.
    pub fn name(self) -> &'static str {
        match self {
            Format::PrdJson => "prd-json",
            Format::Chief => "chief",
            Format::SpecKit => "spec-kit",
            Format::Kiro => "kiro",
            Format::Ralphex => "ralphex",
            Format::Issues => "issues",
        }
    }

    pub fn from_name(name: &str) -> Option<Format> {
        let name = name.trim().to_ascii_lowercase().replace(['_', '.'], "-");
        match name.as_str() {
            "prd-json" | "json" | "prd" => Some(Format::PrdJson),
            "chief" | "prd-md" => Some(Format::Chief),
            "spec-kit" | "speckit" => Some(Format::SpecKit),
            "kiro" => Some(Format::Kiro),
            "ralphex" => Some(Format::Ralphex),
            "issues" | "github" => Some(Format::Issues),
            _ => None,
        }
    }

    /// The format in a few words, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            Format::PrdJson => "a prd.json (userStories)",
            Format::Chief => "a Chief prd.md",
            Format::SpecKit => "a spec-kit tasks.md",
            Format::Kiro => "a Kiro tasks.md",
            Format::Ralphex => "a ralphex plan",
            Format::Issues => "a list of GitHub issues",
        }
    }

    /// How a done story is said: prd.json's stories "pass", the others "are done".
    pub fn done_verb(self) -> &'static str {
        match self {
            Format::PrdJson => "pass",
            _ => "are done",
        }
    }
}

/// A plan of stories, read: what the loop asks of it. The stories crate's `Plan` is one.
pub trait StoryPlan {
    /// The format it was read as.
    fn format(&self) -> Format;
    /// Whether every required story is done.
    fn is_complete(&self) -> bool;
    /// The `stories_pass` finding for the plan at `path`: (met, the sentence for the
    /// model, the short form), e.g. "2 of 5 stories in tasks.md are done; next: T003".
    fn progress(&self, path: &str) -> (bool, String, String);
    /// Each story's id and whether it is done, in file order.
    fn story_states(&self) -> Vec<(&str, bool)>;
    /// The next story to work on: its id and the text `{{story}}` stands for.
    fn next_story(&self) -> Option<(&str, String)>;
}

/// Reads plans of stories: the stories crate's reader is the one the binary hands over.
pub trait PlanReader: std::fmt::Debug {
    /// The plan in `text`, read as `format` or as its content shows; an error says why it
    /// is not one (a sentence that follows "is not a valid plan: ").
    fn read(&self, text: &str, format: Option<Format>) -> Result<Box<dyn StoryPlan>, String>;
    /// `text` with story `id` marked done, changing only its marker; `Ok(None)` when
    /// nothing is to change (it is done already, or the plan no longer has it); an error
    /// says why it cannot be marked.
    fn mark_done(
        &self,
        text: &str,
        format: Option<Format>,
        id: &str,
    ) -> Result<Option<String>, String>;
}

/// A reader that reads no plan: for worlds that have none (the engine's own tests).
#[derive(Debug, Clone, Copy, Default)]
pub struct NoPlans;

impl PlanReader for NoPlans {
    fn read(&self, _text: &str, _format: Option<Format>) -> Result<Box<dyn StoryPlan>, String> {
        Err("this world reads no plans".to_owned())
    }

    fn mark_done(
        &self,
        _text: &str,
        _format: Option<Format>,
        _id: &str,
    ) -> Result<Option<String>, String> {
        Err("this world reads no plans".to_owned())
    }
}

//! A story as the model reads it in its prompt, the same shape for every format:
//!
//! ```text
//! T014: Implement UserService in src/services/user.py (priority 2)
//! Phase: Phase 3: User Story 1 - Sign in (Priority: P1)
//! Depends on: T012 (done)
//! Acceptance criteria:
//! - The phase's independent test: sign in with a seeded account
//! Notes: ...
//! ```
//!
//! A plan's text is a stranger's: the story is capped (the prompt around it is capped
//! again as a whole), and nothing in it is interpreted, only laid out.

use super::{Plan, Story};
use pagent_engine::render::cap_head;

/// What `pagent parallel` asks of each story's loop beside the story itself.
const PARALLEL_NOTE: &str = "Other stories of the plan run beside this one, each on its own branch: change only what this story needs, and leave the plan file as it is (its stories are not ticked on a task's branch).";

/// A story's own text longer than this is cut: the agent can read the plan itself.
const STORY_CAP: usize = 6_000;

impl Story {
    /// The story as one task of `pagent parallel` (a Ralph loop of its own, on its own
    /// branch): the story (its first line names it in `parallel`'s plan), where it comes
    /// from, the plan's checks, and what working beside the other stories asks. The stories it depends on are not marked done or not: the
    /// task's branch starts from theirs.
    pub fn render_task(&self, plan: &Plan, path: &str) -> String {
        let mut text = format!("{}\n\nThis story is one of the plan {path}.", self.render());
        if !self.depends_on.is_empty() {
            text.push_str(
                " The stories it depends on were done first: this branch starts from their work.",
            );
        }
        if !plan.checks.is_empty() {
            text.push_str("\n\nThe plan's checks, to pass before you make the promise:");
            for check in &plan.checks {
                text.push_str(&format!("\n- `{check}`"));
            }
        }
        text.push_str("\n\n");
        text.push_str(PARALLEL_NOTE);
        text
    }

    /// The story for the model: id and title, body, dependencies, criteria, notes.
    pub fn render(&self) -> String {
        self.render_in(None)
    }

    /// As [`Story::render`], with each dependency's state when the plan is known.
    pub fn render_in(&self, plan: Option<&Plan>) -> String {
        let mut text = format!("{}: {}", self.id, self.title.trim());
        if let Some(priority) = self.priority {
            text.push_str(&format!(" (priority {priority})"));
        }
        if self.optional {
            text.push_str(" (optional)");
        }
        if !self.body.trim().is_empty() {
            text.push_str(&format!("\n{}", self.body.trim()));
        }
        if !self.depends_on.is_empty() {
            let deps: Vec<String> = self
                .depends_on
                .iter()
                .map(|dep| match plan.map(|p| p.story(dep)) {
                    Some(Some(story)) if story.done => format!("{dep} (done)"),
                    Some(Some(_)) => format!("{dep} (not done)"),
                    Some(None) => format!("{dep} (not in the plan)"),
                    None => dep.clone(),
                })
                .collect();
            text.push_str(&format!("\nDepends on: {}", deps.join(", ")));
        }
        if !self.criteria.is_empty() {
            text.push_str("\nAcceptance criteria:");
            for criterion in &self.criteria {
                text.push_str(&format!("\n- {}", criterion.trim()));
            }
        }
        if let Some(notes) = self.notes.as_deref().filter(|n| !n.trim().is_empty()) {
            text.push_str(&format!("\nNotes: {}", notes.trim()));
        }
        cap_head(
            &text,
            STORY_CAP,
            "story cut to keep the prompt short; the plan file has all of it",
        )
    }
}

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

/// A story's own text longer than this is cut: the agent can read the plan itself.
const STORY_CAP: usize = 6_000;

impl Story {
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

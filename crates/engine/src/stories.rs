//! PRD user stories: the `prd.json` format Chief and Ralph use, the `stories_pass`
//! condition's verdict, and the `{{story}}` placeholder that names the next story.
//!
//! ```json
//! {"project": "todo", "userStories": [
//!   {"id": "US-001", "title": "Add a task", "description": "...",
//!    "acceptanceCriteria": ["..."], "priority": 1, "passes": false}
//! ]}
//! ```
//!
//! The agent marks a story done by setting its `passes` to true (and appends what it did
//! to `progress.md`); pagent only reads the file. The next story is the one with the
//! lowest `priority` number that does not pass, file order breaking ties.

use serde::Deserialize;

use crate::{Condition, State, World};

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Prd {
    pub project: Option<String>,
    #[serde(rename = "branchName")]
    pub branch_name: Option<String>,
    #[serde(rename = "userStories")]
    pub user_stories: Vec<Story>,
}

#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(default)]
pub struct Story {
    pub id: String,
    pub title: String,
    pub description: String,
    #[serde(rename = "acceptanceCriteria")]
    pub acceptance_criteria: Vec<String>,
    /// Lower numbers first; a story without one goes last.
    pub priority: Option<i64>,
    pub passes: bool,
    pub notes: Option<String>,
}

impl Prd {
    pub fn parse(text: &str) -> Result<Prd, String> {
        let prd: Prd = serde_json::from_str(text).map_err(|e| e.to_string())?;
        if prd.user_stories.is_empty() {
            return Err("it has no \"userStories\"".to_owned());
        }
        Ok(prd)
    }

    pub fn next_story(&self) -> Option<&Story> {
        self.user_stories
            .iter()
            .filter(|s| !s.passes)
            .min_by_key(|s| s.priority.unwrap_or(i64::MAX))
    }

    pub fn passing(&self) -> usize {
        self.user_stories.iter().filter(|s| s.passes).count()
    }

    pub fn remaining(&self) -> usize {
        self.user_stories.len() - self.passing()
    }
}

impl Story {
    /// The story as the model reads it in its prompt.
    pub fn render(&self) -> String {
        let mut text = format!("{}: {}", self.id, self.title);
        if let Some(priority) = self.priority {
            text.push_str(&format!(" (priority {priority})"));
        }
        if !self.description.trim().is_empty() {
            text.push_str(&format!("\n{}", self.description.trim()));
        }
        if !self.acceptance_criteria.is_empty() {
            text.push_str("\nAcceptance criteria:");
            for criterion in &self.acceptance_criteria {
                text.push_str(&format!("\n- {criterion}"));
            }
        }
        if let Some(notes) = self.notes.as_deref().filter(|n| !n.trim().is_empty()) {
            text.push_str(&format!("\nNotes: {}", notes.trim()));
        }
        text
    }
}

/// Stage `index`'s prompt with `{{story}}` replaced (in workflow prompts only, never in a
/// ralph task) by the next story of the stage's
/// `stories_pass` file (or a note when none is left or the file cannot be read).
pub fn render_stage_prompt(state: &State, index: usize, world: &mut dyn World) -> String {
    let stage = &state.stages[index];
    // A ralph loop's prompt is the user's task: placeholders belong to workflows only.
    if state.kind == crate::Kind::Ralph || !stage.prompt.contains("{{story}}") {
        return stage.prompt.clone();
    }
    let story = match stage.exit_when.stories_path() {
        None => {
            "(this stage has no stories_pass condition, so there is no story to name)".to_owned()
        }
        Some(path) => match world.read_text(path).map(|text| Prd::parse(&text)) {
            Ok(Ok(prd)) => match prd.next_story() {
                Some(story) => story.render(),
                None => format!("(every story in {path} passes)"),
            },
            Ok(Err(why)) => format!("({path} is not a valid PRD: {why}; fix it first)"),
            Err(_) => format!("({path} cannot be read; create it first)"),
        },
    };
    stage.prompt.replace("{{story}}", &story)
}

impl Condition {
    /// The PRD file of a `stories_pass` condition (or of the first one inside all/any).
    pub fn stories_path(&self) -> Option<&crate::RelPath> {
        match self {
            Condition::StoriesPass(path) => Some(path),
            Condition::All(items) | Condition::Any(items) => {
                items.iter().find_map(Condition::stories_path)
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PRD: &str = r#"{"project": "todo", "userStories": [
        {"id": "US-002", "title": "List tasks", "priority": 2, "passes": false, "acceptanceCriteria": ["shows all"]},
        {"id": "US-001", "title": "Add a task", "description": "From the CLI.", "priority": 1, "passes": true},
        {"id": "US-003", "title": "Done", "priority": 2, "passes": false, "future": 1}
    ]}"#;

    #[test]
    fn the_next_story_is_the_first_highest_priority_one_not_passing() {
        let prd = Prd::parse(PRD).unwrap();
        assert_eq!(prd.next_story().unwrap().id, "US-002");
        assert_eq!((prd.passing(), prd.remaining()), (1, 2));
        assert_eq!(
            prd.next_story().unwrap().render(),
            "US-002: List tasks (priority 2)\nAcceptance criteria:\n- shows all"
        );
    }

    #[test]
    fn a_ralph_task_keeps_its_placeholders() {
        let state = State::new_ralph(
            "Fill in {{story}} and {{prd_path}}".into(),
            "DONE".into(),
            crate::SetupOptions::default(),
            None,
            crate::Timestamp(0),
        );
        let mut world = crate::testing::MemoryWorld::default();
        assert_eq!(
            render_stage_prompt(&state, 0, &mut world),
            "Fill in {{story}} and {{prd_path}}"
        );
    }

    #[test]
    fn a_story_renders_every_part_it_has() {
        let story: Story = serde_json::from_str(
            r#"{"id": "US-7", "title": "Export", "priority": 3, "description": "  As CSV. ",
                "acceptanceCriteria": ["a header row", "one line per task"], "notes": " UTF-8 "}"#,
        )
        .unwrap();
        assert_eq!(
            story.render(),
            "US-7: Export (priority 3)\nAs CSV.\nAcceptance criteria:\n- a header row\n- one line per task\nNotes: UTF-8"
        );
        let bare: Story = serde_json::from_str(
            r#"{"id": "US-8", "title": "Bare", "description": " ", "notes": " "}"#,
        )
        .unwrap();
        assert_eq!(bare.render(), "US-8: Bare");
    }

    #[test]
    fn passing_and_remaining_count_the_stories() {
        let prd = |passes: &[bool]| {
            let stories: Vec<_> = passes
                .iter()
                .map(|p| serde_json::json!({"id": "x", "passes": p}))
                .collect();
            Prd::parse(&serde_json::json!({ "userStories": stories }).to_string()).unwrap()
        };
        for (passes, passing) in [
            (&[false, false, false][..], 0),
            (&[true, false, true][..], 2),
            (&[true, true, true][..], 3),
        ] {
            let prd = prd(passes);
            assert_eq!(prd.passing(), passing, "{passes:?}");
            assert_eq!(prd.remaining(), 3 - passing, "{passes:?}");
        }
    }

    #[test]
    fn a_story_without_priority_comes_last() {
        let prd = Prd::parse(
            r#"{"userStories": [{"id": "A", "passes": false}, {"id": "B", "priority": 9, "passes": false}]}"#,
        )
        .unwrap();
        assert_eq!(prd.next_story().unwrap().id, "B");
    }

    fn pipeline(prompt: &str, exit_when: serde_json::Value) -> State {
        let workflow = crate::Workflow::from_json(
            &serde_json::json!({"stages": [{"name": "build", "prompt": "p", "exit_when": exit_when}]}),
            "w",
        )
        .unwrap();
        State::new_pipeline(
            &workflow,
            vec![prompt.to_owned()],
            crate::SetupOptions::default(),
            None,
            crate::Timestamp(0),
        )
    }

    #[test]
    fn a_workflow_prompt_names_the_next_story_or_why_it_cannot() {
        let prompt = "Do {{story}} now.";
        let stories =
            serde_json::json!({"all": [{"file_exists": "x"}, {"stories_pass": "prd.json"}]});
        let state = pipeline(prompt, stories.clone());
        let render = |world: crate::testing::MemoryWorld| {
            let mut world = world;
            render_stage_prompt(&state, 0, &mut world)
        };
        let with = |text: &str| crate::testing::MemoryWorld::default().text("prd.json", text);
        assert_eq!(
            render(with(PRD)),
            "Do US-002: List tasks (priority 2)\nAcceptance criteria:\n- shows all now."
        );
        assert_eq!(
            render(with(r#"{"userStories": [{"id": "A", "passes": true}]}"#)),
            "Do (every story in prd.json passes) now."
        );
        assert!(
            render(with("{}")).starts_with("Do (prd.json is not a valid PRD: it has no"),
            "{}",
            render(with("{}"))
        );
        assert_eq!(
            render(crate::testing::MemoryWorld::default()),
            "Do (prd.json cannot be read; create it first) now."
        );
        let without = pipeline(prompt, serde_json::json!({"file_exists": "x"}));
        assert_eq!(
            render_stage_prompt(&without, 0, &mut crate::testing::MemoryWorld::default()),
            "Do (this stage has no stories_pass condition, so there is no story to name) now."
        );
        let plain = pipeline("No placeholder.", stories);
        assert_eq!(
            render_stage_prompt(&plain, 0, &mut with(PRD)),
            "No placeholder."
        );
    }

    #[test]
    fn invalid_prds_say_why() {
        assert!(Prd::parse("{}").unwrap_err().contains("no \"userStories\""));
        assert!(Prd::parse("{\"userStories\": 3}").is_err());
        assert!(Prd::parse("not json").is_err());
    }
}

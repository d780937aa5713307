//! snarktank's `prd.json`, the format Ralph and Chief's first versions read
//! (MiniCodeMonkey/chief, `docs/concepts/prd-format.md` of its JSON days):
//!
//! ```json
//! {"project": "todo", "userStories": [
//!   {"id": "US-001", "title": "Add a task", "description": "...",
//!    "acceptanceCriteria": ["..."], "priority": 1, "passes": false,
//!    "dependsOn": ["US-000"]}
//! ]}
//! ```
//!
//! The next story is the one with the lowest `priority` whose `dependsOn` all pass, file
//! order breaking ties; a story without a priority goes last. Unknown fields are kept as
//! they are: marking a story done rewrites its `passes` value (or adds `"passes": true`
//! to an object without one) and no other byte (`json_span` finds where).

use serde::Deserialize;

use super::json_span::user_story_spans;
use super::{Format, Mark, Plan, PlanError, Story};

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct Prd {
    project: Option<String>,
    #[serde(rename = "userStories")]
    user_stories: Vec<JsonStory>,
}

#[derive(Debug, Default, Deserialize)]
#[serde(default)]
struct JsonStory {
    id: String,
    title: String,
    description: String,
    #[serde(rename = "acceptanceCriteria")]
    acceptance_criteria: Vec<String>,
    priority: Option<i64>,
    passes: bool,
    notes: Option<String>,
    #[serde(rename = "dependsOn")]
    depends_on: Vec<String>,
}

pub(super) fn read(text: &str) -> Result<Plan, PlanError> {
    let invalid = |why: String| PlanError::Invalid(Format::PrdJson, why);
    let prd: Prd = serde_json::from_str(text).map_err(|e| invalid(e.to_string()))?;
    let spans = user_story_spans(text).unwrap_or_default();
    let spans_fit = spans.len() == prd.user_stories.len();
    // Line numbers counted once through the text, story by story (they are in order).
    let (mut counted_to, mut line) = (0, 1);
    let mut line_at = |at: usize| {
        let at = at.max(counted_to);
        line += text
            .get(counted_to..at)
            .map_or(0, |t| t.matches('\n').count());
        counted_to = at;
        line
    };
    let stories = prd
        .user_stories
        .into_iter()
        .enumerate()
        .map(|(index, s)| {
            let span = spans.get(index).filter(|_| spans_fit);
            let start = span.map_or(0, |s| s.object.start);
            let marks = match span {
                Some(span) if !s.passes => match &span.passes {
                    Some(range) => vec![Mark::Replace {
                        range: range.clone(),
                        text: "true".to_owned(),
                    }],
                    None => vec![Mark::Insert {
                        at: span.object.start + 1,
                        text: if span.members == 0 {
                            "\"passes\": true".to_owned()
                        } else {
                            "\"passes\": true, ".to_owned()
                        },
                    }],
                },
                _ => Vec::new(),
            };
            Story {
                id: s.id,
                title: s.title,
                body: s.description,
                criteria: s.acceptance_criteria,
                done: s.passes,
                optional: false,
                depends_on: s.depends_on,
                priority: s.priority,
                notes: s.notes,
                line: line_at(start),
                span: span.map_or(0..0, |s| s.object.clone()),
                marks,
            }
        })
        .collect();
    Ok(Plan {
        format: Format::PrdJson,
        title: prd.project,
        stories,
        checks: Vec::new(),
    })
}

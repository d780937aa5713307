//! GitHub spec-kit's `tasks.md` (github/spec-kit, `templates/tasks-template.md` and the
//! "Checklist Format" of `templates/commands/tasks.md`): phases of tasks, one per line.
//!
//! ```markdown
//! ## Phase 3: User Story 1 - Sign in (Priority: P1)
//! **Goal**: a user can sign in
//! **Independent Test**: sign in with a seeded account
//! - [ ] T012 [P] [US1] Create the User model in src/models/user.py
//! - [ ] T014 [US1] Implement UserService in src/services/user.py (depends on T012)
//! ```
//!
//! Every task is `- [ ]`, an id (`T` and digits, in execution order), `[P]` when it may
//! run in parallel, `[USn]` for the user story it serves, then its description with the
//! file it touches. Phases run in order, so file order is the order; a "(depends on T012,
//! T013)" in a description is taken as written. The phase's title, goal and independent
//! test are the task's context. `/speckit.implement` marks a finished task `[X]`, and so
//! does pagent: one byte.

use super::text::{Checkbox, Line, bold_field, checkbox, heading, lines};
use super::{Format, Mark, Plan, Story};

/// The `T001` a task's text starts with.
pub(super) fn task_id(text: &str) -> Option<&str> {
    let end = text.find([' ', '\t']).unwrap_or(text.len());
    let id = &text[..end];
    let digits = id.strip_prefix('T')?;
    (!digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit())).then_some(id)
}

/// `[P]`, `[US1]` and the description after them.
fn markers(rest: &str) -> (bool, Option<&str>, &str) {
    let mut rest = rest.trim_start();
    let mut parallel = false;
    let mut story = None;
    while let Some(inner) = rest.strip_prefix('[').and_then(|r| r.split_once(']')) {
        let (label, after) = inner;
        if label == "P" {
            parallel = true;
        } else if label.len() <= 12 && !label.contains(' ') && !label.is_empty() {
            story = Some(label);
        } else {
            break;
        }
        rest = after.trim_start();
    }
    (parallel, story, rest)
}

/// The ids after "depends on" in a description.
fn depends_on(description: &str) -> Vec<String> {
    let lower = description.to_ascii_lowercase();
    let Some(at) = lower.find("depends on") else {
        return Vec::new();
    };
    description[at + "depends on".len()..]
        .split([',', ' ', ')', ';'])
        .map(|w| w.trim_matches(|c: char| !c.is_ascii_alphanumeric()))
        .take_while(|w| w.is_empty() || w.eq_ignore_ascii_case("and") || task_id(w).is_some())
        .filter(|w| task_id(w).is_some())
        .map(str::to_owned)
        .collect()
}

#[derive(Default)]
struct Phase {
    title: Option<String>,
    goal: Option<String>,
    test: Option<String>,
    section: Option<String>,
}

pub(super) fn read(text: &str) -> Plan {
    let mut plan = Plan {
        format: Format::SpecKit,
        title: None,
        stories: Vec::new(),
        checks: Vec::new(),
    };
    let mut phase = Phase::default();
    // The last task and its checkbox's indent, while lines under it may add to its body.
    let mut last: Option<usize> = None;
    for line in lines(text).iter().filter(|l| !l.fenced) {
        if let Some((level, title)) = heading(line.text) {
            last = None;
            match level {
                1 => {
                    plan.title.get_or_insert_with(|| {
                        title.trim_start_matches("Tasks:").trim().to_owned()
                    });
                }
                2 => {
                    phase = Phase {
                        title: Some(title.to_owned()),
                        ..Phase::default()
                    }
                }
                _ => phase.section = Some(title.to_owned()),
            }
            continue;
        }
        if let Some((_, goal)) =
            bold_field(line.text, "Goal").or_else(|| bold_field(line.text, "Purpose"))
        {
            phase.goal = Some(goal.to_owned());
            continue;
        }
        if let Some((_, test)) = bold_field(line.text, "Independent Test") {
            phase.test = Some(test.to_owned());
            continue;
        }
        if let Some(item) = checkbox(line.text) {
            last = None;
            let Some(id) = task_id(item.text) else {
                continue;
            };
            plan.stories.push(task(&phase, line, &item, id));
            last = Some(item.indent);
            continue;
        }
        // A line indented under a task belongs to it; anything else ends it.
        let indent = line.text.len() - line.text.trim_start().len();
        match (last, plan.stories.last_mut()) {
            (Some(task_indent), Some(story)) if indent > task_indent => {
                let extra = line.text.trim();
                if !extra.is_empty() {
                    story
                        .body
                        .push_str(if story.body.is_empty() { "" } else { "\n" });
                    story.body.push_str(extra);
                }
                story.span.end = line.next;
            }
            _ if line.text.trim().is_empty() => {}
            _ => last = None,
        }
    }
    plan
}

/// A task's story: its checkbox line, with what its phase says about it.
fn task(phase: &Phase, line: &Line<'_>, item: &Checkbox<'_>, id: &str) -> Story {
    let (parallel, story_label, description) = markers(&item.text[id.len()..]);
    let mut body = Vec::new();
    if let Some(title) = &phase.title {
        body.push(format!("Phase: {title}"));
    }
    if let Some(goal) = &phase.goal {
        body.push(format!("Goal of the phase: {goal}"));
    }
    if let Some(section) = &phase.section {
        body.push(format!("Section: {section}"));
    }
    if let Some(label) = story_label {
        body.push(format!("User story: {label}"));
    }
    if parallel {
        body.push("Marked [P] (parallel): it needs no unfinished task around it.".to_owned());
    }
    let done = item.checked();
    Story {
        id: id.to_owned(),
        title: description.to_owned(),
        body: body.join("\n"),
        criteria: phase
            .test
            .iter()
            .map(|t| format!("The phase's independent test: {t}"))
            .collect(),
        done,
        depends_on: depends_on(description),
        line: line.number,
        span: line.start..line.next,
        marks: if done {
            Vec::new()
        } else {
            vec![Mark::Byte {
                at: line.start + item.at,
                to: b'X',
            }]
        },
        ..Story::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn markers_and_dependencies_are_read_as_written() {
        assert_eq!(
            markers(" [P] [US1] Create model in src/a.py"),
            (true, Some("US1"), "Create model in src/a.py")
        );
        assert_eq!(markers(" [US2]"), (false, Some("US2"), ""));
        assert_eq!(
            markers(" [not a label] x"),
            (false, None, "[not a label] x")
        );
        assert_eq!(
            depends_on("Implement it (depends on T012, T013 and T020)"),
            ["T012", "T013", "T020"]
        );
        assert!(depends_on("Depends on nothing").is_empty());
        assert_eq!(task_id("T001 x"), Some("T001"));
        assert_eq!(task_id("T"), None);
        assert_eq!(task_id("Tx1"), None);
    }
}

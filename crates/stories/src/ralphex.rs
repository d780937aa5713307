//! A ralphex plan (umputun/ralphex: the README's "Plan File Format" and
//! `pkg/plan/parse.go`):
//!
//! ```markdown
//! # Plan: Add user authentication
//! ## Validation Commands
//! - `go test ./...`
//! ### Task 1: Add auth middleware
//! - [ ] Create the JWT middleware
//! - [ ] Add tests
//! ```
//!
//! A task is a `### Task N:` or `### Iteration N:` heading (N may be `2.5` or `2a`) and
//! the checkboxes under it, indented or not, until the next task, a `##` heading, or a
//! `#` heading after the title (`###` and deeper subsections stay in the task). A task is
//! done when every checkbox in it is ticked; a checkbox whose text shows a box (`[ ]` in
//! backticks, a format example) is not work, as ralphex counts it, and a task with no
//! work is done. Marking a task done ticks its open boxes, one byte each. The list items
//! of `## Validation Commands` are the commands to run after each task, code ticks
//! removed: they run only with the user's consent.

use super::text::{checkbox, heading, lines, unquote_code};
use super::{Format, Mark, Plan, Story};

/// `Task 1: Title` or `Iteration 2a: Title`: ("Task 1", title).
pub(super) fn task_heading(text: &str) -> Option<(String, &str)> {
    let (word, rest) = text.split_once([' ', '\t'])?;
    if word != "Task" && word != "Iteration" {
        return None;
    }
    let (number, title) = rest.split_once(':')?;
    let number = number.trim();
    (!number.is_empty() && !number.contains(' '))
        .then(|| (format!("{word} {number}"), title.trim()))
}

/// Text that shows a box rather than asks for work (`use [ ] for open items`).
fn shows_a_box(text: &str) -> bool {
    ["[ ]", "[x]", "[X]", "[]"].iter().any(|b| text.contains(b))
}

pub(super) fn read(text: &str) -> Plan {
    let mut plan = Plan {
        format: Format::Ralphex,
        title: None,
        stories: Vec::new(),
        checks: Vec::new(),
    };
    let mut in_task = false;
    let mut in_commands = false;
    for line in lines(text).iter().filter(|l| !l.fenced) {
        if let Some((level, heading_text)) = heading(line.text) {
            in_commands = false;
            if level == 1 && plan.title.is_none() {
                plan.title = Some(heading_text.trim_start_matches("Plan:").trim().to_owned());
                continue;
            }
            if let Some((id, title)) = task_heading(heading_text).filter(|_| level == 3) {
                plan.stories.push(Story {
                    id,
                    title: title.to_owned(),
                    done: true,
                    line: line.number,
                    span: line.start..line.next,
                    ..Story::default()
                });
                in_task = true;
                continue;
            }
            if level <= 2 {
                in_task = false;
                in_commands =
                    level == 2 && heading_text.eq_ignore_ascii_case("Validation Commands");
                continue;
            }
        }
        if in_commands {
            let item = line.text.trim();
            if let Some(command) = item.strip_prefix("- ").or_else(|| item.strip_prefix("* ")) {
                let command = unquote_code(command.trim());
                if !command.is_empty() {
                    plan.checks.push(command.to_owned());
                }
            }
            continue;
        }
        let Some(story) = plan.stories.last_mut().filter(|_| in_task) else {
            continue;
        };
        story.span.end = line.next;
        match checkbox(line.text) {
            Some(item) if !shows_a_box(item.text) => {
                story.criteria.push(item.text.to_owned());
                if !item.checked() {
                    story.done = false;
                    story.marks.push(Mark::Byte {
                        at: line.start + item.at,
                        to: b'x',
                    });
                }
            }
            _ => {
                let extra = line.text.trim();
                if !extra.is_empty() && checkbox(extra).is_none() {
                    story
                        .body
                        .push_str(if story.body.is_empty() { "" } else { "\n" });
                    story.body.push_str(extra);
                }
            }
        }
    }
    for story in &mut plan.stories {
        if story.done {
            story.marks.clear();
        }
    }
    plan
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn task_headings_as_ralphex_writes_them() {
        assert_eq!(
            task_heading("Task 1: Add auth"),
            Some(("Task 1".to_owned(), "Add auth"))
        );
        assert_eq!(
            task_heading("Iteration 2a: Again"),
            Some(("Iteration 2a".to_owned(), "Again"))
        );
        assert_eq!(task_heading("Task: none"), None);
        assert_eq!(task_heading("Tasks 1: x"), None);
        assert!(shows_a_box("mark items `[x]` when done"));
    }
}

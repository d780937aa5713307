//! A Kiro spec's `tasks.md` (`.kiro/specs/<name>/`, beside `requirements.md` and
//! `design.md`; the format as Kiro's spec prompts and cc-sdd's task rules write it):
//!
//! ```markdown
//! - [ ] 1. Set up the data layer
//!   - [ ] 1.1 Define the models
//!     - Fields as in design.md
//!     - _Requirements: 1.1, 2.3_
//!   - [ ]* 1.2 Unit tests for the models
//! - [ ] 2. Wire the API (P)
//!   - _Depends: 1.1_
//! ```
//!
//! Tasks are numbered checkboxes, nested by indentation (a major task and its sub-tasks);
//! `[ ]*` (or a number ending in `*`) is an optional task, left for the user; detail
//! bullets under a task are its body, `_Requirements: 1.1, 2.3_` the acceptance criteria
//! in `requirements.md` it answers, cc-sdd's `_Depends: 1.1_` what it waits for. The
//! stories are the tasks without sub-tasks; a major task is done when ticked (every task
//! under it then is), and pagent ticks it together with its last required sub-task, as
//! Kiro does. A task Kiro shows as in progress (`[-]`) is not done.

use super::text::{Checkbox, Line, checkbox, heading, lines};
use super::{Format, Mark, Plan, Story};

/// The task number a checkbox's text starts with (`1`, `2.1`, `3.` or `7.9*`), and
/// whether a `*` makes it optional.
pub(super) fn task_number(text: &str) -> Option<(&str, bool)> {
    let end = text.find([' ', '\t']).unwrap_or(text.len());
    let word = &text[..end];
    let starred = word.ends_with('*');
    let number = word.trim_end_matches('*').trim_end_matches('.');
    let ok = !number.is_empty()
        && number
            .split('.')
            .all(|part| !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()));
    ok.then_some((number, starred))
}

struct Task {
    story: Story,
    checked: bool,
    /// The byte that ticks it.
    at: usize,
    parent: Option<usize>,
    leaf: bool,
}

/// `_Label: a, b_` (or without the underscores) under a task: its values.
fn field<'a>(line: &'a str, label: &str) -> Option<Vec<&'a str>> {
    let text = line.trim().trim_start_matches(['-', '*']).trim();
    let text = text.trim_matches('_').trim();
    let rest = text.strip_prefix(label)?.strip_prefix(':')?;
    Some(
        rest.split(',')
            .map(|v| v.trim().trim_matches('_').trim())
            .filter(|v| !v.is_empty())
            .collect(),
    )
}

pub(super) fn read(text: &str) -> Plan {
    let mut tasks: Vec<Task> = Vec::new();
    let mut title = None;
    // Open tasks by depth: (indent, index).
    let mut stack: Vec<(usize, usize)> = Vec::new();
    for line in lines(text).iter().filter(|l| !l.fenced) {
        if let Some((level, heading_text)) = heading(line.text) {
            if level == 1 {
                title.get_or_insert_with(|| heading_text.to_owned());
            }
            stack.clear();
            continue;
        }
        if let Some(item) = checkbox(line.text) {
            push_task(&mut tasks, &mut stack, line, &item);
        } else {
            add_detail(&mut tasks, &mut stack, line);
        }
    }
    Plan {
        format: Format::Kiro,
        title,
        stories: stories_of(&tasks),
        checks: Vec::new(),
    }
}

/// A checkbox line: a task, under the open task it is indented below.
fn push_task(
    tasks: &mut Vec<Task>,
    stack: &mut Vec<(usize, usize)>,
    line: &Line<'_>,
    item: &Checkbox<'_>,
) {
    while stack
        .last()
        .is_some_and(|(indent, _)| *indent >= item.indent)
    {
        stack.pop();
    }
    let parent = stack.last().map(|(_, index)| *index);
    let (id, title, starred_number) = match task_number(item.text) {
        Some((number, starred)) => {
            let after = &item.text[item.text.find([' ', '\t']).unwrap_or(item.text.len())..];
            (number.to_owned(), after.trim(), starred)
        }
        None => (format!("L{}", line.number), item.text, false),
    };
    let index = tasks.len();
    if let Some(parent) = parent {
        tasks[parent].leaf = false;
    }
    tasks.push(Task {
        story: Story {
            id,
            title: title.trim_end_matches("(P)").trim().to_owned(),
            optional: item.starred || starred_number,
            line: line.number,
            span: line.start..line.next,
            ..Story::default()
        },
        checked: item.checked(),
        at: line.start + item.at,
        parent,
        leaf: true,
    });
    stack.push((item.indent, index));
}

/// Any other line: detail of the open task it is indented below (its body, the
/// requirements it answers, what it depends on).
fn add_detail(tasks: &mut [Task], stack: &mut Vec<(usize, usize)>, line: &Line<'_>) {
    let indent = line.text.len() - line.text.trim_start().len();
    let trimmed = line.text.trim();
    if trimmed.is_empty() {
        return;
    }
    while stack.last().is_some_and(|(open, _)| *open >= indent) {
        stack.pop();
    }
    let Some(&(_, owner)) = stack.last() else {
        return;
    };
    let story = &mut tasks[owner].story;
    story.span.end = line.next;
    if let Some(values) = field(trimmed, "Requirements") {
        story.criteria.push(format!(
            "Requirements {} of requirements.md",
            values.join(", ")
        ));
    } else if let Some(values) = field(trimmed, "Depends") {
        story
            .depends_on
            .extend(values.iter().map(|v| v.to_string()));
    } else {
        let detail = trimmed.strip_prefix("- ").unwrap_or(trimmed);
        story
            .body
            .push_str(if story.body.is_empty() { "" } else { "\n" });
        story.body.push_str(detail);
    }
}

fn ancestors(tasks: &[Task], index: usize) -> impl Iterator<Item = usize> + '_ {
    std::iter::successors(tasks[index].parent, |i| tasks[*i].parent)
}

/// Each task's done and optional, inherited from its ancestors (a parent comes before
/// its children, so one pass in file order does it), and how many required leaves under
/// each task are still open. Linear in the file: a leaf's depth is at most its indent.
fn states(tasks: &[Task]) -> (Vec<bool>, Vec<bool>, Vec<usize>) {
    let mut done = vec![false; tasks.len()];
    let mut optional = vec![false; tasks.len()];
    for (i, task) in tasks.iter().enumerate() {
        let (parent_done, parent_optional) = task
            .parent
            .map_or((false, false), |p| (done[p], optional[p]));
        done[i] = task.checked || parent_done;
        optional[i] = task.story.optional || parent_optional;
    }
    let mut open = vec![0usize; tasks.len()];
    for i in (0..tasks.len()).filter(|i| tasks[*i].leaf && !done[*i] && !optional[*i]) {
        for ancestor in ancestors(tasks, i) {
            open[ancestor] += 1;
        }
    }
    (done, optional, open)
}

fn stories_of(tasks: &[Task]) -> Vec<Story> {
    let (done, optional, open) = states(tasks);
    (0..tasks.len())
        .filter(|i| tasks[*i].leaf)
        .map(|index| {
            let mut story = tasks[index].story.clone();
            story.done = done[index];
            story.optional = optional[index];
            if let Some(parent) = tasks[index].parent {
                let parent = &tasks[parent].story;
                let part = format!("Part of task {}: {}", parent.id, parent.title);
                story.body = if story.body.is_empty() {
                    part
                } else {
                    format!("{part}\n{}", story.body)
                };
            }
            if !story.done {
                story.marks.push(Mark::Byte {
                    at: tasks[index].at,
                    to: b'x',
                });
                // An ancestor closes with the last required leaf under it still open.
                let own = usize::from(!story.optional);
                for ancestor in ancestors(tasks, index) {
                    if open[ancestor] != own || tasks[ancestor].checked {
                        break;
                    }
                    story.marks.push(Mark::Byte {
                        at: tasks[ancestor].at,
                        to: b'x',
                    });
                }
                story.marks.sort_by_key(|m| match m {
                    Mark::Byte { at, .. } | Mark::Insert { at, .. } => *at,
                    Mark::Replace { range, .. } => range.start,
                });
            }
            story
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_fields_and_optional_marks() {
        assert_eq!(task_number("1. Set up"), Some(("1", false)));
        assert_eq!(task_number("2.10 Wire"), Some(("2.10", false)));
        assert_eq!(task_number("7.9* Extra"), Some(("7.9", true)));
        assert_eq!(task_number("1..2 x"), None);
        assert_eq!(task_number("Set up"), None);
        assert_eq!(
            field("- _Requirements: 1.1, 2.3_", "Requirements"),
            Some(vec!["1.1", "2.3"])
        );
        assert_eq!(field("_Depends: 1.1_", "Depends"), Some(vec!["1.1"]));
        assert_eq!(field("Fields as in design.md", "Depends"), None);
    }
}

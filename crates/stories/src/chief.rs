//! Chief's `prd.md` (MiniCodeMonkey/chief, `docs/reference/prd-schema.md` and its
//! `internal/prd/markdown.go`): free context at the top, then one section per story.
//!
//! ```markdown
//! ### US-001: User Registration
//! **Status:** todo            (done | in-progress | todo; absent means todo)
//! **Priority:** 1             (lower first; absent means file order)
//! **Description:** As a new user, ...
//! - [ ] Registration form with email and password
//! ```
//!
//! The heading is `###` or `####`, an id of letters, a dash and digits, a colon, the
//! title. A story runs to the next heading of level 1 to 4. Chief counts `done`,
//! `complete`, `completed` and `passed` as done; prose lines that are not a field or a
//! list item are the description when there is no `**Description:**`; the checkboxes are
//! the acceptance criteria (their ticks are the agent's notes, not the story's state).
//! Marking a story done rewrites its status value to `done`, or inserts a `**Status:**
//! done` line under the heading of a story that has none.

use super::text::{Line, bold_field, checkbox, heading, lines};
use super::{Format, Mark, Plan, Story};

/// `US-001: Title` as a heading's text: (id, title).
pub(super) fn story_heading(text: &str) -> Option<(&str, &str)> {
    let (id, title) = text.split_once(':')?;
    let (letters, digits) = id.split_once('-')?;
    let ok = !letters.is_empty()
        && letters.bytes().all(|b| b.is_ascii_alphabetic())
        && !digits.is_empty()
        && digits.bytes().all(|b| b.is_ascii_digit());
    let title = title.trim();
    (ok && !title.is_empty()).then_some((id, title))
}

fn is_done(status: &str) -> bool {
    ["done", "complete", "completed", "passed"]
        .iter()
        .any(|d| status.eq_ignore_ascii_case(d))
}

struct Open<'a> {
    story: Story,
    heading: Line<'a>,
    status: Option<(usize, &'a str)>,
    description: Option<String>,
    prose: Vec<&'a str>,
}

pub(super) fn read(text: &str) -> Plan {
    let mut plan = Plan {
        format: Format::Chief,
        title: None,
        stories: Vec::new(),
        checks: Vec::new(),
    };
    let mut open: Option<Open> = None;
    let all = lines(text);
    for line in all.iter().filter(|l| !l.fenced) {
        if let Some((level, heading_text)) = heading(line.text) {
            if level == 1 && plan.title.is_none() {
                plan.title = Some(heading_text.trim_start_matches("PRD:").trim().to_owned());
            }
            if level <= 4 {
                if let Some(done) = open.take() {
                    plan.stories.push(close(done, line.start, text));
                }
                if let Some((id, title)) =
                    story_heading(heading_text).filter(|_| level == 3 || level == 4)
                {
                    open = Some(Open {
                        story: Story {
                            id: id.to_owned(),
                            title: title.to_owned(),
                            line: line.number,
                            span: line.start..line.next,
                            ..Story::default()
                        },
                        heading: *line,
                        status: None,
                        description: None,
                        prose: Vec::new(),
                    });
                }
                continue;
            }
        }
        let Some(current) = open.as_mut() else {
            continue;
        };
        if let Some((at, value)) = bold_field(line.text, "Status") {
            current.status.get_or_insert((line.start + at, value));
        } else if let Some((_, value)) = bold_field(line.text, "Priority") {
            current.story.priority = value.parse().ok().filter(|p| *p > 0);
        } else if let Some((_, value)) = bold_field(line.text, "Description") {
            current.description = Some(value.to_owned());
        } else if let Some(item) = checkbox(line.text) {
            current.story.criteria.push(item.text.to_owned());
        } else {
            let trimmed = line.text.trim();
            if !trimmed.is_empty() && !trimmed.starts_with("**") && !trimmed.starts_with("- ") {
                current.prose.push(trimmed);
            }
        }
    }
    if let Some(done) = open.take() {
        plan.stories.push(close(done, text.len(), text));
    }
    plan
}

fn close(open: Open, end: usize, text: &str) -> Story {
    let mut story = open.story;
    story.span.end = end.max(story.span.end);
    story.body = open.description.unwrap_or_else(|| open.prose.join("\n"));
    story.done = open.status.is_some_and(|(_, value)| is_done(value));
    if !story.done {
        story.marks = vec![match open.status {
            Some((at, value)) => Mark::Replace {
                range: at..at + value.len(),
                text: "done".to_owned(),
            },
            None => {
                let heading = open.heading;
                let ending = &text[heading.end..heading.next];
                if ending.is_empty() {
                    Mark::Insert {
                        at: heading.end,
                        text: "\n**Status:** done".to_owned(),
                    }
                } else {
                    Mark::Insert {
                        at: heading.next,
                        text: format!("**Status:** done{ending}"),
                    }
                }
            }
        }];
    }
    story
}

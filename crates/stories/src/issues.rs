//! GitHub issues as a plan: `pagent loop --issues "label:ready"` (or `--issues 12,15`)
//! asks `gh` for the issues once, writes them down in a file of pagent's own
//! (`.claude/pagent/issues.md`, [`render_issues`]), and from then on the loop is the same
//! as for any plan: one issue per iteration, ticked when its story is done, the file read
//! again after every iteration (so a resumed loop needs no network, and an issue the user
//! unticks is done again).
//!
//! ```markdown
//! <!-- pagent: GitHub issues -->
//! # GitHub issues: label:ready
//!
//! - [ ] #12 Add a login page
//!   The body of the issue, each line indented by two spaces.
//! ```
//!
//! Issues are taken oldest first (lowest number), as frankbria's ralph-claude-code does.
//! An issue's body is a stranger's text: it is capped, and indented so that no line of it
//! can pose as an issue line of its own.

use super::text::{checkbox, heading, lines};
use super::{Format, Mark, Plan, Story};

/// The first line of the file: how the format is told.
pub const MARKER: &str = "<!-- pagent: GitHub issues -->";
/// An issue body longer than this is cut (the agent can read the rest with `gh`).
const BODY_CAP: usize = 8 * 1024;

/// An issue as `gh issue list --json number,title,body` gives it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Issue {
    pub number: u64,
    #[serde(default)]
    pub title: String,
    #[serde(default)]
    pub body: String,
}

/// The plan file for `issues` found by `query`, oldest first.
pub fn render_issues(query: &str, issues: &[Issue]) -> String {
    let mut issues: Vec<&Issue> = issues.iter().collect();
    issues.sort_by_key(|i| i.number);
    issues.dedup_by_key(|i| i.number);
    // A stranger's text reaches terminals: no control character survives (a title is
    // one line, a body keeps its line breaks and tabs).
    let visible = |text: &str, keep: &[char]| -> String {
        text.chars()
            .map(|c| {
                if c.is_control() && !keep.contains(&c) {
                    ' '
                } else {
                    c
                }
            })
            .collect()
    };
    let one_line = |text: &str| {
        visible(text, &[])
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    let mut out = format!(
        "{MARKER}\n# GitHub issues: {}\n\nWritten by pagent from `gh`; a loop working through this file ticks an issue here when its story is done.\n\n",
        one_line(query)
    );
    for issue in issues {
        out.push_str(&format!(
            "- [ ] #{} {}\n",
            issue.number,
            one_line(&issue.title)
        ));
        let body = visible(&issue.body, &['\n', '\t']);
        let body = pagent_engine::render::cap_head(
            body.trim(),
            BODY_CAP,
            "cut; `gh issue view` shows all of it",
        );
        for line in body.lines() {
            let line = line.trim_end();
            if line.is_empty() {
                out.push('\n');
            } else {
                out.push_str(&format!("  {line}\n"));
            }
        }
    }
    out
}

pub(super) fn read(text: &str) -> Plan {
    let mut plan = Plan {
        format: Format::Issues,
        title: None,
        stories: Vec::new(),
        checks: Vec::new(),
    };
    let mut open = false;
    for line in lines(text) {
        if let Some(item) = checkbox(line.text).filter(|b| b.indent == 0) {
            let Some((number, title)) = item
                .text
                .strip_prefix('#')
                .and_then(|rest| rest.split_once(' ').or(Some((rest, ""))))
                .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
            else {
                open = false;
                continue;
            };
            let done = item.checked();
            plan.stories.push(Story {
                id: format!("#{number}"),
                title: title.trim().to_owned(),
                done,
                line: line.number,
                span: line.start..line.next,
                marks: if done {
                    Vec::new()
                } else {
                    vec![Mark::Byte {
                        at: line.start + item.at,
                        to: b'x',
                    }]
                },
                ..Story::default()
            });
            open = true;
            continue;
        }
        if let Some((1, title)) = heading(line.text) {
            plan.title.get_or_insert_with(|| {
                title.trim_start_matches("GitHub issues:").trim().to_owned()
            });
        }
        match plan.stories.last_mut() {
            Some(story) if open && (line.text.starts_with("  ") || line.text.trim().is_empty()) => {
                story.span.end = line.next;
                let body_line = line.text.strip_prefix("  ").unwrap_or("");
                if !story.body.is_empty() || !body_line.is_empty() {
                    story
                        .body
                        .push_str(if story.body.is_empty() { "" } else { "\n" });
                    story.body.push_str(body_line);
                }
            }
            _ => open = false,
        }
    }
    for story in &mut plan.stories {
        story.body = story.body.trim_end().to_owned();
    }
    plan
}

/// The issue number of a story of this format (`#12` is 12).
pub fn issue_number(id: &str) -> Option<u64> {
    id.strip_prefix('#')?.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issues_written_down_read_back_oldest_first() {
        let issues = [
            Issue {
                number: 15,
                title: "Second\nline".into(),
                body: "Steps:\n\n- [ ] #99 not an issue\n".into(),
            },
            Issue {
                number: 12,
                title: "First".into(),
                body: String::new(),
            },
        ];
        let text = render_issues("label:ready", &issues);
        let plan = Plan::read(&text, None).unwrap();
        assert_eq!(plan.format, Format::Issues);
        assert_eq!(plan.title.as_deref(), Some("label:ready"));
        let ids: Vec<&str> = plan.stories.iter().map(|s| s.id.as_str()).collect();
        assert_eq!(ids, ["#12", "#15"]);
        assert_eq!(plan.stories[1].title, "Second line");
        assert_eq!(plan.stories[1].body, "Steps:\n\n- [ ] #99 not an issue");
        assert_eq!(issue_number("#15"), Some(15));
        assert_eq!(issue_number("15"), None);
    }

    #[test]
    fn control_characters_of_an_issue_never_reach_the_plan() {
        let issues = [Issue {
            number: 5,
            title: "../escape\u{1b}[2J\u{7}\r\nevil\u{0}".into(),
            body: "one\u{1b}]0;t\u{7}\r\n\ttwo".into(),
        }];
        let text = render_issues("q\u{1b}", &issues);
        assert!(
            !text
                .chars()
                .any(|c| c.is_control() && !matches!(c, '\n' | '\t')),
            "{text:?}"
        );
        let plan = Plan::read(&text, None).unwrap();
        assert_eq!(plan.stories[0].title, "../escape [2J evil");
        assert_eq!(plan.stories[0].body, "one ]0;t\n\ttwo");
    }
}

//! Marking a story done in its file, touching only its marker: a checkbox's one byte, a
//! status value, a JSON `false`, or one inserted line where the story had no status. The
//! rest of the file comes back byte for byte: no re-serialising, no reformatting, line
//! endings as they were.
//!
//! The new text is read back before it is returned: the story must now be done and
//! every other required story exactly as done as before, or nothing is written. That
//! guards the one place where a reader's idea of the file and the file could disagree.

use super::{Format, Mark, Plan, PlanError};

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum MarkError {
    #[error("the plan cannot be read: {0}")]
    Plan(#[from] PlanError),
    #[error("the plan has no story {0:?}")]
    NoStory(String),
    #[error("pagent does not know where to mark {0} done in this file")]
    Unmarkable(String),
    #[error("marking {0} done would change more than that story; the file is left as it is")]
    Unsafe(String),
}

/// `text` with story `id` marked done; `None` when it already is.
pub fn mark_done(
    text: &str,
    format: Option<Format>,
    id: &str,
) -> Result<Option<String>, MarkError> {
    let plan = Plan::read(text, format)?;
    let story = plan
        .story(id)
        .ok_or_else(|| MarkError::NoStory(id.to_owned()))?;
    if story.done {
        return Ok(None);
    }
    if story.marks.is_empty() {
        return Err(MarkError::Unmarkable(id.to_owned()));
    }
    let unsafe_mark = || MarkError::Unsafe(id.to_owned());
    let new = apply(text, &story.marks).ok_or_else(unsafe_mark)?;
    let after = Plan::read(&new, Some(plan.format)).map_err(|_| unsafe_mark())?;
    let required_as_before = after.stories.len() == plan.stories.len()
        && after
            .stories
            .iter()
            .zip(&plan.stories)
            .all(|(a, b)| a.id == b.id && (a.id == id || b.optional || a.done == b.done));
    let marked = after.story(id).is_some_and(|s| s.done);
    if !required_as_before || !marked {
        return Err(unsafe_mark());
    }
    Ok(Some(new))
}

fn start(mark: &Mark) -> usize {
    match mark {
        Mark::Byte { at, .. } | Mark::Insert { at, .. } => *at,
        Mark::Replace { range, .. } => range.start,
    }
}

/// The marks applied, or `None` when one is out of place (out of bounds, inside a
/// character, overlapping another, or a byte that is not ASCII on either side).
fn apply(text: &str, marks: &[Mark]) -> Option<String> {
    let mut marks: Vec<&Mark> = marks.iter().collect();
    marks.sort_by_key(|m| start(m));
    let mut out = String::with_capacity(text.len() + 32);
    let mut copied = 0;
    for mark in marks {
        let at = start(mark);
        out.push_str(text.get(copied..at)?);
        match mark {
            Mark::Byte { at, to } => {
                let old = text.get(*at..*at + 1)?;
                if !old.is_ascii() || !to.is_ascii() {
                    return None;
                }
                out.push(char::from(*to));
                copied = at + 1;
            }
            Mark::Replace { range, text: new } => {
                text.get(range.clone())?;
                out.push_str(new);
                copied = range.end;
            }
            Mark::Insert { text: new, .. } => {
                out.push_str(new);
                copied = at;
            }
        }
    }
    out.push_str(text.get(copied..)?);
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn marks_out_of_place_are_refused() {
        let text = "- [ ] é";
        assert_eq!(
            apply(text, &[Mark::Byte { at: 3, to: b'x' }]).as_deref(),
            Some("- [x] é")
        );
        for bad in [
            Mark::Byte { at: 6, to: b'x' },
            Mark::Byte { at: 99, to: b'x' },
            Mark::Replace {
                range: 3..7,
                text: String::new(),
            },
            Mark::Insert {
                at: 7,
                text: String::new(),
            },
        ] {
            assert_eq!(apply(text, std::slice::from_ref(&bad)), None, "{bad:?}");
        }
        let overlapping = [
            Mark::Replace {
                range: 0..4,
                text: "a".into(),
            },
            Mark::Byte { at: 3, to: b'x' },
        ];
        assert_eq!(apply(text, &overlapping), None);
    }
}

//! The lines of a Markdown plan with their byte places, and the two shapes every
//! Markdown reader looks for in them: headings and checkboxes.
//!
//! Every reader needs the same three things from a line: where it starts in the file (a
//! tick rewrites one byte of it, so offsets are exact, `\r\n` included), whether it is
//! inside fenced code (a plan that *shows* a checkbox in a code block has not asked for
//! one: ralphex skips fences for the same reason), and its shape. Fences follow
//! CommonMark as far as a plan needs: up to three spaces, then three or more backticks or
//! tildes; closed by the same character at least as long with nothing after it; an
//! unclosed fence runs to the end of the file.

/// One line of the file: `text` has no line ending; `start..end` is where it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Line<'a> {
    /// 1-based, as editors count.
    pub number: usize,
    pub start: usize,
    pub end: usize,
    /// Where the next line starts (after the line ending), or the end of the file.
    pub next: usize,
    pub text: &'a str,
    /// Inside fenced code (or a fence line itself): no reader looks at it.
    pub fenced: bool,
}

/// Every line of `text`, fenced ones marked.
pub(super) fn lines(text: &str) -> Vec<Line<'_>> {
    let mut out = Vec::new();
    let mut fence: Option<(u8, usize)> = None;
    let mut start = 0;
    let mut number = 0;
    while start < text.len() {
        number += 1;
        let rest = &text[start..];
        let (raw, next) = match rest.find('\n') {
            Some(i) => (&rest[..i], start + i + 1),
            None => (rest, text.len()),
        };
        let line = raw.strip_suffix('\r').unwrap_or(raw);
        let fenced = match fence {
            Some(open) => {
                if closes_fence(line, open) {
                    fence = None;
                }
                true
            }
            None => match opens_fence(line) {
                Some(open) => {
                    fence = Some(open);
                    true
                }
                None => false,
            },
        };
        out.push(Line {
            number,
            start,
            end: start + line.len(),
            next,
            text: line,
            fenced,
        });
        start = next;
    }
    out
}

fn indent_of(line: &str) -> usize {
    line.len() - line.trim_start_matches(' ').len()
}

fn fence_run(line: &str) -> Option<(u8, usize, &str)> {
    if indent_of(line) > 3 {
        return None;
    }
    let trimmed = line.trim_start_matches(' ');
    let mark = *trimmed.as_bytes().first()?;
    if mark != b'`' && mark != b'~' {
        return None;
    }
    let len = trimmed.bytes().take_while(|b| *b == mark).count();
    (len >= 3).then(|| (mark, len, &trimmed[len..]))
}

fn opens_fence(line: &str) -> Option<(u8, usize)> {
    let (mark, len, info) = fence_run(line)?;
    // A backtick fence's info string may not hold a backtick (CommonMark).
    (mark == b'~' || !info.contains('`')).then_some((mark, len))
}

fn closes_fence(line: &str, (mark, len): (u8, usize)) -> bool {
    fence_run(line).is_some_and(|(m, l, rest)| m == mark && l >= len && rest.trim().is_empty())
}

/// `## Title` (up to three spaces first): its level and trimmed text.
pub(super) fn heading(line: &str) -> Option<(usize, &str)> {
    if indent_of(line) > 3 {
        return None;
    }
    let trimmed = line.trim_start_matches(' ');
    let level = trimmed.bytes().take_while(|b| *b == b'#').count();
    if level == 0 || level > 6 {
        return None;
    }
    let rest = &trimmed[level..];
    if !rest.is_empty() && !rest.starts_with([' ', '\t']) {
        return None;
    }
    Some((level, rest.trim().trim_end_matches('#').trim_end()))
}

/// A list item with a checkbox: `- [ ] text`, `  * [x] text`, Kiro's `- [ ]* text`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Checkbox<'a> {
    /// Spaces before the bullet (a tab counts as four).
    pub indent: usize,
    /// Offset in the line of the character between the brackets.
    pub at: usize,
    /// That character: ` ` open, `x`/`X` done, `-`/`~`/`/` begun.
    pub state: u8,
    /// A `*` right after the brackets (Kiro's optional task).
    pub starred: bool,
    /// The text after the box, trimmed.
    pub text: &'a str,
}

impl Checkbox<'_> {
    pub fn checked(&self) -> bool {
        matches!(self.state, b'x' | b'X')
    }
}

pub(super) fn checkbox(line: &str) -> Option<Checkbox<'_>> {
    let bytes = line.as_bytes();
    let mut i = 0;
    let mut indent = 0;
    while let Some(b) = bytes.get(i) {
        match b {
            b' ' => indent += 1,
            b'\t' => indent += 4,
            _ => break,
        }
        i += 1;
    }
    if !matches!(bytes.get(i), Some(b'-' | b'*' | b'+')) {
        return None;
    }
    i += 1;
    let spaces = bytes[i..].iter().take_while(|b| **b == b' ').count();
    if spaces == 0 {
        return None;
    }
    i += spaces;
    if bytes.get(i) != Some(&b'[') || bytes.get(i + 2) != Some(&b']') {
        return None;
    }
    let state = bytes[i + 1];
    if !matches!(state, b' ' | b'x' | b'X' | b'-' | b'~' | b'/') {
        return None;
    }
    let at = i + 1;
    i += 3;
    let starred = bytes.get(i) == Some(&b'*');
    if starred {
        i += 1;
    }
    // The box must end the item or be followed by a space.
    match bytes.get(i) {
        None => {}
        Some(b' ' | b'\t') => {}
        Some(_) => return None,
    }
    Some(Checkbox {
        indent,
        at,
        state,
        starred,
        text: line[i..].trim(),
    })
}

/// `**Label:** value` or `**Label**: value` (case-insensitive label): the value's offset in
/// the line and the value, trimmed.
pub(super) fn bold_field<'a>(line: &'a str, label: &str) -> Option<(usize, &'a str)> {
    let rest = line.trim_start().strip_prefix("**")?;
    let name = rest.get(..label.len())?;
    if !name.eq_ignore_ascii_case(label) {
        return None;
    }
    let rest = &rest[label.len()..];
    let after = rest
        .strip_prefix(":**")
        .or_else(|| rest.strip_prefix("**:"))?;
    let value = after.trim_start();
    Some((line.len() - value.len(), value.trim_end()))
}

/// A text with a code span around all of it (`` `go test ./...` ``) without the ticks.
pub(super) fn unquote_code(text: &str) -> &str {
    let ticks = text.bytes().take_while(|b| *b == b'`').count();
    if ticks > 0 && text.len() > 2 * ticks && text[ticks..].ends_with(&text[..ticks]) {
        let inner = &text[ticks..text.len() - ticks];
        if !inner.contains(&text[..ticks]) {
            return inner.trim();
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lines_keep_their_places_and_fences_hide_their_contents() {
        let text = "a\r\n```md\n- [ ] hidden\n```\n~~~\n```\n~~~~\nb";
        let all = lines(text);
        let shown: Vec<(&str, bool)> = all.iter().map(|l| (l.text, l.fenced)).collect();
        assert_eq!(
            shown,
            [
                ("a", false),
                ("```md", true),
                ("- [ ] hidden", true),
                ("```", true),
                ("~~~", true),
                ("```", true),
                ("~~~~", true),
                ("b", false)
            ]
        );
        assert_eq!((all[0].start, all[0].end, all[0].next), (0, 1, 3));
        assert_eq!(&text[all[7].start..all[7].end], "b");
        assert!(lines("```\nnever closed\n- [ ] x").iter().all(|l| l.fenced));
        assert!(lines("").is_empty());
    }

    #[test]
    fn checkboxes_are_found_with_the_byte_that_ticks_them() {
        let line = "  - [ ]* 1.2 Write the tests";
        let found = checkbox(line).unwrap();
        assert_eq!((found.indent, found.state, found.starred), (2, b' ', true));
        assert_eq!(&line[found.at..found.at + 1], " ");
        assert_eq!(found.text, "1.2 Write the tests");
        assert!(checkbox("- [X] T001 Done").unwrap().checked());
        assert!(checkbox("* [x]").unwrap().checked());
        for not in [
            "-[ ] x",
            "- [] x",
            "- [ ]x",
            "- [?] x",
            "text - [ ] x",
            "- x",
        ] {
            assert_eq!(checkbox(not), None, "{not}");
        }
    }

    #[test]
    fn headings_and_bold_fields() {
        assert_eq!(heading("### US-001: Add"), Some((3, "US-001: Add")));
        assert_eq!(heading("## Phase 1 ##"), Some((2, "Phase 1")));
        assert_eq!(heading("#hashtag"), None);
        assert_eq!(heading("    # code"), None);
        let line = "**Status:**  in-progress ";
        let (at, value) = bold_field(line, "status").unwrap();
        assert_eq!(
            (&line[at..at + value.len()], value),
            ("in-progress", "in-progress")
        );
        assert_eq!(
            bold_field("**Goal**: ship it", "Goal").unwrap().1,
            "ship it"
        );
        assert_eq!(bold_field("**Statuses:** x", "Status"), None);
        assert_eq!(unquote_code("`go test ./...`"), "go test ./...");
        assert_eq!(unquote_code("``a ` b``"), "a ` b");
        assert_eq!(unquote_code("`a` and `b`"), "`a` and `b`");
    }
}

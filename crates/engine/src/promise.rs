//! Finding `<promise>TEXT</promise>` in the model's last message.
//!
//! The promise is the model's own statement that the work is complete, so the rule is
//! narrow on purpose: **it counts only on a line of its own** (up to three spaces around
//! it) that is prose. A tag in the middle of a sentence is the model talking *about* the
//! promise, often quoting pagent's own feedback ("your last message did not contain
//! <promise>DONE</promise>"), and a tag in quoted or code text is the model quoting the
//! instructions back. So a line does not count when it is inside a fenced code block
//! (```` ``` ```` or `~~~`, closed only by a fence of the same character at least as long
//! with nothing after it; an unclosed fence runs to the end), indented by four spaces or
//! a tab (indented code), a `>` quote line or a lazy continuation of one (a line right
//! after a quote line), inside an HTML comment `<!-- ... -->`, or inside a code span that
//! starts on an earlier line of the same paragraph. The text between the tags is
//! compared with whitespace trimmed and collapsed, so `<promise> ALL  DONE </promise>`
//! keeps the promise `ALL DONE`. None of pagent's own texts has such a line.

const OPEN: &str = "<promise>";
const CLOSE: &str = "</promise>";

/// True when `message` makes the promise `expected` on a prose line of its own.
pub fn contains_promise(message: &str, expected: &str) -> bool {
    let expected = collapse_whitespace(expected);
    prose_lines(message).into_iter().any(|line| {
        line.strip_prefix(OPEN)
            .and_then(|rest| rest.strip_suffix(CLOSE))
            .is_some_and(|inner| !inner.contains(OPEN) && collapse_whitespace(inner) == expected)
    })
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// An open fence: its character and length.
#[derive(Clone, Copy)]
struct Fence {
    mark: u8,
    len: usize,
}

/// The trimmed lines of `message` that are prose: outside fences, indented code, quotes,
/// HTML comments and code spans that cross lines.
fn prose_lines(message: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let mut fence: Option<Fence> = None;
    let mut quoted = false;
    let mut in_comment = false;
    // The current paragraph's lines (for code spans over several lines).
    let mut paragraph: Vec<(&str, bool)> = Vec::new();
    for line in message.lines() {
        if let Some(open) = fence {
            if closes(line, open) {
                fence = None;
            }
            continue;
        }
        let blank = line.trim().is_empty();
        if blank {
            flush(&mut paragraph, &mut out);
            quoted = false;
            continue;
        }
        let indent = indent_width(line);
        let body = line.trim_start();
        if indent < 4
            && let Some(open) = opens(body)
        {
            flush(&mut paragraph, &mut out);
            fence = Some(open);
            quoted = false;
            continue;
        }
        let starts_in_comment = in_comment;
        in_comment = comment_state_after(line, in_comment);
        let is_quote = indent < 4 && body.starts_with('>');
        // A line right after a quote line continues the quote (lazily) unless blank.
        let lazy = quoted;
        quoted = is_quote || lazy;
        let candidate = indent < 4 && !is_quote && !lazy && !starts_in_comment;
        paragraph.push((line, candidate));
    }
    if fence.is_none() {
        flush(&mut paragraph, &mut out);
    }
    out
}

/// Width of the leading whitespace, a tab counting as four.
fn indent_width(line: &str) -> usize {
    let mut width = 0;
    for c in line.chars() {
        match c {
            ' ' => width += 1,
            '\t' => width += 4,
            _ => break,
        }
    }
    width
}

/// A fence opening: three or more backticks (whose info text has no backtick) or tildes.
fn opens(body: &str) -> Option<Fence> {
    let mark = *body.as_bytes().first()?;
    if mark != b'`' && mark != b'~' {
        return None;
    }
    let len = body.bytes().take_while(|b| *b == mark).count();
    if len < 3 || (mark == b'`' && body[len..].contains('`')) {
        return None;
    }
    Some(Fence { mark, len })
}

/// Whether `line` closes the fence `open`: at most three spaces, the same character at
/// least as many times, then only whitespace.
fn closes(line: &str, open: Fence) -> bool {
    if indent_width(line) >= 4 {
        return false;
    }
    let body = line.trim_start();
    let len = body.bytes().take_while(|b| *b == open.mark).count();
    len >= open.len && body[len..].trim().is_empty()
}

/// Whether an HTML comment is open after `line`, given whether one was open before it.
fn comment_state_after(line: &str, mut open: bool) -> bool {
    let mut rest = line;
    loop {
        if open {
            match rest.find("-->") {
                Some(end) => {
                    rest = &rest[end + 3..];
                    open = false;
                }
                None => return true,
            }
        } else {
            match rest.find("<!--") {
                Some(start) => {
                    rest = &rest[start + 4..];
                    open = true;
                }
                None => return false,
            }
        }
    }
}

/// Moves the paragraph's candidate lines that no code span covers to `out`.
fn flush<'a>(paragraph: &mut Vec<(&'a str, bool)>, out: &mut Vec<&'a str>) {
    let spans = multiline_code_spans(paragraph.iter().map(|(line, _)| *line));
    for (index, (line, candidate)) in paragraph.iter().enumerate() {
        if *candidate && !spans.iter().any(|(from, to)| *from < index && index < *to) {
            out.push(line.trim());
        }
    }
    paragraph.clear();
}

/// The code spans of a paragraph that cross lines, as (first line, last line) indices: a
/// run of backticks opens a span that the next run of the same length closes.
fn multiline_code_spans<'a>(lines: impl Iterator<Item = &'a str>) -> Vec<(usize, usize)> {
    let mut spans = Vec::new();
    let mut open: Option<(usize, usize)> = None; // (run length, line)
    for (index, line) in lines.enumerate() {
        let bytes = line.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            if bytes[i] != b'`' {
                i += 1;
                continue;
            }
            let run = bytes[i..].iter().take_while(|b| **b == b'`').count();
            match open {
                Some((len, from)) if len == run => {
                    if from < index {
                        spans.push((from, index));
                    }
                    open = None;
                }
                Some(_) => {}
                None => open = Some((run, index)),
            }
            i += run;
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    /// (message, expected promise, counts?) for each case.
    fn check(cases: &[(&str, &str, bool)]) {
        for (message, expected, want) in cases {
            assert_eq!(
                contains_promise(message, expected),
                *want,
                "{message:?} / {expected:?}"
            );
        }
    }

    /// The rule as a table, first the lines: a promise counts on a line of its own.
    #[test]
    fn promise_table() {
        check(&[
            // On a line of its own: counts.
            ("Finished.\n<promise>DONE</promise>", "DONE", true),
            ("<promise>DONE</promise>", "DONE", true),
            ("   <promise> DONE </promise>  ", "DONE", true),
            ("Done.\r\n<promise>DONE</promise>\r\n", "DONE", true),
            ("<promise> ALL  DONE </promise>", "ALL DONE", true),
            (
                "<promise>NOT DONE</promise>\n<promise>DONE</promise>",
                "DONE",
                true,
            ),
            ("> quoted\n\n<promise>DONE</promise>", "DONE", true),
            // A closing fence may be longer; a ``` line inside a ```` fence does not close it.
            ("```\ncode\n````\n<promise>DONE</promise>", "DONE", true),
            ("````md\n```\n````\n<promise>DONE</promise>", "DONE", true),
            (
                "~~~\n<promise>DONE</promise>\n~~~\n<promise>DONE</promise>",
                "DONE",
                true,
            ),
            ("<!-- note -->\n<promise>DONE</promise>", "DONE", true),
            ("`a` and `b`\n<promise>DONE</promise>", "DONE", true),
            // Not on a line of its own: the model talking about the promise.
            ("Finished. <promise>DONE</promise>", "DONE", false),
            ("<promise>DONE</promise> and more", "DONE", false),
            ("- <promise>DONE</promise>", "DONE", false),
            (
                "pagent said: your last message did not contain <promise>DONE</promise>.",
                "DONE",
                false,
            ),
            ("<promise>ALL\nDONE</promise>", "ALL DONE", false),
            ("<promise>DONE", "DONE", false),
            (
                "<promise>DONE</promise><promise>DONE</promise>",
                "DONE",
                false,
            ),
        ]);
    }

    /// The rule as a table, then what hides a promise: wrong text, code, quotes and
    /// comments.
    #[test]
    fn promise_table_code_quotes_and_comments() {
        check(&[
            // Wrong text.
            ("<promise>done</promise>", "DONE", false),
            ("DONE", "DONE", false),
            ("", "DONE", false),
            // Code, quotes and comments.
            ("`<promise>DONE</promise>`", "DONE", false),
            ("```\n<promise>DONE</promise>\n```", "DONE", false),
            ("```\nstill open\n<promise>DONE</promise>", "DONE", false),
            ("```\n```rust\n<promise>DONE</promise>", "DONE", false),
            ("~~~text\n<promise>DONE</promise>\n~~~", "DONE", false),
            ("    <promise>DONE</promise>", "DONE", false),
            ("\t<promise>DONE</promise>", "DONE", false),
            (
                "Say `this\n<promise>DONE</promise>\nlater` please",
                "DONE",
                false,
            ),
            (
                "> Output it when complete:\n<promise>DONE</promise>",
                "DONE",
                false,
            ),
            ("> a\n> b\n<promise>DONE</promise>", "DONE", false),
            ("<!--\n<promise>DONE</promise>\n-->", "DONE", false),
            ("<!-- <promise>DONE</promise> -->", "DONE", false),
            (
                "<!-- a --> <!--\n<promise>DONE</promise>\n-->",
                "DONE",
                false,
            ),
            ("<!-- a\n--> b\n<promise>DONE</promise>", "DONE", true),
            // The close is looked for right after the opener, wherever it starts.
            ("xx<!---->\n<promise>DONE</promise>", "DONE", true),
            // Indented four spaces, a fence or a quote mark is code, not a fence or quote.
            ("    ```\n<promise>DONE</promise>", "DONE", true),
            ("    > quoted?\n<promise>DONE</promise>", "DONE", true),
            ("   > quoted\n<promise>DONE</promise>", "DONE", false),
            ("```\n    ```\n<promise>DONE</promise>", "DONE", false),
            ("```\n```  \n<promise>DONE</promise>", "DONE", true),
            ("```\n``` x\n<promise>DONE</promise>", "DONE", false),
            // Two marks open no fence; a backtick fence's info text may not hold a
            // backtick, a tilde fence's may.
            ("~~\n<promise>DONE</promise>", "DONE", true),
            ("``\n<promise>DONE</promise>", "DONE", true),
            ("```a`\n<promise>DONE</promise>", "DONE", true),
            ("~~~ `a`\n<promise>DONE</promise>\n~~~", "DONE", false),
            // A code span is closed only by a run of backticks as long as its opening; the
            // lines it starts and ends on are outside it.
            ("Say ``a ` b\n<promise>DONE</promise>\nc`` d", "DONE", false),
            ("<promise>A`</promise>\nlater`", "A`", true),
            ("`early\n<promise>`B</promise>", "`B", true),
            ("`a`\n<promise>DONE</promise>\n`b`", "DONE", true),
        ]);
    }
}

//! Finding `<promise>TEXT</promise>` in the model's last message.
//!
//! The promise is the model's own statement that the work is complete, so it only counts
//! when the model says it in prose: tags inside fenced code blocks, inline code spans or
//! `>` quotes are the model quoting the instructions back, not making the promise. The
//! text between the tags is compared with whitespace trimmed and collapsed on both sides,
//! so `<promise> ALL\n DONE </promise>` keeps the promise `ALL DONE`.

const OPEN: &str = "<promise>";
const CLOSE: &str = "</promise>";

/// True when `message` makes the promise `expected` outside quoted or code text.
pub fn contains_promise(message: &str, expected: &str) -> bool {
    let expected = collapse_whitespace(expected);
    let prose = strip_quoted(message);
    let mut rest = prose.as_str();
    while let Some(start) = rest.find(OPEN) {
        let after = &rest[start + OPEN.len()..];
        let Some(end) = after.find(CLOSE) else {
            return false;
        };
        if collapse_whitespace(&after[..end]) == expected {
            return true;
        }
        rest = &after[end + CLOSE.len()..];
    }
    false
}

fn collapse_whitespace(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The message with fenced code blocks, `>` quote lines and inline code spans removed.
fn strip_quoted(message: &str) -> String {
    let mut out = String::with_capacity(message.len());
    let mut fence: Option<&str> = None;
    for line in message.lines() {
        let trimmed = line.trim_start();
        if let Some(marker) = fence {
            if trimmed.starts_with(marker) {
                fence = None;
            }
            continue;
        }
        if trimmed.starts_with("```") {
            fence = Some("```");
            continue;
        }
        if trimmed.starts_with("~~~") {
            fence = Some("~~~");
            continue;
        }
        if trimmed.starts_with('>') {
            continue;
        }
        out.push_str(&strip_code_spans(line));
        out.push('\n');
    }
    out
}

/// Removes `` `...` `` spans (any run length of backticks, closed by the same run).
fn strip_code_spans(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find('`') {
        out.push_str(&rest[..start]);
        let run = rest[start..].bytes().take_while(|b| *b == b'`').count();
        let ticks = &rest[start..start + run];
        let after = &rest[start + run..];
        match after.find(ticks) {
            Some(end) => rest = &after[end + run..],
            None => {
                // An unclosed run is literal text, as in CommonMark.
                out.push_str(ticks);
                rest = after;
            }
        }
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn promise_table() {
        let cases = [
            ("Finished. <promise>DONE</promise>", "DONE", true),
            ("<promise> DONE </promise>", "DONE", true),
            ("<promise>ALL\n  DONE</promise>", "ALL DONE", true),
            ("<promise>all done</promise>", " ALL  DONE ", false),
            (
                "<promise>NOT DONE</promise> <promise>DONE</promise>",
                "DONE",
                true,
            ),
            (
                "I will say <promise>DONE</promise> later? no: `<promise>DONE</promise>`",
                "DONE",
                true,
            ),
            (
                "Say `<promise>DONE</promise>` when finished.",
                "DONE",
                false,
            ),
            ("Use ``<promise>DONE</promise>`` literally", "DONE", false),
            (
                "```\n<promise>DONE</promise>\n```\nstill working",
                "DONE",
                false,
            ),
            ("~~~text\n<promise>DONE</promise>\n~~~", "DONE", false),
            (
                "> Output <promise>DONE</promise> when complete.\nWorking on it.",
                "DONE",
                false,
            ),
            ("<promise>DONE", "DONE", false),
            ("DONE", "DONE", false),
            ("", "DONE", false),
            ("unclosed ` tick <promise>DONE</promise>", "DONE", true),
        ];
        for (message, expected, want) in cases {
            assert_eq!(
                contains_promise(message, expected),
                want,
                "{message:?} / {expected:?}"
            );
        }
    }
}

//! How pagent talks to people on a terminal: one error format, optional colour, and text
//! from files made safe to print.
//!
//! Errors are reported once, at the top, as `pagent: error: MESSAGE` followed by one
//! `caused by:` line per source. Colour is used only when stdout is a terminal and
//! `NO_COLOR` is unset.
//!
//! `status` and `log` print text from the state file and the event log, which a cloned
//! repository can plant: a raw escape sequence there would retitle the window, write the
//! clipboard (OSC 52), hide text or move the cursor, and a bidi override would reorder
//! what the user reads. Every such field goes through [`printable`] (and JSON output
//! through [`printable_json`]) before it reaches the terminal, where it is readable, and
//! then, like every other byte pagent writes, through the output edge
//! (`cli::terminal`), which neutralises whatever a call site left raw.

use std::borrow::Cow;
use std::io::Write;

use crate::cli::terminal::{Control, Sgr};

/// Characters that are never printed raw: C0 controls, DEL, C1 controls, and the bidi
/// embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069).
fn is_unsafe(c: char, multi_line: bool) -> bool {
    match c {
        '\n' | '\t' => !multi_line,
        '\u{0}'..='\u{1f}' | '\u{7f}'..='\u{9f}' => true,
        '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}' => true,
        _ => false,
    }
}

/// `text` with every unsafe character written as an escape a person can read: `\x1b` for
/// C0 and DEL, `\u{9b}` for C1 and `\u{202e}` for bidi controls. Newlines and tabs are
/// kept when `multi_line`, else escaped too (`\n`, `\t`), so one field stays one line.
pub fn printable(text: &str, multi_line: bool) -> Cow<'_, str> {
    if !text.chars().any(|c| is_unsafe(c, multi_line)) {
        return Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len() + 16);
    for c in text.chars() {
        match c {
            _ if !is_unsafe(c, multi_line) => out.push(c),
            '\n' => out.push_str("\\n"),
            '\t' => out.push_str("\\t"),
            '\r' => out.push_str("\\r"),
            '\u{0}'..='\u{1f}' | '\u{7f}' => out.push_str(&format!("\\x{:02x}", u32::from(c))),
            _ => out.push_str(&format!("\\u{{{:x}}}", u32::from(c))),
        }
    }
    Cow::Owned(out)
}

/// Serialised JSON with the characters JSON leaves raw (DEL, C1 and bidi controls) written
/// as `\uXXXX` escapes: the same JSON value, safe on a terminal. (serde_json escapes C0
/// itself.) Such characters can only occur inside strings, where the escape means them.
pub fn printable_json(json: &str) -> Cow<'_, str> {
    if !json.chars().any(|c| is_unsafe(c, true)) {
        return Cow::Borrowed(json);
    }
    let mut out = String::with_capacity(json.len() + 16);
    for c in json.chars() {
        if is_unsafe(c, true) {
            out.push_str(&format!("\\u{:04x}", u32::from(c)));
        } else {
            out.push(c);
        }
    }
    Cow::Owned(out)
}

// Writes to stderr are best effort: with stderr gone there is no one left to tell.

pub fn error(stderr: &mut dyn Write, message: &str) {
    let _ = writeln!(stderr, "pagent: error: {message}");
}

/// Prints an `anyhow` chain: the top message, then its causes.
pub fn report(stderr: &mut dyn Write, err: &anyhow::Error) {
    error(stderr, &err.to_string());
    for cause in err.chain().skip(1) {
        let _ = writeln!(stderr, "  caused by: {cause}");
    }
}

pub fn warn(stderr: &mut dyn Write, message: &str) {
    let _ = writeln!(stderr, "pagent: warning: {message}");
}

#[derive(Debug, Clone, Copy)]
pub struct Style {
    colour: bool,
}

impl Style {
    /// Colour when stdout is a terminal and `NO_COLOR` is unset.
    pub fn for_stdout(no_color: bool, stdout_is_terminal: bool) -> Style {
        Style {
            colour: !no_color && stdout_is_terminal,
        }
    }

    /// `text` between pagent's own colour controls, which only the output edge turns
    /// into terminal bytes (`cli::terminal`).
    fn paint(self, sgr: Sgr, text: &str) -> String {
        if self.colour {
            format!("{}{text}{}", Control::Sgr(sgr), Control::Sgr(Sgr::Reset))
        } else {
            text.to_owned()
        }
    }

    pub fn bold(self, text: &str) -> String {
        self.paint(Sgr::Bold, text)
    }

    pub fn green(self, text: &str) -> String {
        self.paint(Sgr::Green, text)
    }

    pub fn yellow(self, text: &str) -> String {
        self.paint(Sgr::Yellow, text)
    }

    pub fn red(self, text: &str) -> String {
        self.paint(Sgr::Red, text)
    }

    pub fn dim(self, text: &str) -> String {
        self.paint(Sgr::Dim, text)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn control_and_bidi_characters_are_escaped() {
        let cases = [
            ("plain text, é ü 日本", false, "plain text, é ü 日本"),
            ("\x1b]0;pwned\x07", false, "\\x1b]0;pwned\\x07"),
            ("\x1b]52;c;cHduZWQ=\x07", false, "\\x1b]52;c;cHduZWQ=\\x07"),
            ("\x1b[8mhidden\x1b[0m", false, "\\x1b[8mhidden\\x1b[0m"),
            ("a\u{202e}b\u{2066}c", false, "a\\u{202e}b\\u{2066}c"),
            ("\u{9b}31m\u{7f}\0", false, "\\u{9b}31m\\x7f\\x00"),
            ("one\ntwo\tthree\r", false, "one\\ntwo\\tthree\\r"),
            ("one\ntwo\tthree\r", true, "one\ntwo\tthree\\r"),
        ];
        for (text, multi_line, expected) in cases {
            assert_eq!(printable(text, multi_line), expected, "{text:?}");
        }
    }

    #[test]
    fn json_keeps_its_value_and_loses_raw_controls() {
        let value = serde_json::json!({"a": "\x1b]0;x\x07 \u{7f}\u{85}\u{202e}z"});
        let text = serde_json::to_string(&value).unwrap();
        let safe = printable_json(&text);
        assert!(!safe.chars().any(|c| is_unsafe(c, true)), "{safe}");
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&safe).unwrap(),
            value
        );
    }
}

//! How pagent talks to people on a terminal: one error format, optional colour.
//!
//! Errors are reported once, at the top, as `pagent: error: MESSAGE` followed by one
//! `caused by:` line per source. Colour is used only when stdout is a terminal and
//! `NO_COLOR` is unset.

#![allow(clippy::print_stderr)]

use std::io::IsTerminal;

pub fn error(message: &str) {
    eprintln!("pagent: error: {message}");
}

/// Prints an `anyhow` chain: the top message, then its causes.
pub fn report(err: &anyhow::Error) {
    error(&err.to_string());
    for cause in err.chain().skip(1) {
        eprintln!("  caused by: {cause}");
    }
}

/// `text` with control characters (C0 but newline and tab, DEL, C1) and bidirectional
/// overrides written as escapes, so text from a project's files cannot drive the
/// terminal (window titles, the clipboard, hidden or reordered text).
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        let code = u32::from(c);
        let control = (code < 0x20 && c != '\n' && c != '\t')
            || (0x7f..=0x9f).contains(&code)
            || (0x202a..=0x202e).contains(&code)
            || (0x2066..=0x2069).contains(&code);
        if control {
            out.extend(c.escape_unicode());
        } else {
            out.push(c);
        }
    }
    out
}

pub fn warn(message: &str) {
    eprintln!("pagent: warning: {message}");
}

#[derive(Debug, Clone, Copy)]
pub struct Style {
    colour: bool,
}

impl Style {
    pub fn for_stdout(no_color: bool) -> Style {
        Style {
            colour: !no_color && std::io::stdout().is_terminal(),
        }
    }

    fn paint(self, code: &str, text: &str) -> String {
        if self.colour {
            format!("\x1b[{code}m{text}\x1b[0m")
        } else {
            text.to_owned()
        }
    }

    pub fn bold(self, text: &str) -> String {
        self.paint("1", text)
    }

    pub fn green(self, text: &str) -> String {
        self.paint("32", text)
    }

    pub fn yellow(self, text: &str) -> String {
        self.paint("33", text)
    }

    pub fn red(self, text: &str) -> String {
        self.paint("31", text)
    }

    pub fn dim(self, text: &str) -> String {
        self.paint("2", text)
    }
}

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

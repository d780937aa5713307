//! How much room a terminal gives, and text measured in the columns it takes there.
//!
//! A line redrawn in place (`pagent loop`'s status line, `pagent parallel`'s table) must
//! never wrap: `\r` and "erase line" reach back over one screen row only, so a line one
//! column too wide leaves a copy of itself at every redraw. The size is asked of the
//! terminal (`TIOCGWINSZ` on stdout, then stderr; on Windows the console's visible
//! window, `GetConsoleScreenBufferInfo`) at every redraw, so a resized window is followed;
//! `COLUMNS` and `LINES` stand in when neither is a terminal that answers, and 80x24 when
//! nothing says. Text is measured by display width (a CJK character or an
//! emoji takes two columns, a combining accent none), never by bytes or characters, and
//! only after it was made printable ([`printable`]): an escaped control takes the
//! columns of its escape.

use unicode_width::UnicodeWidthChar;

use crate::cli::env::Env;
use crate::cli::ui::printable;

/// A terminal's size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Size {
    pub cols: usize,
    pub rows: usize,
}

impl Size {
    /// What a terminal that says nothing is taken to be.
    pub const FALLBACK: Size = Size { cols: 80, rows: 24 };

    /// `COLUMNS` and `LINES` where set, else [`Size::FALLBACK`]: the size when no terminal
    /// answers.
    pub fn from_env(env: &Env) -> Size {
        Size {
            cols: env.columns.map_or(Size::FALLBACK.cols, usize::from),
            rows: env.lines.map_or(Size::FALLBACK.rows, usize::from),
        }
    }

    /// The terminal's size now: asked of stdout, then stderr; else `fallback`.
    pub fn ask(fallback: Size) -> Size {
        pagent_door::terminal::window_size().map_or(fallback, |size| Size {
            cols: usize::from(size.cols),
            rows: usize::from(size.rows),
        })
    }
}

/// The columns `text` takes on a terminal. Controls count as nothing: measure text made
/// printable first ([`fit`] does).
pub fn width(text: &str) -> usize {
    text.chars().map(|c| c.width().unwrap_or(0)).sum()
}

/// `text` made printable on one line and cut to at most `cols` columns, with `…` where
/// it was cut. A wide character that would straddle the edge is left out whole; the
/// combining marks of a character that is kept stay with it.
pub fn fit(text: &str, cols: usize) -> String {
    let text = printable(text, false);
    if width(&text) <= cols {
        return text.into_owned();
    }
    let room = cols.saturating_sub(1);
    let mut out = String::with_capacity(text.len().min(cols * 4));
    let mut used = 0;
    for c in text.chars() {
        let w = c.width().unwrap_or(0);
        if used + w > room {
            break;
        }
        used += w;
        out.push(c);
    }
    if cols > 0 {
        out.push('…');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn text_is_measured_and_cut_by_the_columns_it_takes() {
        assert_eq!(width("abc"), 3);
        assert_eq!(width("日本語"), 6);
        assert_eq!(
            width("e\u{301}te\u{301}"),
            3,
            "combining accents take no column"
        );
        assert_eq!(width("🦀"), 2);
        for (text, cols, cut) in [
            ("abcdef", 6, "abcdef"),
            ("abcdef", 5, "abcd…"),
            ("日本語です", 6, "日本…"),
            ("日本語です", 5, "日本…"),
            ("a日本", 4, "a日…"),
            ("a日本", 3, "a…"),
            ("e\u{301}e\u{301}e\u{301}e\u{301}", 3, "e\u{301}e\u{301}…"),
            ("🦀🦀🦀", 4, "🦀…"),
            ("abc", 0, ""),
            ("abc", 1, "…"),
        ] {
            let fitted = fit(text, cols);
            assert_eq!(fitted, cut, "{text:?} in {cols} columns");
            assert!(width(&fitted) <= cols, "{fitted:?} is wider than {cols}");
        }
    }

    #[test]
    fn item_5_columns_and_lines_stand_in_when_no_terminal_answers() {
        let env = |cols: &str, lines: &str| {
            let (cols, lines) = (cols.to_owned(), lines.to_owned());
            Env::from_vars(
                move |k| match k {
                    "COLUMNS" => Some(cols.clone().into()),
                    "LINES" => Some(lines.clone().into()),
                    _ => None,
                },
                None,
            )
        };
        assert_eq!(
            Size::from_env(&env("50", "12")),
            Size { cols: 50, rows: 12 }
        );
        assert_eq!(Size::from_env(&env("0", "x")), Size::FALLBACK);
        assert_eq!(Size::from_env(&Env::default()), Size::FALLBACK);
    }

    #[test]
    fn controls_are_measured_as_the_escapes_that_are_shown() {
        let fitted = fit("a\x1b[2Jb\nc", 80);
        assert_eq!(fitted, "a\\x1b[2Jb\\nc");
        assert_eq!(width(&fitted), 12);
        assert_eq!(fit("\x1b\x1b\x1b", 6), "\\x1b\\…");
    }
}

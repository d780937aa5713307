//! `pagent loop`'s status line, the one line redrawn in place on a terminal: its parts
//! (the spinner and where the loop is, the iteration's elapsed time, the tool the agent
//! uses now, and whatever a later part adds, such as a wait's countdown) joined with
//! ` · ` and fitted to the terminal.
//!
//! It is one function of the parts and the width so that every caller draws it the same
//! way. It keeps one column free: a line that reaches the last column leaves the cursor
//! waiting to wrap on some terminals, and the next redraw would then start a new row.
//! The parts come first to last in order of importance, so the cut takes the tool's
//! arguments before the elapsed time.

use crate::cli::screen;

/// The status line for a terminal `cols` wide: the non-empty parts joined with ` · `,
/// made printable and cut by display width to `cols - 1` columns.
pub fn render(parts: &[&str], cols: usize) -> String {
    let line = parts
        .iter()
        .map(|p| p.trim())
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join(" · ");
    screen::fit(&line, cols.saturating_sub(1))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::screen::width;

    #[test]
    fn item_5_the_status_line_fits_80_and_40_columns() {
        let parts = [
            "⠙ stage 4/5 implementer · iteration 12/25",
            "4m12s",
            "Bash cargo test --workspace --locked -- --include-ignored 日本語のテスト名 ✓",
        ];
        let at_80 = render(&parts, 80);
        assert_eq!(
            at_80,
            "⠙ stage 4/5 implementer · iteration 12/25 · 4m12s · Bash cargo test --workspac…"
        );
        assert_eq!(width(&at_80), 79);
        let at_40 = render(&parts, 40);
        assert_eq!(at_40, "⠙ stage 4/5 implementer · iteration 12…");
        assert_eq!(width(&at_40), 39);
        // Wide characters at the edge: never a half character, never past the width.
        let wide = render(
            &["⠙ ralph · iteration 1/25", "0s", "Write 日本語/日本語.md"],
            40,
        );
        assert!(width(&wide) <= 39, "{wide:?}");
        assert!(wide.ends_with('…'), "{wide:?}");
        assert_eq!(
            render(&["⠙ ralph · iteration 1/25", "", "0s"], 80),
            "⠙ ralph · iteration 1/25 · 0s"
        );
    }

    #[test]
    fn item_5_an_agents_newlines_and_escapes_stay_on_the_one_line() {
        let line = render(&["⠙ ralph", "Bash echo a\necho b\r\x1b[2J"], 80);
        assert_eq!(line, "⠙ ralph · Bash echo a\\necho b\\r\\x1b[2J");
        assert!(!line.contains('\n'));
    }
}

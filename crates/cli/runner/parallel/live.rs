//! `pagent parallel`'s live table on a terminal: one row per task, redrawn in place.
//!
//! Redrawing in place means moving the cursor up over the rows drawn last time, so a row
//! must stay one screen row and the table must fit the screen: a row one column too wide
//! wraps (and the next redraw, going up one row per task, lands inside the table:
//! repeated and merged rows), and a table taller than the screen scrolls its top away
//! (the cursor cannot go back up to it). So every row is cut by display width to the
//! terminal's width less one, the columns that matter least go first on a narrow
//! terminal (usage below 72 columns, elapsed time below 48), and a table taller than the
//! screen shows the running tasks first and says how many more there are. The size is
//! asked at every redraw, so a resized window is followed.

use std::io::Write;

use pagent_engine::format_duration;

use super::table::{Row, RowState};
use crate::cli::screen::{Size, fit, width};
use crate::cli::terminal::Control;
use crate::cli::ui::Style;

/// Below this many columns the usage column is left out.
const USAGE_FROM: usize = 72;
/// Below this many columns the elapsed-time column is left out.
const ELAPSED_FROM: usize = 48;

/// Redraws the table in place over the `previous` lines drawn before; returns how many
/// lines are drawn now.
pub(super) fn draw(
    rows: &[Row],
    previous: usize,
    size: Size,
    style: Style,
    out: &mut dyn Write,
) -> usize {
    let lines = render(rows, size, style);
    let mut text = String::new();
    if previous > 0 {
        let up = u16::try_from(previous).unwrap_or(u16::MAX);
        text.push_str(&Control::Up(up).to_string());
    }
    for line in &lines {
        text.push_str(&format!("{}{line}\n", Control::ClearLine));
    }
    // Fewer lines than last time (the window grew shorter): blank the rest, and keep
    // counting them so the next redraw starts at the top again.
    for _ in lines.len()..previous {
        text.push_str(&format!("{}\n", Control::ClearLine));
    }
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    lines.len().max(previous)
}

/// The table's lines for a terminal of `size`: each at most `size.cols - 1` columns, at
/// most `size.rows - 1` of them.
pub(super) fn render(rows: &[Row], size: Size, style: Style) -> Vec<String> {
    let cols = size.cols.saturating_sub(1).max(1);
    let room = size.rows.saturating_sub(1).max(1);
    let shown = chosen(rows, room);
    let widths = Widths::of(rows, size.cols);
    let mut lines: Vec<String> = shown
        .iter()
        .map(|&i| row_line(&rows[i], &widths, size.cols, cols, style))
        .collect();
    let hidden = rows.len() - shown.len();
    if hidden > 0 {
        lines.push(fit(
            &format!(
                "… and {hidden} more task{} (the summary lists all)",
                if hidden == 1 { "" } else { "s" }
            ),
            cols,
        ));
    }
    lines
}

/// Which rows fit in `room` lines: all of them, or the running ones first and then the
/// others in order, one line kept for the "more" note.
fn chosen(rows: &[Row], room: usize) -> Vec<usize> {
    if rows.len() <= room {
        return (0..rows.len()).collect();
    }
    let fit = room.saturating_sub(1);
    let running = (0..rows.len()).filter(|&i| rows[i].state == RowState::Running);
    let others = (0..rows.len()).filter(|&i| rows[i].state != RowState::Running);
    let mut picked: Vec<usize> = running.chain(others).take(fit).collect();
    picked.sort_unstable();
    picked
}

/// Each column as wide as its widest cell (a name at most a quarter of the terminal).
struct Widths {
    name: usize,
    state: usize,
    elapsed: usize,
    usage: usize,
}

impl Widths {
    fn of(rows: &[Row], terminal: usize) -> Widths {
        let widest =
            |cell: &dyn Fn(&Row) -> String| rows.iter().map(|r| width(&cell(r))).max().unwrap_or(0);
        Widths {
            name: widest(&|r| r.task.name.clone()).clamp(4, (terminal / 4).max(4)),
            state: widest(&|r| r.state.as_str().to_owned()),
            elapsed: widest(&elapsed),
            usage: widest(&|r| r.usage.shown()),
        }
    }
}

fn elapsed(row: &Row) -> String {
    row.finished
        .or_else(|| row.started.map(|s| s.elapsed()))
        .map_or_else(String::new, |d| format_duration(d.as_secs()))
}

/// `text` padded with spaces to `cols` columns.
fn pad(text: &str, cols: usize) -> String {
    format!("{text}{}", " ".repeat(cols.saturating_sub(width(text))))
}

fn row_line(row: &Row, widths: &Widths, terminal: usize, cols: usize, style: Style) -> String {
    let name = pad(&fit(&row.task.name, widths.name), widths.name);
    let state = pad(row.state.as_str(), widths.state);
    let mut head = format!("{name}  {state}");
    if terminal >= ELAPSED_FROM {
        head.push_str(&format!("  {:>w$}", elapsed(row), w = widths.elapsed));
    }
    if terminal >= USAGE_FROM {
        head.push_str(&format!("  {}", pad(&row.usage.shown(), widths.usage)));
    }
    let now = if row.state == RowState::Running {
        format!("{} {}", row.stage_iteration, row.tool)
    } else {
        row.detail.clone()
    };
    let now = now.split_whitespace().collect::<Vec<_>>().join(" ");
    let line = fit(format!("{head}  {now}").trim_end(), cols);
    // Colour the state where it is whole (`fit` keeps the columns before it).
    let at = name.len() + 2;
    match line.get(at..at + state.len()) {
        Some(shown) if shown == state => {
            let painted = match row.state {
                RowState::Complete => style.green(&state),
                RowState::Running => style.yellow(&state),
                RowState::Queued => style.dim(&state),
                _ => style.red(&state),
            };
            format!("{}{painted}{}", &line[..at], &line[at + state.len()..])
        }
        _ => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::runner::parallel::table::RowUsage;
    use crate::setup::tasks::Task;

    fn row(name: &str, state: RowState, now: &str) -> Row {
        Row {
            task: Task {
                name: name.into(),
                task: "do it".into(),
                promise: None,
                max_iterations: None,
                check: None,
                after: Vec::new(),
                story: None,
            },
            state,
            stage_iteration: "ralph 2/25".into(),
            tool: now.into(),
            iterations: 0,
            started: None,
            finished: None,
            detail: now.into(),
            stderr: String::new(),
            usage: RowUsage::default(),
        }
    }

    fn plain() -> Style {
        Style::for_stdout(true, false)
    }

    #[test]
    fn item_5_every_row_fits_80_and_40_columns() {
        let rows = vec![
            row(
                "alpha",
                RowState::Running,
                "Bash cargo test --workspace -- 日本語のテスト名をすべて実行する",
            ),
            row(
                "a-task-with-a-very-long-name-indeed",
                RowState::Complete,
                "the promise was made\nafter 3 iterations",
            ),
            row("日本語", RowState::Queued, ""),
        ];
        for size in [Size { cols: 80, rows: 24 }, Size { cols: 40, rows: 20 }] {
            let lines = render(&rows, size, plain());
            assert_eq!(lines.len(), 3, "{lines:#?}");
            for line in &lines {
                assert!(
                    width(line) < size.cols,
                    "{line:?} is {} wide at {size:?}",
                    width(line)
                );
                assert!(!line.contains('\n'), "{line:?}");
            }
        }
        let at_40 = render(&rows, Size { cols: 40, rows: 20 }, plain());
        assert_eq!(at_40[0], "alpha       running   ralph 2/25 Bash …");
        let at_80 = render(&rows, Size { cols: 80, rows: 24 }, plain());
        assert!(
            at_80[1].contains("the promise was made after 3"),
            "{at_80:#?}"
        );
    }

    #[test]
    fn item_5_a_table_taller_than_the_screen_shows_the_running_tasks_and_a_count() {
        let mut rows: Vec<Row> = (0..30)
            .map(|i| row(&format!("t{i:02}"), RowState::Queued, ""))
            .collect();
        rows[25].state = RowState::Running;
        rows[0].state = RowState::Complete;
        let lines = render(&rows, Size { cols: 40, rows: 20 }, plain());
        assert_eq!(lines.len(), 19, "{lines:#?}");
        assert!(lines.iter().any(|l| l.starts_with("t25 ")), "{lines:#?}");
        assert_eq!(lines[18], "… and 12 more tasks (the summary lists…");
        // A redraw over more lines than it draws blanks the rest and keeps their count.
        let mut out = Vec::new();
        assert_eq!(
            draw(
                &rows[..2],
                5,
                Size { cols: 40, rows: 20 },
                plain(),
                &mut out
            ),
            5
        );
    }
}

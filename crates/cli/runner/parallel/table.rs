//! One row per task, folded from its child's JSON events, and the two ways rows are shown:
//! the table redrawn in place while the loops run (on a terminal), and the summary at the
//! end (a table, or one JSON object with `--json`).

use std::io::Write;
use std::time::{Duration, Instant};

use pagent_engine::format_duration;
use pagent_engine::usage::{format_cost, format_count};
use serde_json::{Value, json};

use super::tasks::Task;
use crate::cli::ui::Style;

#[derive(Debug)]
pub(super) struct Row {
    pub(super) task: Task,
    pub(super) state: &'static str,
    pub(super) stage_iteration: String,
    pub(super) tool: String,
    pub(super) iterations: u64,
    pub(super) started: Option<Instant>,
    pub(super) finished: Option<Duration>,
    pub(super) detail: String,
    pub(super) stderr: String,
    pub(super) usage: RowUsage,
}

/// A task's tokens and cost so far, from its child's events.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(super) struct RowUsage {
    pub(super) tokens: u64,
    pub(super) cost_microusd: u64,
    pub(super) cost_known: bool,
    pub(super) reported: bool,
}

impl RowUsage {
    fn from_event(usage: &Value) -> Option<RowUsage> {
        Some(RowUsage {
            tokens: usage["tokens"].as_u64()?,
            cost_microusd: usage["cost_microusd"].as_u64().unwrap_or(0),
            cost_known: usage["cost_known"].as_bool().unwrap_or(false),
            reported: usage["reports"].as_u64().unwrap_or(0) > 0,
        })
    }

    /// The sum of every task's figures: a cost is known only where each task's was.
    fn total(rows: &[Row]) -> RowUsage {
        rows.iter().fold(
            RowUsage {
                cost_known: true,
                ..RowUsage::default()
            },
            |sum, row| RowUsage {
                tokens: sum.tokens.saturating_add(row.usage.tokens),
                cost_microusd: sum.cost_microusd.saturating_add(row.usage.cost_microusd),
                cost_known: sum.cost_known && (row.usage.cost_known || !row.usage.reported),
                reported: sum.reported || row.usage.reported,
            },
        )
    }

    /// `12.3k tok $0.04`, `-` before any usage was reported.
    fn shown(&self) -> String {
        if !self.reported {
            return "-".to_owned();
        }
        let mut text = format!("{} tok", format_count(self.tokens));
        if self.cost_known {
            text.push_str(&format!(" {}", format_cost(self.cost_microusd)));
        }
        text
    }

    fn json(&self) -> Value {
        json!({"tokens": self.tokens, "cost_microusd": self.cost_microusd, "cost_known": self.cost_known})
    }
}

/// Folds one JSON event of a child loop into its row.
pub(super) fn apply(row: &mut Row, line: &str, plain: bool, out: &mut dyn Write) {
    let Ok(event) = serde_json::from_str::<Value>(line) else {
        return;
    };
    let text = |key: &str| event[key].as_str().unwrap_or("").to_owned();
    match event["event"].as_str() {
        Some("iteration_started") => {
            row.stage_iteration = format!(
                "{} {}/{}",
                text("stage"),
                event["iteration"],
                event["max_iterations"]
            );
            row.tool.clear();
        }
        Some("tool") => {
            row.tool = format!("{} {}", text("name"), text("summary"))
                .trim()
                .to_owned()
        }
        Some("iteration_finished") => {
            row.iterations += 1;
            if let Some(usage) = RowUsage::from_event(&event["usage"]) {
                row.usage = usage;
            }
            row.detail = text("detail");
            if plain {
                let _ = writeln!(
                    out,
                    "[{}] iteration {} ({}): {}",
                    row.task.name,
                    event["iteration"],
                    text("outcome"),
                    row.detail
                );
            }
        }
        Some("finished") => {
            row.iterations = event["iterations"].as_u64().unwrap_or(row.iterations);
            row.detail = text("reason");
            if let Some(usage) = RowUsage::from_event(&event["usage"]) {
                row.usage = usage;
            }
        }
        _ => {}
    }
}

/// Redraws the table in place; returns how many lines it drew.
pub(super) fn draw(rows: &[Row], previous: usize, style: Style, out: &mut dyn Write) -> usize {
    let mut text = String::new();
    if previous > 0 {
        text.push_str(&format!("\x1b[{previous}A"));
    }
    let width = name_width(rows);
    for row in rows {
        let elapsed = row
            .finished
            .or_else(|| row.started.map(|s| s.elapsed()))
            .map_or_else(String::new, |d| format_duration(d.as_secs()));
        let state = format!("{:<11}", row.state);
        let state = match row.state {
            "complete" => style.green(&state),
            "running" => style.yellow(&state),
            "queued" => style.dim(&state),
            _ => style.red(&state),
        };
        let now = if row.state == "running" {
            format!("{} {}", row.stage_iteration, row.tool)
        } else {
            row.detail.clone()
        };
        let mut line = format!(
            "{:<width$}  {state} {:>7}  {:<16}  {}",
            row.task.name,
            elapsed,
            row.usage.shown(),
            now.trim()
        );
        if line.chars().count() > 110 {
            line = line.chars().take(109).collect::<String>() + "…";
        }
        text.push_str(&format!("\r\x1b[2K{line}\n"));
    }
    let _ = out.write_all(text.as_bytes());
    let _ = out.flush();
    rows.len()
}

pub(super) fn summary(rows: &[Row], style: Style, json: bool, out: &mut dyn Write) {
    if json {
        let tasks: Vec<Value> = rows
            .iter()
            .map(|r| json!({"task": r.task.name, "outcome": r.state, "iterations": r.iterations, "branch": format!("pagent/{}", r.task.name), "detail": r.detail, "usage": r.usage.json()}))
            .collect();
        let total = RowUsage::total(rows);
        let _ = writeln!(
            out,
            "{}",
            json!({"event": "summary", "tasks": tasks, "total": total.json()})
        );
        return;
    }
    let width = name_width(rows);
    let _ = writeln!(out);
    let _ = writeln!(
        out,
        "{}",
        style.bold(&format!(
            "{:<width$}  {:<11} {:>10}  {:<16}  {:<w2$}  detail",
            "task",
            "outcome",
            "iterations",
            "usage",
            "branch",
            w2 = width + 7
        ))
    );
    for row in rows {
        let _ = writeln!(
            out,
            "{:<width$}  {:<11} {:>10}  {:<16}  {:<w2$}  {}",
            row.task.name,
            row.state,
            row.iterations,
            row.usage.shown(),
            format!("pagent/{}", row.task.name),
            row.detail,
            w2 = width + 7
        );
    }
    let iterations: u64 = rows.iter().map(|r| r.iterations).sum();
    let _ = writeln!(
        out,
        "{:<width$}  {:<11} {:>10}  {:<16}",
        "total",
        "",
        iterations,
        RowUsage::total(rows).shown()
    );
}

/// The width of the task-name column: the longest name, at least 4 ("task").
fn name_width(rows: &[Row]) -> usize {
    rows.iter()
        .map(|r| r.task.name.len())
        .max()
        .unwrap_or(4)
        .max(4)
}

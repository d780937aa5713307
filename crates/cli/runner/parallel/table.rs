//! One row per task, folded from its child's `LoopEvent`s. The table redrawn in place
//! while the loops run is `live`'s, the summary at the end `summary`'s.

use std::io::Write;
use std::time::{Duration, Instant};

use pagent_engine::usage::{format_cost, format_count};
use serde_json::{Value, json};

use crate::runner::loop_event::{LoopEvent, UsageFigures};
use crate::setup::tasks::Task;

/// Where a task's loop is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum RowState {
    Queued,
    Running,
    /// Never started: the run was interrupted first.
    NotStarted,
    /// Never started: a task it waits for did not complete (or their work conflicts).
    Blocked,
    Complete,
    GaveUp,
    Interrupted,
    Failed,
}

impl RowState {
    /// How a child loop's exit code ends its row (`pagent loop`'s exit statuses).
    pub(super) fn from_exit(code: Option<i32>) -> RowState {
        match code {
            Some(0) => RowState::Complete,
            Some(3) => RowState::GaveUp,
            Some(130) => RowState::Interrupted,
            _ => RowState::Failed,
        }
    }

    pub(super) fn as_str(self) -> &'static str {
        match self {
            RowState::Queued => "queued",
            RowState::Running => "running",
            RowState::NotStarted => "not started",
            RowState::Blocked => "blocked",
            RowState::Complete => "complete",
            RowState::GaveUp => "gave up",
            RowState::Interrupted => "interrupted",
            RowState::Failed => "failed",
        }
    }
}

#[derive(Debug)]
pub(super) struct Row {
    pub(super) task: Task,
    pub(super) state: RowState,
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
    fn from_event(usage: UsageFigures) -> RowUsage {
        RowUsage {
            tokens: usage.tokens,
            cost_microusd: usage.cost_microusd,
            cost_known: usage.cost_known,
            reported: usage.reports > 0,
        }
    }

    /// The sum of every task's figures: a cost is known only where each task's was.
    pub(super) fn total(rows: &[Row]) -> RowUsage {
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
    pub(super) fn shown(&self) -> String {
        if !self.reported {
            return "-".to_owned();
        }
        let mut text = format!("{} tok", format_count(self.tokens));
        if self.cost_known {
            text.push_str(&format!(" {}", format_cost(self.cost_microusd)));
        }
        text
    }

    pub(super) fn json(&self) -> Value {
        json!({"tokens": self.tokens, "cost_microusd": self.cost_microusd, "cost_known": self.cost_known})
    }
}

/// Folds one JSON event of a child loop into its row.
pub(super) fn apply(row: &mut Row, line: &str, plain: bool, out: &mut dyn Write) {
    let Ok(event) = serde_json::from_str::<LoopEvent>(line) else {
        return;
    };
    match event {
        LoopEvent::IterationStarted {
            stage,
            iteration,
            max_iterations,
            ..
        } => {
            row.stage_iteration = format!("{stage} {iteration}/{max_iterations}");
            row.tool.clear();
        }
        LoopEvent::Tool { name, summary } => {
            row.tool = format!("{name} {}", summary.unwrap_or_default())
                .trim()
                .to_owned();
        }
        LoopEvent::IterationFinished {
            iteration,
            outcome,
            detail,
            usage,
            ..
        } => {
            row.iterations += 1;
            if let Some(usage) = usage {
                row.usage = RowUsage::from_event(usage);
            }
            row.detail = detail;
            if plain {
                let _ = writeln!(
                    out,
                    "[{}] iteration {iteration} ({}): {}",
                    row.task.name,
                    outcome.words(),
                    row.detail
                );
            }
        }
        LoopEvent::LimitWait { reason, .. } => {
            row.tool = format!("waiting for a usage limit: {reason}");
        }
        LoopEvent::LimitResumed { .. } => row.tool.clear(),
        LoopEvent::Finished {
            iterations,
            reason,
            usage,
            ..
        } => {
            row.iterations = iterations.map_or(row.iterations, u64::from);
            row.detail = reason;
            if let Some(usage) = usage {
                row.usage = RowUsage::from_event(usage);
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use pagent_engine::{Action, Status};

    use super::*;
    use crate::runner::loop_event::Ending;

    fn row() -> Row {
        Row {
            task: Task {
                name: "t".into(),
                task: "do it".into(),
                promise: None,
                max_iterations: None,
                check: None,
                after: Vec::new(),
                story: None,
            },
            state: RowState::Running,
            stage_iteration: String::new(),
            tool: String::new(),
            iterations: 0,
            started: None,
            finished: None,
            detail: String::new(),
            stderr: String::new(),
            usage: RowUsage::default(),
        }
    }

    /// A row is folded from the very events a child's progress writes (one type both
    /// ways); lines that are not events are ignored.
    #[test]
    fn a_row_folds_the_events_a_child_writes() {
        let mut row = row();
        let events = [
            LoopEvent::IterationStarted {
                stage: "ralph".into(),
                iteration: 2,
                max_iterations: 5,
                attempt: 0,
            },
            LoopEvent::Tool {
                name: "Edit".into(),
                summary: Some("src/a.rs".into()),
            },
        ];
        for event in &events {
            apply(
                &mut row,
                &serde_json::to_string(event).unwrap(),
                false,
                &mut Vec::new(),
            );
        }
        assert_eq!(row.stage_iteration, "ralph 2/5");
        assert_eq!(row.tool, "Edit src/a.rs");
        apply(&mut row, "not json\n", false, &mut Vec::new());
        apply(
            &mut row,
            "{\"event\": \"from the future\"}",
            false,
            &mut Vec::new(),
        );
        let finished = LoopEvent::IterationFinished {
            stage: "ralph".into(),
            iteration: 2,
            outcome: Action::Block,
            detail: "no promise".into(),
            elapsed_secs: 1,
            usage: Some(UsageFigures {
                tokens: 600,
                cost_microusd: 250_000,
                cost_known: true,
                reports: 1,
            }),
        };
        apply(
            &mut row,
            &serde_json::to_string(&finished).unwrap(),
            false,
            &mut Vec::new(),
        );
        assert_eq!((row.iterations, row.detail.as_str()), (1, "no promise"));
        assert_eq!(row.usage.shown(), "600 tok $0.25");
        let end = LoopEvent::Finished {
            outcome: Ending::GaveUp,
            status: Some(Status::GaveUp),
            iterations: Some(5),
            reason: "used all 5".into(),
            elapsed_secs: 9,
            usage: None,
            failure: None,
        };
        apply(
            &mut row,
            &serde_json::to_string(&end).unwrap(),
            false,
            &mut Vec::new(),
        );
        assert_eq!((row.iterations, row.detail.as_str()), (5, "used all 5"));
        // An end without figures keeps the last ones known.
        assert_eq!(row.usage.tokens, 600);
    }

    #[test]
    fn a_childs_exit_code_names_its_end() {
        for (code, state) in [
            (Some(0), RowState::Complete),
            (Some(3), RowState::GaveUp),
            (Some(130), RowState::Interrupted),
            (Some(1), RowState::Failed),
            (None, RowState::Failed),
        ] {
            assert_eq!(RowState::from_exit(code), state, "{code:?}");
        }
    }
}

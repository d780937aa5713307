//! A loop's own page: its stages with their conditions in words and progress (what
//! `pagent status` reports), the event log as a timeline in words, the points its charts draw (iterations, tokens
//! and cost over time), and for `pagent loop` the agent's live output.
//!
//! Everything here is read through `store` and `world`, capped: the newest
//! [`EVENTS_READ`] bytes of the event log, [`TIMELINE`] events shown, the newest
//! [`OUTPUT_READ`] bytes of the agent's log reduced to [`OUTPUT_LINES`] readable lines. An
//! agent's stream (Claude Code's, Codex's, OpenCode's JSON lines) is shown as what it
//! means (a tool and its target, the assistant's words), other lines as they are; the
//! page puts every text in a text node, so nothing here needs to be escaped twice.

use pagent_engine::{Action, Driver, State, Timestamp};
use pagent_protocol::stream::{AgentKind, StreamEvent, parse_line};
use serde::Serialize;

use crate::store::eventlog::read_recent_events;
use crate::store::project::Project;
use crate::world::overview::{LoopRow, TEXT_CAP, cap};

/// The newest part of the event log read for the timeline and the charts.
pub const EVENTS_READ: u64 = 512 * 1024;
pub const TIMELINE: usize = 200;
pub const OUTPUT_READ: u64 = 64 * 1024;
pub const OUTPUT_LINES: usize = 200;
const LINE_CAP: usize = 400;

#[derive(Debug, Serialize)]
pub struct Detail {
    pub row: LoopRow,
    /// `pagent status --json`'s report, when the state is the user's own.
    pub report: Option<serde_json::Value>,
    /// Each stage's exit condition in words ("architecture.md with at least 50 non-blank
    /// lines"), never its JSON.
    pub conditions: Vec<String>,
    /// Newest first.
    pub timeline: Vec<TimelineEvent>,
    pub points: Vec<Point>,
    pub output: Option<Output>,
}

#[derive(Debug, Serialize)]
pub struct TimelineEvent {
    pub ts: Timestamp,
    /// The machine's name (the page's style hook); `words` is what the page shows.
    pub action: Action,
    pub words: &'static str,
    pub stage: Option<String>,
    pub iteration: Option<u32>,
    pub detail: String,
    pub ms: Option<u64>,
}

/// The loop's figures after each decision that ended an iteration (and at its start).
#[derive(Debug, Clone, Copy, Serialize, PartialEq, Eq)]
pub struct Point {
    pub t: u64,
    pub iterations: u32,
    pub tokens: u64,
    pub cost_microusd: u64,
}

#[derive(Debug, Serialize)]
pub struct Output {
    pub file: String,
    pub lines: Vec<String>,
}

pub fn build(project: &Project, row: LoopRow, state: Option<&State>) -> Detail {
    let Some(state) = state else {
        return Detail {
            row,
            report: None,
            conditions: Vec::new(),
            timeline: Vec::new(),
            points: Vec::new(),
            output: None,
        };
    };
    let report = crate::world::report::build(project, state, true);
    let events: Vec<_> = read_recent_events(project, EVENTS_READ)
        .map(|(events, _)| events)
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.ts >= state.started_at)
        .collect();
    let points = points(state, &events);
    let timeline = events
        .iter()
        .rev()
        .take(TIMELINE)
        .map(|e| TimelineEvent {
            ts: e.ts,
            action: e.action,
            words: e.action.words(),
            stage: e.stage.as_deref().map(|s| cap(s, 80)),
            iteration: e.iteration,
            detail: cap(&e.detail, TEXT_CAP),
            ms: e.ms,
        })
        .collect();
    let output = (state.driver == Driver::Loop)
        .then(|| crate::store::runs::newest_log_tail(project, state, OUTPUT_READ))
        .flatten()
        .map(|(file, bytes)| Output {
            file,
            lines: readable_lines(&String::from_utf8_lossy(&bytes)),
        });
    Detail {
        row,
        report: serde_json::to_value(&report).ok(),
        conditions: state
            .stages
            .iter()
            .map(|s| cap(&s.exit_when.describe(), 300))
            .collect(),
        timeline,
        points,
        output,
    }
}

/// The charts' points: the start, then each iteration's end with the usage logged with it
/// (a line without usage, from before pagent logged it, keeps the last figures).
pub fn points(state: &State, events: &[crate::store::eventlog::Event]) -> Vec<Point> {
    let mut now = Point {
        t: state.started_at.0,
        iterations: 0,
        tokens: 0,
        cost_microusd: 0,
    };
    let mut points = vec![now];
    for event in events {
        let ends_iteration = matches!(
            event.action,
            Action::Block | Action::Advance | Action::Complete | Action::GaveUp
        );
        if !ends_iteration && event.tokens.is_none() {
            continue;
        }
        now.t = event.ts.0.max(now.t);
        if ends_iteration {
            now.iterations += 1;
        }
        now.tokens = event.tokens.unwrap_or(now.tokens);
        now.cost_microusd = event.cost_microusd.unwrap_or(now.cost_microusd);
        points.push(now);
    }
    // The charts are small: keep at most 500 points, the newest.
    let skip = points.len().saturating_sub(500);
    points.drain(..skip);
    points
}

/// An agent's output as lines a person reads: stream records as what they say, anything
/// else as it is, the newest [`OUTPUT_LINES`].
pub fn readable_lines(text: &str) -> Vec<String> {
    let mut lines = Vec::new();
    for line in text.lines() {
        let trimmed = line.trim_end();
        let record = trimmed.starts_with('{')
            && serde_json::from_str::<serde::de::IgnoredAny>(trimmed).is_ok();
        if record {
            let events = [AgentKind::Claude, AgentKind::Codex, AgentKind::Opencode]
                .into_iter()
                .map(|kind| parse_line(kind, trimmed))
                .find(|events| !events.is_empty());
            if let Some(events) = events {
                lines.extend(events.iter().filter_map(said));
            }
            // A JSON record that says nothing a person needs (usage, bookkeeping).
            continue;
        }
        if !trimmed.is_empty() {
            lines.push(cap(trimmed, LINE_CAP));
        }
    }
    let skip = lines.len().saturating_sub(OUTPUT_LINES);
    lines.drain(..skip);
    lines
}

fn said(event: &StreamEvent) -> Option<String> {
    let text = match event {
        StreamEvent::Started { model, .. } => match model {
            Some(model) => format!("— started ({model})"),
            None => "— started".to_owned(),
        },
        StreamEvent::Tool { name, summary, .. } => match summary {
            Some(summary) => format!("▸ {name} {summary}"),
            None => format!("▸ {name}"),
        },
        StreamEvent::Text { text, .. } => text.trim().to_owned(),
        StreamEvent::Finished { is_error, .. } => {
            if *is_error {
                "— finished with an error".to_owned()
            } else {
                "— finished".to_owned()
            }
        }
        StreamEvent::Error(error) => format!("error: {error}"),
        StreamEvent::Warning(warning) => format!("warning: {warning}"),
    };
    (!text.is_empty()).then(|| cap(&text, LINE_CAP))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::eventlog::Event;

    fn event(ts: u64, action: Action, usage: Option<(u64, u64)>) -> Event {
        Event {
            ts: Timestamp(ts),
            action,
            session_id: None,
            stage: None,
            iteration: None,
            detail: String::new(),
            ms: None,
            tokens: usage.map(|u| u.0),
            cost_microusd: usage.map(|u| u.1),
            failure: None,
        }
    }

    #[test]
    fn points_step_at_each_iteration_and_carry_the_usage() {
        let state = State::new_ralph(
            "t".into(),
            "DONE".into(),
            pagent_engine::SetupOptions::default(),
            None,
            Timestamp(100),
        );
        let events = [
            event(100, Action::Ralph, None),
            event(110, Action::Block, Some((500, 20))),
            event(115, Action::Check, None),
            event(120, Action::Pause, Some((500, 20))),
            // A line from before pagent logged usage keeps the last figures.
            event(130, Action::Block, None),
            event(125, Action::Complete, Some((900, 40))),
        ];
        let got: Vec<(u64, u32, u64, u64)> = points(&state, &events)
            .iter()
            .map(|p| (p.t, p.iterations, p.tokens, p.cost_microusd))
            .collect();
        assert_eq!(
            got,
            [
                (100, 0, 0, 0),
                (110, 1, 500, 20),
                (120, 1, 500, 20),
                (130, 2, 500, 20),
                (130, 3, 900, 40),
            ]
        );
    }

    #[test]
    fn agent_streams_read_as_what_they_say() {
        let claude = concat!(
            r#"{"type":"system","subtype":"init","session_id":"s","model":"m"}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"a","content":[{"type":"tool_use","id":"t","name":"Bash","input":{"command":"cargo test"}}]}}"#,
            "\n",
            r#"{"type":"assistant","message":{"id":"b","content":[{"type":"text","text":"All <b>green</b>."}]}}"#,
            "\n",
            "[stderr] a warning\n",
            "plain output\n",
            "{not json\n",
        );
        let lines = readable_lines(claude);
        assert_eq!(
            lines,
            [
                "— started (m)",
                "▸ Bash cargo test",
                "All <b>green</b>.",
                "[stderr] a warning",
                "plain output",
                "{not json",
            ]
        );
        let many: String = (0..300).map(|i| format!("line {i}\n")).collect();
        let lines = readable_lines(&many);
        assert_eq!(lines.len(), OUTPUT_LINES);
        assert_eq!(lines[0], "line 100");
        let long = "x".repeat(10_000);
        assert_eq!(readable_lines(&long)[0].chars().count(), LINE_CAP);
    }
}

//! [`RunSummary`]: a whole run folded from its [`StreamEvent`]s, whichever agent printed
//! them.
//!
//! The parsers say what one line means; this says what the run came to, and it is the one
//! place that knows how events add up across lines: a tool counted once per id, text
//! chunks that share an id joined, the end-of-run record's message preferred to any text.

use std::collections::HashSet;

use super::{AgentKind, StreamEvent, parse_line};

/// A whole run, folded from its events.
///
/// The final message is the [`StreamEvent::Finished`] record's message if it has one, else
/// the last assistant text message (chunks that share an id joined, as they came, untrimmed).
/// A run whose `is_error` is set failed by the agent's own account, whatever its final
/// message says. `finished` is false when the stream ended without an end-of-run record: the
/// agent was killed or crashed, or (OpenCode before its `done` event) never writes one.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct RunSummary {
    pub session_id: Option<String>,
    pub final_message: Option<String>,
    /// Distinct tool calls (calls without an id each count once).
    pub tools_used: u64,
    /// Every error reported, in order; an error repeated right after itself is kept once.
    pub errors: Vec<String>,
    /// Every warning reported, in order, kept the same way.
    pub warnings: Vec<String>,
    pub finished: bool,
    pub is_error: bool,
    pub num_turns: Option<u64>,
    pub cost_usd: Option<f64>,
    /// The id of the text message being assembled in `final_message`.
    text_id: Option<String>,
    /// Set once a Finished record gave the final message: later text no longer replaces it.
    final_from_record: bool,
    seen_tool_ids: HashSet<String>,
}

impl RunSummary {
    /// Folds a whole captured stream of `kind`'s output.
    pub fn from_stream(kind: AgentKind, stream: &str) -> Self {
        let mut summary = RunSummary::default();
        for line in stream.lines() {
            for event in parse_line(kind, line) {
                summary.push(&event);
            }
        }
        summary
    }

    /// Folds one event in. Returns false for news already told: a tool call reported
    /// again under an id seen before (Codex reports each tool when it starts and again
    /// when it completes), so a caller can show each call once.
    pub fn push(&mut self, event: &StreamEvent) -> bool {
        match event {
            StreamEvent::Started { session_id, .. } => {
                if let Some(id) = session_id {
                    self.session_id = Some(id.clone());
                }
            }
            StreamEvent::Tool { id, .. } => {
                let first_time = match id {
                    Some(id) => self.seen_tool_ids.insert(id.clone()),
                    None => true,
                };
                if first_time {
                    self.tools_used += 1;
                }
                return first_time;
            }
            StreamEvent::Text { id, text } => {
                if self.final_from_record {
                    return true;
                }
                let continues = id.is_some() && *id == self.text_id;
                match &mut self.final_message {
                    Some(message) if continues => message.push_str(text),
                    _ => {
                        self.final_message = Some(text.clone());
                        self.text_id = id.clone();
                    }
                }
            }
            StreamEvent::Finished {
                final_message,
                is_error,
                num_turns,
                cost_usd,
            } => {
                self.finished = true;
                // Sticky: a failure stays a failure whatever record follows it.
                self.is_error |= *is_error;
                if let Some(message) = final_message {
                    self.final_message = Some(message.clone());
                    self.final_from_record = true;
                }
                if num_turns.is_some() {
                    self.num_turns = *num_turns;
                }
                if cost_usd.is_some() {
                    self.cost_usd = *cost_usd;
                }
            }
            StreamEvent::Error(message) => {
                if self.errors.last() != Some(message) {
                    self.errors.push(message.clone());
                }
            }
            StreamEvent::Warning(message) => {
                if self.warnings.last() != Some(message) {
                    self.warnings.push(message.clone());
                }
            }
        }
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(id: Option<&str>, text: &str) -> StreamEvent {
        StreamEvent::Text {
            id: id.map(str::to_owned),
            text: text.to_owned(),
        }
    }

    fn tool(id: Option<&str>) -> StreamEvent {
        StreamEvent::Tool {
            id: id.map(str::to_owned),
            name: "Bash".to_owned(),
            summary: None,
        }
    }

    fn finished(final_message: Option<&str>, is_error: bool) -> StreamEvent {
        StreamEvent::Finished {
            final_message: final_message.map(str::to_owned),
            is_error,
            num_turns: None,
            cost_usd: None,
        }
    }

    fn fold(events: &[StreamEvent]) -> RunSummary {
        let mut summary = RunSummary::default();
        for event in events {
            summary.push(event);
        }
        summary
    }

    #[test]
    fn summary_counts_a_tool_id_once() {
        let summary = fold(&[
            tool(Some("a")),
            tool(Some("a")),
            tool(Some("b")),
            tool(None),
            tool(None),
        ]);
        assert_eq!(summary.tools_used, 4);
    }

    #[test]
    fn summary_joins_chunks_that_share_an_id() {
        let summary = fold(&[
            text(Some("p1"), "first "),
            text(Some("p1"), "message"),
            text(Some("p2"), "All "),
            text(Some("p2"), "done."),
        ]);
        assert_eq!(summary.final_message.as_deref(), Some("All done."));

        let summary = fold(&[text(None, "one"), text(None, "two")]);
        assert_eq!(summary.final_message.as_deref(), Some("two"));

        // An id seen before, after another message, starts over.
        let summary = fold(&[
            text(Some("p1"), "a"),
            text(None, "b"),
            text(Some("p1"), "c"),
        ]);
        assert_eq!(summary.final_message.as_deref(), Some("c"));
    }

    #[test]
    fn the_finished_message_wins_over_text_before_and_after() {
        let summary = fold(&[
            text(None, "draft"),
            finished(Some("final"), false),
            text(None, "late"),
        ]);
        assert_eq!(summary.final_message.as_deref(), Some("final"));
        assert!(summary.finished);
        assert!(!summary.is_error);
    }

    #[test]
    fn a_finished_record_without_a_message_keeps_the_last_text() {
        let summary = fold(&[
            text(Some("p"), "All "),
            finished(None, true),
            text(Some("p"), "done"),
        ]);
        assert_eq!(summary.final_message.as_deref(), Some("All done"));
        assert!(summary.is_error);
    }

    #[test]
    fn summary_keeps_the_session_and_each_error_once_in_a_row() {
        let summary = fold(&[
            StreamEvent::Started {
                session_id: Some("s1".into()),
                model: None,
            },
            StreamEvent::Started {
                session_id: None,
                model: Some("m".into()),
            },
            StreamEvent::Error("limit".into()),
            StreamEvent::Error("limit".into()),
            StreamEvent::Error("other".into()),
            StreamEvent::Error("limit".into()),
        ]);
        assert_eq!(summary.session_id.as_deref(), Some("s1"));
        assert_eq!(summary.errors, ["limit", "other", "limit"]);
        assert!(!summary.finished);
        assert_eq!(summary.final_message, None);
    }
}

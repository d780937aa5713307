//! OpenCode's `opencode run --format json` lines.
//!
//! Source: anomalyco/opencode (formerly sst/opencode), `packages/opencode/src/cli/cmd/run.ts`
//! and the newer `packages/opencode/src/cli/cmd/run/noninteractive.ts`, plus published
//! captures of 1.14.x runs (the field order and ids of the sample streams in
//! `tests/fixtures/agents/opencode-*.jsonl` follow those). No run of a real `opencode` binary
//! was captured here.
//!
//! Every line is `{"type":..,"timestamp":<ms>,"sessionID":"ses_..",...}` plus one payload:
//!
//! - `step_start` / `step_finish` with `part` (a `step-start` or `step-finish` part; the
//!   latter has `reason`, `tokens` and the step's `cost`). There is no start-of-run record,
//!   so every `step_start` yields [`StreamEvent::Started`] with the line's `sessionID`. A
//!   step's cost is the step's, not the run's, so it is not reported.
//! - `tool_use` with a `tool` part: `{callID, tool, state: {status, input, output|error}}`,
//!   printed once the call is `completed` or failed (`error`), never while it runs; so the
//!   live progress for OpenCode lags by one call. Tool names are lowercase (`read`, `bash`)
//!   and file inputs are `filePath`.
//! - `text` with a `text` part. `run.ts` prints each text part once, when it ends; the v2
//!   runner prints deltas as they stream, each with the same part `id`, and may print the
//!   rest after `step_finish`. The part id is the text's id, so both assemble the same way.
//!   `synthetic` parts (text OpenCode inserts itself) are not the model's words.
//! - `reasoning` (only with `--thinking`): ignored.
//! - `error` with `error`: `{name, data: {message}}` (the session error objects of `run.ts`)
//!   or `{type, message}` (the v2 runner).
//! - `done` with `reason: "idle"` (recent `run.ts` only) after the session went idle: the
//!   only end-of-run record OpenCode writes, and it has no message and no verdict; an
//!   OpenCode run's failure shows only as `error` lines.
//!
//! Not verified: how the v2 runner's deltas look in a real capture (read from the source),
//! and when `done` first shipped.

use serde_json::Value;

use super::{StreamEvent, str_at, string_at, text_at, tool_input_summary};

pub(super) fn parse(line: &Value) -> Vec<StreamEvent> {
    let part = line.get("part").filter(|part| part.is_object());
    let event = match (str_at(line, "type"), part) {
        (Some("step_start"), _) => Some(StreamEvent::Started {
            session_id: string_at(line, "sessionID")
                .or_else(|| part.and_then(|part| string_at(part, "sessionID"))),
            model: None,
        }),
        (Some("text"), Some(part)) => text(part),
        (Some("tool_use"), Some(part)) => tool(part),
        (Some("error"), _) => Some(StreamEvent::Error(error_message(line.get("error")))),
        (Some("done"), _) => Some(StreamEvent::Finished {
            final_message: None,
            is_error: false,
            num_turns: None,
            cost_usd: None,
        }),
        _ => None,
    };
    event.into_iter().collect()
}

fn text(part: &Value) -> Option<StreamEvent> {
    let synthetic = part
        .get("synthetic")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    if synthetic {
        return None;
    }
    Some(StreamEvent::Text {
        id: string_at(part, "id"),
        text: text_at(part, "text")?,
    })
}

fn tool(part: &Value) -> Option<StreamEvent> {
    let name = str_at(part, "tool")?;
    Some(StreamEvent::Tool {
        id: string_at(part, "callID").or_else(|| string_at(part, "id")),
        name: name.to_owned(),
        summary: part
            .get("state")
            .and_then(|state| state.get("input"))
            .and_then(|input| tool_input_summary(name, input)),
    })
}

/// The most specific message an error object offers.
fn error_message(error: Option<&Value>) -> String {
    error
        .and_then(|error| {
            error
                .get("data")
                .and_then(|data| str_at(data, "message"))
                .or_else(|| str_at(error, "message"))
                .or_else(|| str_at(error, "name"))
        })
        .unwrap_or("unknown error")
        .to_owned()
}

#[cfg(test)]
mod tests {
    use super::super::{AgentKind, RunSummary, parse_line};
    use super::*;

    const RUN: &str = include_str!("../../../../tests/fixtures/agents/opencode-run-json.jsonl");
    const V2: &str = include_str!("../../../../tests/fixtures/agents/opencode-run-json-v2.jsonl");
    const ERROR: &str =
        include_str!("../../../../tests/fixtures/agents/opencode-run-json-error.jsonl");

    fn events(stream: &str) -> Vec<StreamEvent> {
        stream
            .lines()
            .flat_map(|line| parse_line(AgentKind::Opencode, line))
            .collect()
    }

    fn started(session_id: &str) -> StreamEvent {
        StreamEvent::Started {
            session_id: Some(session_id.to_owned()),
            model: None,
        }
    }

    fn tool(id: &str, name: &str, summary: &str) -> StreamEvent {
        StreamEvent::Tool {
            id: Some(id.to_owned()),
            name: name.to_owned(),
            summary: Some(summary.to_owned()),
        }
    }

    fn text(id: &str, text: &str) -> StreamEvent {
        StreamEvent::Text {
            id: Some(id.to_owned()),
            text: text.to_owned(),
        }
    }

    const SESSION: &str = "ses_236c6de07ffeMCaCIVqcZsSjBi";
    const DONE: &str = "\n\nAll 3 tests pass; nothing left to do.\n\n<promise>DONE</promise>";

    #[test]
    fn sample_run_parses_to_its_events() {
        assert_eq!(
            events(RUN),
            [
                started(SESSION),
                text(
                    "prt_dc9392fd1001bbbbbbbbbbbbbb",
                    "I'll read the README first."
                ),
                tool(
                    "call_function_1hg9s1exw5vv_1",
                    "read",
                    "/home/user/project/README.md"
                ),
                tool("call_function_1hg9s1exw5vv_2", "bash", "cargo test"),
                tool("call_function_1hg9s1exw5vv_3", "edit", "/etc/hosts"),
                started(SESSION),
                text("prt_dc9394b1e001gggggggggggggg", DONE),
            ]
        );
    }

    #[test]
    fn sample_run_summary() {
        let summary = RunSummary::from_stream(AgentKind::Opencode, RUN);
        assert_eq!(summary.session_id.as_deref(), Some(SESSION));
        assert_eq!(summary.final_message.as_deref(), Some(DONE));
        assert_eq!(summary.tools_used, 3);
        assert!(summary.errors.is_empty());
        assert!(
            !summary.finished,
            "this OpenCode writes no end-of-run record"
        );
    }

    #[test]
    fn v2_deltas_assemble_into_the_last_message() {
        let session = "ses_1c07d7317ffeceODnAuIl4WqIu";
        let last = "prt_e3f83544c0041ggK5dLgINn2xM";
        assert_eq!(
            events(V2),
            [
                started(session),
                text("prt_e3f83544c0021ggK5dLgINn2xM", "Earlier "),
                text("prt_e3f83544c0021ggK5dLgINn2xM", "message."),
                tool("tool_zCr5OkHmal8wxT40Eau4QUrF", "grep", "fn parse_number"),
                text(last, "All tests"),
                text(last, " pass. <promise>"),
                text(last, "DONE</promise>"),
            ]
        );
        let summary = RunSummary::from_stream(AgentKind::Opencode, V2);
        assert_eq!(
            summary.final_message.as_deref(),
            Some("All tests pass. <promise>DONE</promise>")
        );
        assert_eq!(summary.session_id.as_deref(), Some(session));
        assert_eq!(summary.tools_used, 1);
    }

    #[test]
    fn errors_in_both_shapes_and_the_done_record() {
        let messages = [
            "Model not found: nonexistent/nonexistent.",
            "Invalid API key",
            "Session execution failed",
        ];
        let mut expected = vec![started("ses_236c4ba84ffeKJLGiwxfHIx8Au")];
        expected.extend(messages.map(|m| StreamEvent::Error(m.into())));
        expected.push(StreamEvent::Finished {
            final_message: None,
            is_error: false,
            num_turns: None,
            cost_usd: None,
        });
        assert_eq!(events(ERROR), expected);
        let summary = RunSummary::from_stream(AgentKind::Opencode, ERROR);
        assert_eq!(summary.errors, messages);
        assert!(summary.finished);
        assert_eq!(summary.final_message, None);
    }

    #[test]
    fn odd_lines_say_what_they_can() {
        for (line, expected) in [
            (
                r#"{"type":"error"}"#,
                vec![StreamEvent::Error("unknown error".into())],
            ),
            (
                r#"{"type":"error","error":{"name":"MessageAbortedError","data":{}}}"#,
                vec![StreamEvent::Error("MessageAbortedError".into())],
            ),
            (
                r#"{"type":"text","part":{"id":"p","type":"text","text":"x","synthetic":true}}"#,
                vec![],
            ),
            (
                r#"{"type":"text","part":{"id":"p","type":"text","text":""}}"#,
                vec![],
            ),
            (
                r#"{"type":"text","part":{"type":"text","text":"no id"}}"#,
                vec![StreamEvent::Text {
                    id: None,
                    text: "no id".into(),
                }],
            ),
            (
                r#"{"type":"tool_use","part":{"id":"prt_1","tool":"webfetch","state":{"status":"completed","input":{"url":"u"}}}}"#,
                vec![StreamEvent::Tool {
                    id: Some("prt_1".into()),
                    name: "webfetch".into(),
                    summary: None,
                }],
            ),
            (
                r#"{"type":"tool_use","part":{"callID":"c","state":{}}}"#,
                vec![],
            ),
            (
                r#"{"type":"reasoning","part":{"id":"p","type":"reasoning","text":"hmm"}}"#,
                vec![],
            ),
            (
                r#"{"type":"step_finish","sessionID":"s","part":{"reason":"stop","cost":0.1}}"#,
                vec![],
            ),
            (
                r#"{"type":"step_start","part":{"sessionID":"from_part"}}"#,
                vec![started("from_part")],
            ),
        ] {
            assert_eq!(parse_line(AgentKind::Opencode, line), expected, "{line}");
        }
    }
}

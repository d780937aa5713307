//! Claude Code's `--output-format stream-json --verbose` lines.
//!
//! Source: real captures from Claude Code 2.1.197 (`tests/fixtures/agents/claude-2.1.197*.jsonl`,
//! copied from `shared/fixtures`), and the Agent SDK's message types for the error shapes.
//! Every line is an object with a `type`:
//!
//! - `system` with `subtype: "init"` opens the run: `session_id`, `model`, tools, version.
//!   Other subtypes (`hook_started`, `hook_response`, `notification`, `api_retry`, ...) are
//!   progress noise here; an `api_retry` is not an error until the retries run out.
//! - `assistant`: one content block per line (`text`, `tool_use` with `id`, `name`,
//!   `input`, or `thinking`); the lines of one API message share `message.id`. Lines with a
//!   non-null `parent_tool_use_id` come from a subagent: their tools are work being done, but
//!   their text is not the main conversation's message, so it is dropped.
//! - `user`: tool results and injected feedback. Nothing for the runner.
//! - `result` closes the run: `subtype` (`success` or `error_*`), `is_error`, `result` (the
//!   final text; absent on `error_*` subtypes), `num_turns`, `total_cost_usd`, and on error
//!   subtypes an `errors` list of strings.
//! - `stream_event` lines (only with `--include-partial-messages`) repeat what the
//!   `assistant` lines say, in deltas; they are ignored so text is not counted twice.
//!
//! Not verified against a capture: the API-error shapes. The SDK documents an `error` field
//! (`rate_limit`, `server_error`, ...) on an assistant line whose text is Claude Code's
//! synthetic "API Error: ..." message; such a line becomes an [`StreamEvent::Error`] with
//! that text instead of a text event. The `errors` list of `error_*` results is likewise
//! taken from the SDK's types.

use serde_json::Value;

use super::{StreamEvent, str_at, string_at, text_at, tool_input_summary};

pub(super) fn parse(line: &Value) -> Vec<StreamEvent> {
    match str_at(line, "type") {
        Some("system") if str_at(line, "subtype") == Some("init") => {
            vec![StreamEvent::Started {
                session_id: string_at(line, "session_id"),
                model: string_at(line, "model"),
            }]
        }
        Some("assistant") => assistant(line),
        Some("result") => result(line),
        _ => Vec::new(),
    }
}

fn assistant(line: &Value) -> Vec<StreamEvent> {
    let blocks = line
        .get("message")
        .and_then(|message| message.get("content"))
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default();
    if let Some(code) = str_at(line, "error") {
        let texts: Vec<&str> = blocks
            .iter()
            .filter(|block| str_at(block, "type") == Some("text"))
            .filter_map(|block| str_at(block, "text"))
            .collect();
        let message = if texts.is_empty() {
            code.to_owned()
        } else {
            texts.join("\n")
        };
        return vec![StreamEvent::Error(message)];
    }
    let from_subagent = line
        .get("parent_tool_use_id")
        .is_some_and(|id| !id.is_null());
    blocks
        .iter()
        .filter_map(|block| match str_at(block, "type")? {
            "text" if !from_subagent => Some(StreamEvent::Text {
                id: None,
                text: text_at(block, "text")?,
            }),
            "tool_use" => {
                let name = str_at(block, "name")?;
                Some(StreamEvent::Tool {
                    id: string_at(block, "id"),
                    name: name.to_owned(),
                    summary: block
                        .get("input")
                        .and_then(|input| tool_input_summary(name, input)),
                })
            }
            _ => None,
        })
        .collect()
}

fn result(line: &Value) -> Vec<StreamEvent> {
    let mut events: Vec<StreamEvent> = line
        .get("errors")
        .and_then(Value::as_array)
        .map(Vec::as_slice)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .map(|error| StreamEvent::Error(error.to_owned()))
        .collect();
    let failed_subtype = str_at(line, "subtype").is_some_and(|s| s.starts_with("error"));
    let is_error = line
        .get("is_error")
        .and_then(Value::as_bool)
        .unwrap_or(false);
    events.push(StreamEvent::Finished {
        final_message: string_at(line, "result"),
        is_error: is_error || failed_subtype,
        num_turns: line.get("num_turns").and_then(Value::as_u64),
        cost_usd: line.get("total_cost_usd").and_then(Value::as_f64),
    });
    events
}

#[cfg(test)]
mod tests {
    use super::super::{AgentKind, RunSummary, parse_line};
    use super::*;

    const RUN: &str = include_str!("../../../../tests/fixtures/agents/claude-2.1.197.jsonl");
    const HOOK_EVENTS: &str =
        include_str!("../../../../tests/fixtures/agents/claude-2.1.197-hook-events.jsonl");
    const TRUNCATED: &str =
        include_str!("../../../../tests/fixtures/agents/claude-2.1.197-truncated.jsonl");
    const API_ERROR: &str =
        include_str!("../../../../tests/fixtures/agents/claude-api-error.jsonl");

    fn events(stream: &str) -> Vec<StreamEvent> {
        stream
            .lines()
            .flat_map(|line| parse_line(AgentKind::Claude, line))
            .collect()
    }

    fn text(text: &str) -> StreamEvent {
        StreamEvent::Text {
            id: None,
            text: text.to_owned(),
        }
    }

    fn tool(id: &str, name: &str, summary: &str) -> StreamEvent {
        StreamEvent::Tool {
            id: Some(id.to_owned()),
            name: name.to_owned(),
            summary: Some(summary.to_owned()),
        }
    }

    fn started(session_id: &str, model: &str) -> StreamEvent {
        StreamEvent::Started {
            session_id: Some(session_id.to_owned()),
            model: Some(model.to_owned()),
        }
    }

    #[test]
    fn captured_run_parses_to_its_events() {
        assert_eq!(
            events(RUN),
            [
                started(
                    "35f641a1-e3ce-47f3-8fb7-50415b29808a",
                    "claude-opus-4-8[1m]"
                ),
                text("I'll write the file."),
                tool(
                    "toolu_mock_1bb65151459d42e8b6ed",
                    "Write",
                    "/home/user/project/hello.txt"
                ),
                text("First pass done."),
                text("Finished. <promise>DONE</promise>"),
                StreamEvent::Finished {
                    final_message: Some("Finished. <promise>DONE</promise>".into()),
                    is_error: false,
                    num_turns: Some(3),
                    cost_usd: Some(0.000525),
                },
            ]
        );
    }

    #[test]
    fn the_newest_cli_prints_the_same_events() {
        // Claude Code 2.1.330 with --include-hook-events: a Write, one Stop block (the
        // hook's feedback and a notification line between the turns), then the promise.
        const NEWEST: &str =
            include_str!("../../../../tests/fixtures/agents/claude-2.1.330-hook-events.jsonl");
        assert_eq!(
            events(NEWEST),
            [
                started("6d339797-d9bd-4e53-a67a-d36547c83c73", "claude-opus-5-5"),
                text("I will write the file."),
                tool(
                    "toolu_mock_698c6ffb46f54ec9afac",
                    "Write",
                    "/home/user/project/hello.txt"
                ),
                text("First pass done."),
                text("Finished. <promise>DONE</promise>"),
                StreamEvent::Finished {
                    final_message: Some("Finished. <promise>DONE</promise>".into()),
                    is_error: false,
                    num_turns: Some(3),
                    cost_usd: Some(0.00042),
                },
            ]
        );
    }

    #[test]
    fn the_2_1_332_cli_prints_the_same_events() {
        // Claude Code 2.1.332 with --include-hook-events, recorded by the end-to-end suite
        // (PAGENT_E2E_RECORD): two Writes, each with its PostToolUse hook's events (the
        // first fed a JSON error back), then the promise and the Stop hook's.
        const V2_1_332: &str =
            include_str!("../../../../tests/fixtures/agents/claude-2.1.332-hook-events.jsonl");
        let write = |id: &str| tool(id, "Write", "/home/user/project/config.json");
        let done = "Config fixed.\n<promise>DONE</promise>";
        assert_eq!(
            events(V2_1_332),
            [
                started("2cba481d-22e4-47d9-8dfc-899f337fbbf3", "claude-opus-5-5"),
                text("Writing the file."),
                write("toolu_mock_0000"),
                text("Writing the file."),
                write("toolu_mock_0001"),
                text(done),
                StreamEvent::Finished {
                    final_message: Some(done.into()),
                    is_error: false,
                    num_turns: Some(3),
                    cost_usd: Some(0.00042),
                },
            ]
        );
    }

    #[test]
    fn captured_run_summary() {
        let summary = RunSummary::from_stream(AgentKind::Claude, RUN);
        assert_eq!(
            summary.session_id.as_deref(),
            Some("35f641a1-e3ce-47f3-8fb7-50415b29808a")
        );
        assert_eq!(
            summary.final_message.as_deref(),
            Some("Finished. <promise>DONE</promise>")
        );
        assert_eq!(summary.tools_used, 1);
        assert!(summary.finished);
        assert!(!summary.is_error);
        assert!(summary.errors.is_empty());
        assert_eq!(summary.num_turns, Some(3));
        assert_eq!(summary.cost_usd, Some(0.000525));
    }

    #[test]
    fn hook_events_say_nothing() {
        let events = events(HOOK_EVENTS);
        assert_eq!(HOOK_EVENTS.lines().count(), 15);
        assert_eq!(events.len(), 6, "{events:#?}");
        assert_eq!(
            events[2],
            tool(
                "toolu_mock_cc6dff2493d2442ca22f",
                "Write",
                "/home/user/project/a.txt"
            )
        );
        let summary = RunSummary::from_stream(AgentKind::Claude, HOOK_EVENTS);
        assert_eq!(
            summary.session_id.as_deref(),
            Some("da3368d4-2511-4a12-b257-32afdf9911ed")
        );
        assert_eq!(
            summary.final_message.as_deref(),
            Some("Finished. <promise>DONE</promise>")
        );
        assert_eq!(summary.tools_used, 1);
        assert!(summary.finished);
    }

    #[test]
    fn a_run_cut_off_before_its_result_keeps_the_last_text() {
        assert!(!TRUNCATED.ends_with('\n'));
        let summary = RunSummary::from_stream(AgentKind::Claude, TRUNCATED);
        assert!(!summary.finished);
        assert_eq!(
            summary.final_message.as_deref(),
            Some("Finished. <promise>DONE</promise>")
        );
        assert_eq!(summary.tools_used, 1);
    }

    #[test]
    fn an_api_error_is_an_error_not_a_message() {
        let api_error = "API Error: 529 {\"type\":\"error\",\"error\":{\"type\":\"overloaded_error\",\"message\":\"Overloaded\"}}";
        assert_eq!(
            events(API_ERROR),
            [
                started("6c1f0b9e-2d4a-4f57-9a61-3e8d7c2b5a10", "claude-opus-4-8"),
                text("Let me run the tests first."),
                tool("toolu_01B", "Bash", "cargo test --workspace"),
                StreamEvent::Error(api_error.into()),
                StreamEvent::Finished {
                    final_message: Some(api_error.into()),
                    is_error: true,
                    num_turns: Some(2),
                    cost_usd: Some(0.0123),
                },
            ]
        );
        let summary = RunSummary::from_stream(AgentKind::Claude, API_ERROR);
        assert!(summary.is_error);
        assert_eq!(summary.errors, [api_error]);
    }

    #[test]
    fn error_results_fail_the_run_and_report_their_errors() {
        let line = r#"{"type":"result","subtype":"error_max_turns","is_error":false,"num_turns":50,"session_id":"s","total_cost_usd":1.5,"errors":["Reached maximum number of turns (50)",7]}"#;
        assert_eq!(
            parse_line(AgentKind::Claude, line),
            [
                StreamEvent::Error("Reached maximum number of turns (50)".into()),
                StreamEvent::Finished {
                    final_message: None,
                    is_error: true,
                    num_turns: Some(50),
                    cost_usd: Some(1.5),
                },
            ]
        );
    }

    #[test]
    fn a_result_with_odd_fields_still_ends_the_run() {
        let line = r#"{"type":"result","is_error":"yes","num_turns":-3,"total_cost_usd":"free","result":["x"]}"#;
        assert_eq!(
            parse_line(AgentKind::Claude, line),
            [StreamEvent::Finished {
                final_message: None,
                is_error: false,
                num_turns: None,
                cost_usd: None,
            }]
        );
    }

    #[test]
    fn subagent_text_is_dropped_but_its_tools_count() {
        let line = r#"{"type":"assistant","message":{"content":[{"type":"text","text":"sub says"},{"type":"tool_use","id":"t9","name":"Grep","input":{"pattern":"fn main"}}]},"parent_tool_use_id":"toolu_task"}"#;
        assert_eq!(
            parse_line(AgentKind::Claude, line),
            [tool("t9", "Grep", "fn main")]
        );
    }

    #[test]
    fn other_tools_thinking_and_empty_text_say_little() {
        let line = r#"{"type":"assistant","message":{"content":[{"type":"thinking","thinking":"hmm"},{"type":"text","text":""},{"type":"tool_use","name":"WebFetch","input":{"url":"https://example.invalid"}},{"type":"tool_use","id":"x"},{"type":"text","text":5}]},"parent_tool_use_id":null}"#;
        assert_eq!(
            parse_line(AgentKind::Claude, line),
            [StreamEvent::Tool {
                id: None,
                name: "WebFetch".into(),
                summary: None,
            }]
        );
    }

    #[test]
    fn partial_message_deltas_and_other_system_lines_are_ignored() {
        for line in [
            r#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}}"#,
            r#"{"type":"system","subtype":"api_retry","attempt":1,"error":"server_error"}"#,
            r#"{"type":"system","session_id":"s"}"#,
            r#"{"type":"user","message":{"role":"user","content":"hello"}}"#,
        ] {
            assert_eq!(parse_line(AgentKind::Claude, line), [], "{line}");
        }
    }

    #[test]
    fn an_init_without_fields_still_starts() {
        assert_eq!(
            parse_line(
                AgentKind::Claude,
                r#"{"type":"system","subtype":"init","model":3}"#
            ),
            [StreamEvent::Started {
                session_id: None,
                model: None,
            }]
        );
    }
}

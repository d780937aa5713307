//! The OpenCode parser against real `opencode run --format json` streams of OpenCode
//! 1.18.33 run offline against a mock chat-completions API
//! (`tests/fixtures/agents/opencode-1.18.33/`: text, the prompt on stdin, write and bash
//! tools, a tool auto-rejected, HTTP 400 and 500), the v2 runner's deltas (written from the
//! source, not captured) and single odd lines.

use super::super::{AgentKind, RunSummary, parse_line};
use super::*;

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!(
            "../../../../../tests/fixtures/agents/opencode-1.18.33/",
            $name
        ))
    };
}

const TEXT: &str = fixture!("text.jsonl");
const STDIN: &str = fixture!("text-stdin-prompt.jsonl");
const TOOL: &str = fixture!("tool.jsonl");
const BASH: &str = fixture!("tool-bash.jsonl");
const REJECTED: &str = fixture!("permission-rejected.jsonl");
const ERROR400: &str = fixture!("error400.jsonl");
const ERROR500: &str = fixture!("error500.jsonl");
const V2: &str = include_str!("../../../../../tests/fixtures/agents/opencode-run-json-v2.jsonl");

const AGENT: AgentKind = AgentKind::Opencode;

/// The events of a stream, leaving out the session that every line but `step_start` tells
/// before its own event (`a_run_may_begin_with_any_line` checks that part).
fn events(stream: &str) -> Vec<StreamEvent> {
    stream
        .lines()
        .flat_map(|line| {
            let mut events = parse_line(AgentKind::Opencode, line);
            let step_start = line.contains(r#""type":"step_start""#);
            if !step_start && matches!(events.first(), Some(StreamEvent::Started { .. })) {
                events.remove(0);
            }
            events
        })
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

const DONE: &str = "All done: the task is complete.\n\n<promise>DONE</promise>";

#[test]
fn a_text_answer_finishes_with_its_last_step() {
    let session = "ses_dfc99617dffeXZeTKVkVb4tVdK";
    assert_eq!(
        events(TEXT),
        [
            started(session),
            text("prt_20366b76a0015ukTuH8PpjUVWE", DONE),
            finished(false),
        ]
    );
    for stream in [TEXT, STDIN] {
        let summary = RunSummary::from_stream(AgentKind::Opencode, stream);
        assert_eq!(summary.final_message.as_deref(), Some(DONE));
        assert!(summary.finished && !summary.is_error);
        assert!(summary.errors.is_empty());
    }
}

#[test]
fn a_step_that_ends_in_tool_calls_is_not_the_end() {
    let session = "ses_dfc99220cffexRl50KwWOiwHAM";
    assert_eq!(
        events(TOOL),
        [
            started(session),
            tool("call_mock0009", "write", "mock-tool.txt"),
            started(session),
            text(
                "prt_20366fded001VoucqQ4Ns67hnx",
                "I wrote mock-tool.txt.\n\n<promise>DONE</promise>"
            ),
            finished(false),
        ]
    );
    let summary = RunSummary::from_stream(AgentKind::Opencode, BASH);
    assert_eq!(summary.tools_used, 1);
    assert!(summary.finished && !summary.is_error);
    assert_eq!(
        events(BASH)[1],
        tool(
            "call_mock0003",
            "bash",
            "printf '%s' 'added by the mock model'\\''s apply_patch …"
        )
    );
}

#[test]
fn a_rejected_tool_is_still_a_tool_call() {
    let summary = RunSummary::from_stream(AgentKind::Opencode, REJECTED);
    assert_eq!(summary.tools_used, 1);
    assert!(!summary.is_error);
}

#[test]
fn an_api_error_is_a_failed_run_that_names_its_session() {
    for (stream, session, message) in [
        (
            ERROR400,
            "ses_dfc98dab4ffej1pnEuKcDHI9Xe",
            "mock: simulated HTTP 400 error",
        ),
        (
            ERROR500,
            "ses_dfc98b5baffeK06fcQNmjjAd4V",
            "mock: simulated HTTP 500 error",
        ),
    ] {
        assert_eq!(
            parse_line(AgentKind::Opencode, stream.trim()),
            [
                started(session),
                StreamEvent::Error(message.into()),
                finished(true),
            ]
        );
        let summary = RunSummary::from_stream(AgentKind::Opencode, stream);
        assert_eq!(summary.session_id.as_deref(), Some(session));
        assert!(summary.finished && summary.is_error);
        assert_eq!(summary.final_message, None);
    }
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
            finished(false),
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
fn a_run_may_begin_with_any_line() {
    // Each line that yields an event names its session first, so a stream cut at its
    // start (or a runner that prints no step_start) still has one.
    for line in TOOL.lines().chain(TEXT.lines()) {
        let events = parse_line(AgentKind::Opencode, line);
        if let Some(first) = events.first() {
            assert!(
                matches!(
                    first,
                    StreamEvent::Started {
                        session_id: Some(_),
                        ..
                    }
                ),
                "{line}: {events:?}"
            );
        }
    }
    let summary = RunSummary::from_stream(AgentKind::Opencode, TEXT.lines().nth(1).unwrap());
    assert_eq!(
        summary.session_id.as_deref(),
        Some("ses_dfc99617dffeXZeTKVkVb4tVdK")
    );
}

#[test]
fn a_failure_stays_a_failure_after_a_done_record() {
    let summary = RunSummary::from_stream(
        AgentKind::Opencode,
        "{\"type\":\"error\",\"error\":{\"type\":\"x\",\"message\":\"Invalid API key\"}}\n{\"type\":\"done\",\"reason\":\"idle\"}",
    );
    assert!(summary.finished && summary.is_error);
    assert_eq!(summary.errors, ["Invalid API key"]);
    assert_eq!(summary.session_id, None);
}

#[test]
fn odd_lines_say_what_they_can() {
    let failed = |message: &str| vec![StreamEvent::Error(message.into()), finished(true)];
    for (line, expected) in [
        (r#"{"type":"error"}"#, failed("unknown error")),
        (
            r#"{"type":"error","error":{"name":"MessageAbortedError","data":{}}}"#,
            failed("MessageAbortedError"),
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
            r#"{"type":"step_finish","sessionID":"s","part":{"reason":"tool-calls"}}"#,
            vec![],
        ),
        (
            r#"{"type":"step_finish","sessionID":"s","part":{"reason":"stop","cost":0.1}}"#,
            vec![started("s"), finished(false)],
        ),
        (r#"{"type":"step_finish"}"#, vec![finished(false)]),
        (
            r#"{"type":"step_start","part":{"sessionID":"from_part"}}"#,
            vec![started("from_part")],
        ),
    ] {
        assert_eq!(parse_line(AgentKind::Opencode, line), expected, "{line}");
    }
}

#[test]
fn the_streams_recorded_by_the_e2e_suite() {
    // tests/e2e/agents.rs, recorded with PAGENT_E2E_RECORD: a ralph loop (a tool call, an
    // API error then its retry, the promise) and a two-stage pipeline.
    for (name, stream, final_message, is_error, tools) in [
        (
            "ralph 1",
            fixture!("e2e-ralph-ralph-001.jsonl"),
            Some("Wrote one.txt."),
            false,
            1,
        ),
        (
            "ralph 2",
            fixture!("e2e-ralph-ralph-002.jsonl"),
            None,
            true,
            0,
        ),
        (
            "ralph 2, retry",
            fixture!("e2e-ralph-ralph-002-retry1.jsonl"),
            Some("Still working."),
            false,
            0,
        ),
        (
            "ralph 3",
            fixture!("e2e-ralph-ralph-003.jsonl"),
            Some("All done. <promise>DONE</promise>"),
            false,
            0,
        ),
        (
            "design",
            fixture!("e2e-pipeline-design-001.jsonl"),
            Some("Design written."),
            false,
            1,
        ),
        (
            "verify",
            fixture!("e2e-pipeline-verify-001.jsonl"),
            Some("Checked against the PRD. <promise>DONE</promise>"),
            false,
            0,
        ),
    ] {
        let summary = RunSummary::from_stream(AGENT, stream);
        assert_eq!(summary.final_message.as_deref(), final_message, "{name}");
        assert_eq!(
            (summary.finished, summary.is_error),
            (true, is_error),
            "{name}"
        );
        assert_eq!(summary.tools_used, tools, "{name}");
        assert!(summary.session_id.is_some(), "{name}");
    }
}

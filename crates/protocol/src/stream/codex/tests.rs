//! The Codex parser against the sample streams in `tests/fixtures/agents/codex-*.jsonl`:
//! the current `exec --json` events, a failed turn, the legacy protocol events, shell
//! wrappers, and items whose fields are missing or odd.

use super::super::{AgentKind, RunSummary, parse_line};
use super::*;

const RUN: &str = include_str!("../../../../../tests/fixtures/agents/codex-exec-json.jsonl");
const FAILED: &str =
    include_str!("../../../../../tests/fixtures/agents/codex-exec-json-failed.jsonl");
const LEGACY: &str = include_str!("../../../../../tests/fixtures/agents/codex-legacy-json.jsonl");

fn events(stream: &str) -> Vec<StreamEvent> {
    stream
        .lines()
        .flat_map(|line| parse_line(AgentKind::Codex, line))
        .collect()
}

fn tool(id: &str, name: &str, summary: Option<&str>) -> StreamEvent {
    StreamEvent::Tool {
        id: Some(id.to_owned()),
        name: name.to_owned(),
        summary: summary.map(str::to_owned),
    }
}

fn text(id: Option<&str>, text: &str) -> StreamEvent {
    StreamEvent::Text {
        id: id.map(str::to_owned),
        text: text.to_owned(),
    }
}

const DONE: &str = "Fixed negative number lexing; all 57 tests pass.\n\n<promise>DONE</promise>";
const LEXER: &str = "/home/user/project/src/lexer.rs";

#[test]
fn sample_run_parses_to_its_events() {
    let both_files = "/home/user/project/src/lexer.rs, /home/user/project/tests/negative.rs";
    let search = "rust i64 from_str_radix negative";
    assert_eq!(
        events(RUN),
        [
            StreamEvent::Started {
                session_id: Some("0199a213-81c0-7800-8aa1-bbab2a035a53".into()),
                model: None,
            },
            tool("item_1", "shell", Some("cargo test -p parser")),
            tool("item_1", "shell", Some("cargo test -p parser")),
            text(
                Some("item_3"),
                "The lexer drops the sign of negative numbers; fixing it."
            ),
            tool("item_4", "file_change", Some(LEXER)),
            tool("item_4", "file_change", Some(both_files)),
            tool(
                "item_5",
                "file_change",
                Some("/home/user/project/CHANGELOG.md")
            ),
            tool("item_6", "mcp__docs__search", None),
            tool("item_6", "mcp__docs__search", None),
            tool("item_7", "web_search", Some(search)),
            tool("item_7", "web_search", Some(search)),
            tool("item_8", "shell", Some("cargo test")),
            tool("item_8", "shell", Some("cargo test")),
            StreamEvent::Error(
                "model rerouted: gpt-5.5 -> gpt-5.5-mini (HighRiskCyberActivity)".into()
            ),
            text(Some("item_10"), DONE),
            finished(None, false),
        ]
    );
}

#[test]
fn sample_run_summary() {
    let summary = RunSummary::from_stream(AgentKind::Codex, RUN);
    assert_eq!(
        summary.session_id.as_deref(),
        Some("0199a213-81c0-7800-8aa1-bbab2a035a53")
    );
    assert_eq!(summary.final_message.as_deref(), Some(DONE));
    assert_eq!(summary.tools_used, 6, "item_1, 4, 5, 6, 7 and 8");
    assert!(summary.finished);
    assert!(!summary.is_error);
    assert_eq!(summary.errors.len(), 1);
}

#[test]
fn a_failed_turn_fails_the_run() {
    let limit = "You've hit your usage limit. Try again later.";
    let reconnect =
        "Reconnecting... 1/5 (stream disconnected before completion: error sending request)";
    assert_eq!(
        events(FAILED),
        [
            StreamEvent::Started {
                session_id: Some("0199a7c4-5d10-7e31-b2a8-64f0c9d1e2f3".into()),
                model: None,
            },
            text(Some("item_0"), "Starting on the parser."),
            StreamEvent::Error(reconnect.into()),
            StreamEvent::Error(limit.into()),
            StreamEvent::Error(limit.into()),
            finished(None, true),
        ]
    );
    let summary = RunSummary::from_stream(AgentKind::Codex, FAILED);
    assert!(summary.finished);
    assert!(summary.is_error);
    assert_eq!(summary.errors, [reconnect, limit]);
    assert_eq!(summary.tools_used, 0);
}

#[test]
fn a_turn_failed_without_a_message_still_says_so() {
    assert_eq!(
        parse_line(AgentKind::Codex, r#"{"type":"turn.failed"}"#),
        [
            StreamEvent::Error("turn failed".into()),
            finished(None, true)
        ]
    );
}

#[test]
fn legacy_events_parse_to_the_same_events() {
    let done = "Fixed. <promise>DONE</promise>";
    assert_eq!(
        events(LEGACY),
        [
            StreamEvent::Started {
                session_id: Some("5973b6c0-94b8-487b-a530-2aeb6098ae0e".into()),
                model: Some("codex-mini-latest".into()),
            },
            tool("call_Hq4s", "shell", Some("cargo test")),
            tool(
                "call_Zr2k",
                "file_change",
                Some("/home/user/project/src/lib.rs")
            ),
            tool("call_M1", "mcp__docs__search", None),
            text(None, done),
            finished(Some(done.into()), false),
        ]
    );
    let summary = RunSummary::from_stream(AgentKind::Codex, LEGACY);
    assert_eq!(summary.final_message.as_deref(), Some(done));
    assert_eq!(summary.tools_used, 3);
    assert!(summary.finished);
}

#[test]
fn legacy_errors_and_flat_mcp_calls() {
    assert_eq!(
        parse_line(
            AgentKind::Codex,
            r#"{"id":"1","msg":{"type":"error","message":"stream disconnected"}}"#
        ),
        [StreamEvent::Error("stream disconnected".into())]
    );
    assert_eq!(
        parse_line(
            AgentKind::Codex,
            r#"{"id":"1","msg":{"type":"mcp_tool_call_begin","call_id":"c","server":"gh","tool":"pr"}}"#
        ),
        [tool("c", "mcp__gh__pr", None)]
    );
    assert_eq!(
        parse_line(AgentKind::Codex, r#"{"id":"1","msg":"task_started"}"#),
        []
    );
}

#[test]
fn shell_wrappers_are_unwrapped() {
    assert_eq!(unwrap_shell("bash -lc 'cargo test'"), "cargo test");
    assert_eq!(unwrap_shell("/bin/zsh -lc \"ls -la\""), "ls -la");
    assert_eq!(unwrap_shell("bash -lc ls"), "ls");
    assert_eq!(unwrap_shell("bash -lc 'unbalanced"), "'unbalanced");
    assert_eq!(unwrap_shell("cargo test"), "cargo test");
    let argv = |words: &[&str]| -> Vec<Value> { words.iter().map(|w| Value::from(*w)).collect() };
    assert_eq!(
        legacy_command(&argv(&["/bin/bash", "-lc", "make -j4"])),
        Some("make -j4".into())
    );
    assert_eq!(legacy_command(&argv(&["ls", "-la"])), Some("ls -la".into()));
    assert_eq!(legacy_command(&[]), None);
}

#[test]
fn items_with_odd_fields_say_what_they_can() {
    for (line, expected) in [
        (
            r#"{"type":"item.started","item":{"type":"command_execution","command":7}}"#,
            vec![StreamEvent::Tool {
                id: None,
                name: "shell".into(),
                summary: None,
            }],
        ),
        (
            r#"{"type":"item.completed","item":{"id":"i","type":"agent_message"}}"#,
            vec![],
        ),
        (
            r#"{"type":"item.completed","item":{"id":"i","type":"mcp_tool_call"}}"#,
            vec![tool("i", "mcp_tool_call", None)],
        ),
        (
            r#"{"type":"item.completed","item":{"id":"i","type":"file_change","changes":"x"}}"#,
            vec![tool("i", "file_change", None)],
        ),
        (
            r#"{"type":"item.updated","item":{"id":"i","type":"command_execution","command":"ls"}}"#,
            vec![],
        ),
        (
            r#"{"type":"item.started","item":{"id":"i","type":"agent_message","text":"x"}}"#,
            vec![],
        ),
        (
            r#"{"type":"item.completed","item":{"id":"i","type":"reasoning","text":"x"}}"#,
            vec![],
        ),
        (r#"{"type":"error"}"#, vec![]),
        (
            r#"{"type":"thread.started","thread_id":5}"#,
            vec![StreamEvent::Started {
                session_id: None,
                model: None,
            }],
        ),
    ] {
        assert_eq!(parse_line(AgentKind::Codex, line), expected, "{line}");
    }
}

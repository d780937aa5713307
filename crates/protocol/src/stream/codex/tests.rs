//! The Codex parser against real `codex exec --json` streams of Codex 0.169.0 run offline
//! against a mock Responses API (`tests/fixtures/agents/codex-0.169.0/`: text, a shell
//! tool, a patch, HTTP 400 and 500 with and without retries, `response.failed`), against
//! the legacy protocol events (written from codex-core's types; no binary of that age was
//! run), and single lines whose fields are missing or odd.

use super::super::{AgentKind, RunSummary, parse_line};
use super::*;

macro_rules! fixture {
    ($name:literal) => {
        include_str!(concat!(
            "../../../../../tests/fixtures/agents/codex-0.169.0/",
            $name
        ))
    };
}

const TEXT: &str = fixture!("text.jsonl");
const TOOL: &str = fixture!("tool.jsonl");
const PATCH: &str = fixture!("patch.jsonl");
const ERROR400: &str = fixture!("error400.jsonl");
const ERROR500: &str = fixture!("error500.jsonl");
const ERROR500_RETRIES: &str = fixture!("error500-with-retries.jsonl");
const FAILED: &str = fixture!("failed.jsonl");
const LEGACY: &str = include_str!("../../../../../tests/fixtures/agents/codex-legacy-json.jsonl");

const AGENT: AgentKind = AgentKind::Codex;

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

fn started(thread: &str) -> StreamEvent {
    StreamEvent::Started {
        session_id: Some(thread.to_owned()),
        model: None,
    }
}

const METADATA: &str = "Model metadata for `mock-model` not found. Defaulting to fallback metadata; this can degrade performance and cause issues.";
const BUSY: &str = "We’re currently experiencing high demand, which may cause temporary errors.";

#[test]
fn a_text_answer_succeeds_with_the_metadata_notice_as_a_warning() {
    let done = "All done: the task is complete.\n\n<promise>DONE</promise>";
    assert_eq!(
        events(TEXT),
        [
            started("01a20365-1405-75f1-90df-38b676577416"),
            StreamEvent::Warning(METADATA.into()),
            text(Some("item_1"), done),
            finished(None, false),
        ]
    );
    let summary = RunSummary::from_stream(AgentKind::Codex, TEXT);
    assert_eq!(summary.final_message.as_deref(), Some(done));
    assert!(summary.finished && !summary.is_error);
    assert_eq!(summary.errors, Vec::<String>::new());
    assert_eq!(summary.warnings, [METADATA]);
}

#[test]
fn a_shell_tool_is_one_call_with_its_script_unquoted() {
    // The model's command was `printf '%s' 'written by the mock model'\''s tool call\n' >
    // mock-tool.txt`; Codex wraps it in `/bin/bash -lc "..."` with the backslash doubled.
    let script = "printf '%s' 'written by the mock model'\\''s tool call …";
    let events = events(TOOL);
    assert_eq!(
        events[2..4],
        [
            tool("item_1", "shell", Some(script)),
            tool("item_1", "shell", Some(script)),
        ]
    );
    let mut summary = RunSummary::default();
    let told: Vec<bool> = events.iter().map(|e| summary.push(e)).collect();
    assert_eq!(told, [true, true, true, false, true, true], "{events:?}");
    assert_eq!(summary.tools_used, 1);
    assert_eq!(
        summary.final_message.as_deref(),
        Some("I wrote mock-tool.txt.\n\n<promise>DONE</promise>")
    );
}

#[test]
fn a_patch_is_a_file_change() {
    let summary = RunSummary::from_stream(AgentKind::Codex, PATCH);
    assert_eq!(
        events(PATCH)[1],
        tool(
            "item_0",
            "file_change",
            Some("/home/user/project/mock-patch.txt")
        )
    );
    assert_eq!(summary.tools_used, 1);
    assert!(
        summary.warnings.is_empty(),
        "a model Codex knows: no notice"
    );
}

#[test]
fn api_errors_fail_the_turn() {
    let bad_request = r#"{"error": {"message": "mock: simulated HTTP 400 error", "type": "invalid_request_error", "param": null, "code": "mock_error"}}"#;
    for (stream, errors) in [
        (ERROR400, vec![bad_request]),
        (ERROR500, vec![BUSY]),
        (
            ERROR500_RETRIES,
            vec![
                "Reconnecting... 1/2 (We’re currently experiencing high demand, which may cause temporary errors.)",
                "Reconnecting... 2/2 (We’re currently experiencing high demand, which may cause temporary errors.)",
                BUSY,
            ],
        ),
        (
            FAILED,
            vec!["stream disconnected before completion: mock: simulated response.failed"],
        ),
    ] {
        let summary = RunSummary::from_stream(AgentKind::Codex, stream);
        assert!(summary.finished && summary.is_error, "{stream}");
        assert_eq!(summary.errors, errors);
        assert_eq!(summary.warnings, [METADATA]);
        assert_eq!(summary.final_message, None);
        assert_eq!(events(stream).last(), Some(&finished(None, true)));
    }
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
    assert_eq!(unwrap_shell("bash -lc 'unbalanced"), "bash -lc 'unbalanced");
    assert_eq!(unwrap_shell("cargo test"), "cargo test");
    // Double-quoted with escapes, as Codex 0.169.0 prints a script with a quote of its own.
    assert_eq!(
        unwrap_shell(r#"/bin/bash -lc "echo 'it'\\''s' \"q\" \$HOME \`x\` a\b""#),
        r#"echo 'it'\''s' "q" $HOME `x` a\b"#
    );
    // Words joined from several quoted parts are one word.
    assert_eq!(unwrap_shell(r"bash -lc 'it'\''s'"), "it's");
    // More than one word, or an expansion, is shown as it came.
    for line in [
        "bash -lc 'ls' 'more'",
        r#"bash -lc "echo $HOME""#,
        "bash -lc ls;rm",
        "bash -lc ",
    ] {
        assert_eq!(unwrap_shell(line), line);
    }
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

/// Codex 0.171.0's streams of the same scenarios (recorded so when it was pinned): the
/// same events as 0.169.0's; only the mock's answers changed since (the promise on a line
/// of its own).
#[test]
fn the_streams_of_codex_0_171_0_read_as_those_of_0_169_0() {
    macro_rules! newest {
        ($name:literal) => {
            include_str!(concat!(
                "../../../../../tests/fixtures/agents/codex-0.171.0/",
                $name
            ))
        };
    }
    let same = |text: &str| text.replace("\\n<promise>", " <promise>");
    for (older, newer) in [
        (
            fixture!("e2e-ralph-ralph-001.jsonl"),
            newest!("e2e-ralph-ralph-001.jsonl"),
        ),
        (
            fixture!("e2e-ralph-ralph-002.jsonl"),
            newest!("e2e-ralph-ralph-002.jsonl"),
        ),
        (
            fixture!("e2e-ralph-ralph-002-retry1.jsonl"),
            newest!("e2e-ralph-ralph-002-retry1.jsonl"),
        ),
        (
            fixture!("e2e-ralph-ralph-003.jsonl"),
            newest!("e2e-ralph-ralph-003.jsonl"),
        ),
        (
            fixture!("e2e-pipeline-design-001.jsonl"),
            newest!("e2e-pipeline-design-001.jsonl"),
        ),
        (
            fixture!("e2e-pipeline-verify-001.jsonl"),
            newest!("e2e-pipeline-verify-001.jsonl"),
        ),
    ] {
        let summary = |stream: &str| {
            let mut summary = RunSummary::from_stream(AGENT, &same(stream));
            summary.session_id = None;
            summary
        };
        assert_eq!(summary(newer), summary(older), "{newer}");
        assert_eq!(events(&same(newer)).len(), events(older).len(), "{newer}");
        assert!(RunSummary::from_stream(AGENT, newer).session_id.is_some());
    }
}

#[test]
fn a_recorded_shell_call_is_summarised_as_the_models_command() {
    let events = events(fixture!("e2e-ralph-ralph-001.jsonl"));
    assert!(
        events.contains(&tool(
            "item_1",
            "shell",
            Some("printf '%s' 'one' > one.txt")
        )),
        "{events:?}"
    );
}

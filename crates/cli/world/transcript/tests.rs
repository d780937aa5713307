//! The transcript reader against captured transcripts of both clients, block boundaries,
//! long lines, truncated and missing files.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::backward::BLOCK;
use std::io::Write;

use super::*;

const FIXTURE: &str = "tests/fixtures/claude-code-2.1.197/sample_transcript.jsonl";

fn write(lines: &[&str]) -> tempfile::NamedTempFile {
    let mut file = tempfile::NamedTempFile::new().unwrap();
    for line in lines {
        writeln!(file, "{line}").unwrap();
    }
    file
}

fn text(id: &str, text: &str) -> String {
    format!(
        r#"{{"type":"assistant","message":{{"id":"{id}","role":"assistant","content":[{{"type":"text","text":{}}}]}}}}"#,
        serde_json::to_string(text).unwrap()
    )
}

#[test]
fn reads_the_captured_transcript() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
    assert_eq!(
        read_last_assistant_text(&path).unwrap().as_deref(),
        Some("Finished. <promise>DONE</promise>")
    );
}

/// Claude Code 2.1.330's transcript: a Write, one Stop block, then the promise, with
/// the line types that 2.1.197 did not write (`api-request-blob`, `api-request`,
/// `system`/`stop_hook_summary`, `atis-latch`, `cost-state`, ...) between and after the
/// assistant lines.
const NEWEST: &str = "tests/fixtures/claude-code-2.1.330/transcript.jsonl";

fn newest_lines() -> Vec<String> {
    let text = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join(NEWEST)).unwrap();
    text.lines().map(str::to_owned).collect()
}

fn kind(line: &str) -> String {
    let value: serde_json::Value = serde_json::from_str(line).unwrap();
    match (value["type"].as_str(), value["subtype"].as_str()) {
        (Some(kind), Some(sub)) => format!("{kind}/{sub}"),
        (Some(kind), None) => kind.to_owned(),
        _ => String::new(),
    }
}

#[test]
fn reads_the_newest_clients_transcript() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(NEWEST);
    assert_eq!(
        read_last_assistant_text(&path).unwrap().as_deref(),
        Some("Finished. <promise>DONE</promise>")
    );
    // The fixture has the new line types after the last assistant line.
    let lines = newest_lines();
    let last = lines.iter().rposition(|l| kind(l) == "assistant").unwrap();
    let after: Vec<String> = lines[last + 1..].iter().map(|l| kind(l)).collect();
    assert_eq!(
        after,
        ["system/stop_hook_summary", "last-prompt", "cost-state"]
    );
}

/// Claude Code 2.1.332's transcript (`tests/e2e`, recorded with PAGENT_E2E_RECORD): a
/// Ralph loop re-prompted twice through `additionalContext`, then the promise on a line
/// of its own; the same line types as 2.1.330's after the last assistant line.
#[test]
fn reads_the_2_1_332_transcript() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures/claude-code-2.1.332/transcript.jsonl");
    assert_eq!(
        read_last_assistant_text(&path).unwrap().as_deref(),
        Some("All fixed.\n<promise>DONE</promise>")
    );
    let text = std::fs::read_to_string(&path).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    let last = lines.iter().rposition(|l| kind(l) == "assistant").unwrap();
    let after: Vec<String> = lines[last + 1..].iter().map(|l| kind(l)).collect();
    assert_eq!(
        after,
        [
            "attachment",
            "attachment",
            "system/stop_hook_summary",
            "last-prompt",
            "cost-state"
        ]
    );
}

#[test]
fn the_newest_clients_line_types_never_give_a_promise() {
    // Cut where the Stop hook ran the first time (after "First pass done."), then add
    // every new kind of line with the promise planted where a careless reader would
    // look: a `message` of an assistant, and `content`.
    let lines = newest_lines();
    let first = lines
        .iter()
        .position(|l| l.contains("First pass done."))
        .unwrap();
    let new_kinds = [
        "api-request-blob",
        "api-request",
        "system/stop_hook_summary",
        "atis-latch",
        "cost-state",
    ];
    let mut planted = Vec::new();
    for wanted in new_kinds {
        let real = lines.iter().find(|l| kind(l) == wanted).unwrap();
        let mut value: serde_json::Value = serde_json::from_str(real).unwrap();
        value["message"] = serde_json::json!({"id": "msg_planted", "role": "assistant",
            "content": [{"type": "text", "text": "<promise>DONE</promise>"}]});
        value["content"] = "<promise>DONE</promise>".into();
        planted.push(value.to_string());
    }
    let mut cut: Vec<&str> = lines[..=first].iter().map(String::as_str).collect();
    let file = write(&cut);
    assert_eq!(
        read_last_assistant_text(file.path()).unwrap().as_deref(),
        Some("First pass done.")
    );
    cut.extend(planted.iter().map(String::as_str));
    let file = write(&cut);
    assert_eq!(
        read_last_assistant_text(file.path()).unwrap().as_deref(),
        Some("First pass done.")
    );
}

#[test]
fn joins_the_text_blocks_of_the_last_message_only() {
    let tool = r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","name":"Write","input":{}}]}}"#;
    let file = write(&[
        &text("m1", "old <promise>DONE</promise>"),
        &text("m2", "part one"),
        tool,
        &text("m2", "part two"),
        r#"{"type":"attachment"}"#,
    ]);
    assert_eq!(
        read_last_assistant_text(file.path()).unwrap().as_deref(),
        Some("part one\npart two")
    );
}

#[test]
fn a_promise_in_a_prompt_or_tool_result_is_not_the_last_message() {
    let feedback = r#"{"type":"user","isMeta":true,"message":{"role":"user","content":"Stop hook feedback:\nsay <promise>DONE</promise>"}}"#;
    let result = r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"<promise>DONE</promise>"}]}}"#;
    for user in [feedback, result] {
        let file = write(&[&text("m1", "working"), user]);
        assert_eq!(read_last_assistant_text(file.path()).unwrap(), None);
    }
}

#[test]
fn skips_a_truncated_last_line_and_sidechains() {
    let side = r#"{"type":"assistant","isSidechain":true,"message":{"id":"s","content":[{"type":"text","text":"<promise>DONE</promise>"}]}}"#;
    let mut file = write(&[&text("m1", "main answer"), side]);
    write!(
        file,
        r#"{{"type":"assistant","message":{{"id":"m9","content":[{{"type":"te"#
    )
    .unwrap();
    assert_eq!(
        read_last_assistant_text(file.path()).unwrap().as_deref(),
        Some("main answer")
    );
}

#[test]
fn finds_the_answer_across_block_boundaries_and_long_lines() {
    let long = "x".repeat(3 * BLOCK);
    let file = write(&[
        &text("m1", &long),
        &text("m2", &format!("{long} end")),
        r#"{"type":"last-prompt"}"#,
    ]);
    let found = read_last_assistant_text(file.path()).unwrap().unwrap();
    assert!(found.ends_with(" end"));
    assert_eq!(found.len(), long.len() + 4);
}

/// Regression: a long line just before the last message used to be copied and
/// searched once per block read (quadratic; 8 MB took half a second). Timed against the
/// same reads of an eighth of the size on this machine now: linear is 8 times that,
/// quadratic 64 (`assert_linear` allows 24), whatever the machine's speed or load.
#[test]
fn a_long_line_near_the_end_costs_linear_time() {
    let files = |mib: usize| {
        let long = "y".repeat(mib * 1024 * 1024);
        let result = format!(
            r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"tool_result","content":"{long}"}}]}}}}"#
        );
        let behind = write(&[
            &text("m1", "before"),
            &result,
            &text("m2", "after the long line"),
        ]);
        // Past the long user line the answer is known without reading it whole.
        let last = write(&[&text("m1", "before"), &text("m2", &long)]);
        (behind, last, long.len())
    };
    let read = |(behind, last, len): &(tempfile::NamedTempFile, tempfile::NamedTempFile, usize)| {
        assert_eq!(
            read_last_assistant_text(behind.path()).unwrap().as_deref(),
            Some("after the long line")
        );
        assert_eq!(
            read_last_assistant_text(last.path())
                .unwrap()
                .map(|t| t.len()),
            Some(*len)
        );
    };
    let (small, large) = (files(3), files(24));
    pagent_test_support::timing::assert_linear(
        "reading past a long line",
        8,
        || read(&small),
        || read(&large),
    );
}

#[test]
fn lines_are_returned_whole_and_in_reverse_order() {
    let lines: Vec<String> = (0..5000)
        .map(|i| format!("line {i} {}", "z".repeat(i % 97)))
        .collect();
    let refs: Vec<&str> = lines.iter().map(String::as_str).collect();
    let file = write(&refs);
    let mut reader =
        BackwardLines::new(std::fs::File::open(file.path()).unwrap(), SCAN_BUDGET).unwrap();
    assert_eq!(reader.next_line().unwrap().unwrap(), b"");
    for expected in lines.iter().rev() {
        assert_eq!(
            String::from_utf8(reader.next_line().unwrap().unwrap()).unwrap(),
            *expected
        );
    }
    assert_eq!(reader.next_line().unwrap(), None);
}

#[test]
fn reading_backwards_agrees_with_reading_forwards() {
    let fixture = std::fs::read(Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE)).unwrap();
    for data in [
        &b""[..],
        b"\n",
        b"\n\n\n",
        b"a",
        b"a\nb",
        b"a\n\nb\n",
        b"{\"type\":\"assistant\"}\n{",
        &fixture,
    ] {
        fuzz_check(data);
    }
}

#[test]
fn empty_and_missing_files() {
    let file = write(&[]);
    assert_eq!(read_last_assistant_text(file.path()).unwrap(), None);
    assert!(read_last_assistant_text(Path::new("/nonexistent/t.jsonl")).is_err());
}

/// The lines of a 2.1.330 session where `/pagent-status` was typed during a streamed
/// answer and sent at once (ctrl+x ctrl+s), trimmed to the fields that matter.
fn sent_during_a_turn() -> Vec<&'static str> {
    vec![
        r#"{"type":"user","message":{"role":"user","content":"start working"},"isMeta":false}"#,
        r#"{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-24T07:06:13.091Z","content":"/pagent-status"}"#,
        r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Streaming a long answ"}]}}"#,
        r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"ok"}]}}"#,
        r#"{"type":"user","message":{"role":"user","content":"Stop hook feedback:\nx"},"isMeta":true}"#,
    ]
}

#[test]
fn item_4_a_command_typed_while_the_model_worked_is_told_from_one_typed_at_rest() {
    let busy = write(&sent_during_a_turn());
    assert!(typed_while_busy(busy.path(), "/pagent-status").unwrap());
    assert!(typed_while_busy(busy.path(), " /pagent-status\n").unwrap());
    assert!(!typed_while_busy(busy.path(), "/pagent-cancel").unwrap());
    // Taken up (dequeued) and answered: the next prompt is the boundary.
    let mut later = sent_during_a_turn();
    later.push(r#"{"type":"queue-operation","operation":"dequeue"}"#);
    later.push(
        r#"{"type":"user","message":{"role":"user","content":"[Request interrupted by user]"}}"#,
    );
    assert!(!typed_while_busy(write(&later).path(), "/pagent-status").unwrap());
    // Typed at rest: the terminal UI queues nothing.
    let idle = write(&[
        r#"{"type":"user","message":{"role":"user","content":"start working"}}"#,
        r#"{"type":"assistant","message":{"id":"m1","role":"assistant","content":[{"type":"text","text":"Done."}]}}"#,
    ]);
    assert!(!typed_while_busy(idle.path(), "/pagent-status").unwrap());
}

/// Issue 30, §4 (b): a status queued while the model worked and sent by Claude Code right
/// after Esc is not a send-now, though the hook may start before Esc's line is written;
/// a send-now is told by the tool moved to the background, or by nothing written at all.
#[test]
fn item_b_a_status_sent_after_esc_is_told_from_one_sent_at_once() {
    let queued = [
        r#"{"type":"user","message":{"role":"user","content":"/ralph Refactor"}}"#,
        r#"{"type":"assistant","message":{"id":"m0","role":"assistant","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"sleep 20"}}]}}"#,
        r#"{"type":"queue-operation","operation":"enqueue","content":"/pagent-status"}"#,
        r#"{"type":"queue-operation","operation":"dequeue"}"#,
    ];
    let settle = Duration::from_millis(300);
    // Esc: the rejected tool and the interrupt, written after the command was taken up.
    let mut esc = queued.to_vec();
    esc.push(r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"The user doesn't want to proceed with this tool use.","is_error":true,"tool_use_id":"t1"}]}}"#);
    esc.push(r#"{"type":"user","message":{"role":"user","content":[{"type":"text","text":"[Request interrupted by user for tool use]"}]}}"#);
    assert!(!sent_at_once(write(&esc).path(), "/pagent-status", settle).unwrap());
    // Send-now with a tool running: the tool goes on in the background.
    let mut moved = queued.to_vec();
    moved.push(r#"{"type":"user","message":{"role":"user","content":[{"tool_use_id":"t1","type":"tool_result","content":"Command was moved to the background (ID: b1) so that a message that arrived while it was running can reach you; it was not interrupted."}]}}"#);
    let started = Instant::now();
    assert!(sent_at_once(write(&moved).path(), "/pagent-status", SETTLE).unwrap());
    assert!(started.elapsed() < SETTLE, "known at once");
    // Nothing written after it within the settle time: a send-now with a request in flight.
    assert!(sent_at_once(write(&queued).path(), "/pagent-status", settle).unwrap());
    // Esc's line written while the hook looks: an interrupt after all.
    let mut file = write(&queued);
    let path = file.path().to_owned();
    let writer = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(100));
        writeln!(
            file,
            r#"{{"type":"user","message":{{"role":"user","content":[{{"type":"text","text":"[Request interrupted by user for tool use]"}}]}}}}"#
        )
        .unwrap();
        file
    });
    assert!(!sent_at_once(&path, "/pagent-status", Duration::from_secs(10)).unwrap());
    drop(writer.join().unwrap());
}

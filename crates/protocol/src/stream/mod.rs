//! The JSON streams coding agents print while they work, reduced to what `pagent loop` needs.
//!
//! `pagent loop` runs an agent CLI (Claude Code, Codex, OpenCode) as a child process once per
//! iteration and reads its stdout line by line. Two things matter: live progress (which tool
//! the agent is using now) and the agent's final message, which decides whether the model
//! wrote `<promise>DONE</promise>`. Each agent has its own line format, so each has its own
//! module; all three reduce a line to the same few [`StreamEvent`]s, and [`RunSummary`] folds
//! a whole run.
//!
//! The parsers are pure functions of one line and never fail: a line that is not JSON, not
//! an object, of an unknown type or with fields of the wrong type yields no events (or only
//! the events its well-formed fields support). Agents print human text into the same stream
//! now and then (OpenCode's permission warnings, for one), and a stream cut off by a timeout
//! ends in half a line; neither may stop the runner. Lines are read through
//! `serde_json::Value` rather than typed structs so that one odd field never costs the rest
//! of its line, and so that every agent version's extra fields are ignored for free.
//!
//! Two details of the formats shape the events. Codex reports a tool when it starts and again
//! when it completes, and OpenCode's newer runner streams text in deltas that share one part
//! id; so [`StreamEvent::Tool`] and [`StreamEvent::Text`] carry the agent's id, and
//! [`RunSummary`] counts a tool id once (telling its caller which events are news) and joins
//! text chunks that share an id.
//!
//! The Codex and OpenCode parsers are tested on real streams of Codex 0.169.0 and OpenCode
//! 1.18.33 (`tests/fixtures/agents/<client>-<version>/`), the Claude Code parser on
//! 2.1.197's and 2.1.330's.

mod claude;
mod codex;
pub mod limit;
mod opencode;
mod summary;
mod usage;

use serde_json::Value;

pub use limit::{LimitHit, LimitKind, LimitWatch, LocalTime, Reset};
pub use summary::RunSummary;
pub use usage::{UsageRecord, parse_usage};

/// The agent CLIs whose output streams pagent understands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum AgentKind {
    /// `claude -p ... --output-format stream-json --verbose`
    Claude,
    /// `codex exec --json ...`
    Codex,
    /// `opencode run --format json ...`
    Opencode,
}

impl AgentKind {
    /// The agent's command name, as a user would type it.
    pub fn name(self) -> &'static str {
        match self {
            AgentKind::Claude => "claude",
            AgentKind::Codex => "codex",
            AgentKind::Opencode => "opencode",
        }
    }
}

/// One thing worth knowing from one line of an agent's stdout.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// The agent named its session (and, when it says so, its model). OpenCode has no start
    /// record, so this comes once per step there, always with the same session id.
    Started {
        session_id: Option<String>,
        model: Option<String>,
    },
    /// The agent began using a tool: its name, and a short human summary of its input (the
    /// file path, the command or the search pattern), at most [`SUMMARY_MAX_CHARS`] chars.
    /// `id` is the agent's id for the call; the same call may be reported twice (Codex says
    /// so when it starts and when it completes), so count by id.
    Tool {
        id: Option<String>,
        name: String,
        summary: Option<String>,
    },
    /// Assistant text: a whole message, or a chunk of one. Consecutive chunks with the same
    /// `Some(id)` belong to one message; a different or absent id starts a new message.
    Text { id: Option<String>, text: String },
    /// The agent's own end-of-run record: its final message if it gives one, whether it
    /// says the run failed, and turns and cost where it reports them.
    Finished {
        final_message: Option<String>,
        is_error: bool,
        num_turns: Option<u64>,
        cost_usd: Option<f64>,
    },
    /// An error the agent reported (an API error, a failed turn).
    Error(String),
    /// A warning the agent surfaced in a run that may well succeed (Codex's "model
    /// metadata not found", a deprecation notice, a model reroute): worth showing, never a
    /// reason to retry.
    Warning(String),
}

/// The longest tool summary, in characters (an ellipsis included).
pub const SUMMARY_MAX_CHARS: usize = 80;

/// Parses one line of `kind`'s stdout. Empty for lines that say nothing useful, malformed
/// JSON and unknown types; never panics.
pub fn parse_line(kind: AgentKind, line: &str) -> Vec<StreamEvent> {
    let Ok(value) = serde_json::from_str::<Value>(line) else {
        return Vec::new();
    };
    if !value.is_object() {
        return Vec::new();
    }
    match kind {
        AgentKind::Claude => claude::parse(&value),
        AgentKind::Codex => codex::parse(&value),
        AgentKind::Opencode => opencode::parse(&value),
    }
}

/// `value[key]` as a string slice, if it is one.
fn str_at<'a>(value: &'a Value, key: &str) -> Option<&'a str> {
    value.get(key)?.as_str()
}

/// `value[key]` as an owned string, if it is one.
fn string_at(value: &Value, key: &str) -> Option<String> {
    str_at(value, key).map(str::to_owned)
}

/// `value[key]` as an owned string, if it is a non-empty one.
fn text_at(value: &Value, key: &str) -> Option<String> {
    str_at(value, key)
        .filter(|text| !text.is_empty())
        .map(str::to_owned)
}

/// A one-line summary of `text` for progress output: its first non-blank line, trimmed, cut
/// to [`SUMMARY_MAX_CHARS`] with an ellipsis when anything was left out.
fn summarize(text: &str) -> Option<String> {
    let text = text.trim();
    let first = text.lines().next()?.trim_end();
    let too_long = first.chars().nth(SUMMARY_MAX_CHARS).is_some();
    let more_lines = first.len() < text.len();
    let summary = if too_long {
        let keep: String = first.chars().take(SUMMARY_MAX_CHARS - 1).collect();
        format!("{keep}…")
    } else if more_lines {
        let keep: String = first.chars().take(SUMMARY_MAX_CHARS - 2).collect();
        format!("{keep} …")
    } else {
        first.to_owned()
    };
    Some(summary)
}

/// The summary of a tool call's input, for the tools whose input has one obvious subject:
/// the file of a read or an edit, the command of a shell, the pattern of a search. Claude
/// Code names tools `Write`, OpenCode `write`; Claude Code's inputs say `file_path`,
/// OpenCode's `filePath`.
fn tool_input_summary(tool: &str, input: &Value) -> Option<String> {
    let keys: &[&str] = match tool.to_ascii_lowercase().as_str() {
        "write" | "edit" | "multiedit" | "read" => &["file_path", "filePath"],
        "bash" => &["command"],
        "grep" | "glob" => &["pattern"],
        _ => return None,
    };
    keys.iter()
        .find_map(|key| str_at(input, key))
        .and_then(summarize)
}

#[cfg(test)]
mod tests {
    use super::*;

    const MALFORMED: &str = include_str!("../../../../tests/fixtures/agents/malformed.jsonl");
    const KINDS: [AgentKind; 3] = [AgentKind::Claude, AgentKind::Codex, AgentKind::Opencode];

    #[test]
    fn malformed_lines_yield_nothing_for_every_agent() {
        let lines: Vec<&str> = MALFORMED.split('\n').collect();
        assert!(lines.len() >= 12, "the fixture lost lines");
        assert!(
            !MALFORMED.ends_with('\n'),
            "the fixture must end in a truncated line"
        );
        for kind in KINDS {
            for line in &lines {
                assert_eq!(parse_line(kind, line), [], "{kind:?} on {line:?}");
            }
            assert_eq!(
                RunSummary::from_stream(kind, MALFORMED),
                RunSummary::default()
            );
        }
    }

    #[test]
    fn a_megabyte_of_junk_or_nesting_yields_nothing() {
        let junk = "x".repeat(1 << 20);
        let nested = "[".repeat(1 << 20);
        let open_object = format!("{{\"type\":\"assistant\",\"text\":\"{junk}");
        for kind in KINDS {
            for line in [&junk, &nested, &open_object] {
                assert_eq!(parse_line(kind, line), [], "{kind:?}");
            }
        }
    }

    #[test]
    fn a_megabyte_command_is_summarized_in_eighty_chars() {
        let command = "a".repeat(1 << 20);
        let line = format!(
            r#"{{"type":"assistant","message":{{"content":[{{"type":"tool_use","id":"t","name":"Bash","input":{{"command":"{command}"}}}}]}}}}"#
        );
        let events = parse_line(AgentKind::Claude, &line);
        let [
            StreamEvent::Tool {
                summary: Some(summary),
                ..
            },
        ] = events.as_slice()
        else {
            panic!("expected one tool with a summary, got {events:?}");
        };
        assert_eq!(summary.chars().count(), SUMMARY_MAX_CHARS);
        assert!(summary.ends_with('…'));
    }

    #[test]
    fn summaries_keep_the_first_line_and_mark_what_they_cut() {
        assert_eq!(summarize("  cargo test  "), Some("cargo test".to_owned()));
        assert_eq!(
            summarize("\n  cat <<EOF > a.txt\nhello\nEOF\n"),
            Some("cat <<EOF > a.txt …".to_owned())
        );
        assert_eq!(summarize(" \n\t "), None);
        let long = "é".repeat(200);
        let cut = summarize(&long).unwrap();
        assert_eq!(cut.chars().count(), SUMMARY_MAX_CHARS);
        assert_eq!(cut, format!("{}…", "é".repeat(SUMMARY_MAX_CHARS - 1)));
        let exact = "b".repeat(SUMMARY_MAX_CHARS);
        assert_eq!(summarize(&exact), Some(exact.clone()));
    }

    #[test]
    fn tool_summaries_know_both_naming_styles() {
        let input: Value =
            serde_json::json!({"file_path": "/a.rs", "filePath": "/b.rs", "command": "ls"});
        assert_eq!(tool_input_summary("Write", &input), Some("/a.rs".into()));
        assert_eq!(
            tool_input_summary("edit", &serde_json::json!({"filePath": "/b.rs"})),
            Some("/b.rs".into())
        );
        assert_eq!(tool_input_summary("Bash", &input), Some("ls".into()));
        assert_eq!(tool_input_summary("WebFetch", &input), None);
        assert_eq!(tool_input_summary("Read", &serde_json::json!(null)), None);
        assert_eq!(
            tool_input_summary("Read", &serde_json::json!({"file_path": 7})),
            None
        );
    }

    #[test]
    fn agent_names() {
        let names: Vec<&str> = KINDS.iter().map(|k| k.name()).collect();
        assert_eq!(names, ["claude", "codex", "opencode"]);
    }
}

//! Codex CLI's `codex exec --json` lines.
//!
//! Source: openai/codex, `codex-rs/exec/src/exec_events.rs` (the `ThreadEvent` and
//! `ThreadItem` types, serialised with `#[serde(tag = "type")]`),
//! `codex-rs/exec/src/event_processor_with_jsonl_output.rs` (which events are printed when)
//! and the sample output in `docs/exec.md`. The sample stream in
//! `tests/fixtures/agents/codex-exec-json.jsonl` is that documented sample widened to the
//! other item types; no run of a real `codex` binary was captured.
//!
//! - `{"type":"thread.started","thread_id":..}` first; the thread id is the session id.
//!   No line names the model.
//! - `turn.started`, then `item.started` / `item.updated` / `item.completed` with an `item`
//!   object: `{"id":"item_3","type":..,...}`. Item types: `agent_message` (`text`; printed
//!   only as completed), `reasoning` (`text`), `command_execution` (`command`, a string such
//!   as `bash -lc 'cargo test'`), `file_change` (`changes: [{path, kind}]`), `mcp_tool_call`
//!   (`server`, `tool`, `arguments`), `collab_tool_call` (`tool`, `prompt`), `web_search`
//!   (`query`), `todo_list` (`items`), `plan`, and `error` (`message`, a non-fatal warning
//!   such as a deprecation notice or a model reroute). Tools are reported on start and again
//!   on completion with the same id, and a file change may arrive completed only (older
//!   versions), so both become [`StreamEvent::Tool`] and counting is by id.
//! - `{"type":"turn.completed","usage":{..}}` or `{"type":"turn.failed","error":{"message":..}}`
//!   ends the turn; `codex exec` runs one turn. Neither carries the final message: Codex's
//!   own `--output-last-message` is the text of the last completed `agent_message`.
//! - `{"type":"error","message":..}`: an error from the event stream (reconnects included).
//!
//! Older versions (up to about 0.2x) printed the core protocol's events instead, each as
//! `{"id":..,"msg":{"type":..}}`, after a config-summary object and a `{"prompt":..}` line:
//! `session_configured` (`session_id`, `model`), `agent_message` (`message`),
//! `exec_command_begin` (`call_id`, `command` as an argv list), `patch_apply_begin`
//! (`call_id`, `changes` keyed by path), `mcp_tool_call_begin` (`call_id`, `invocation:
//! {server, tool}`), `error` (`message`) and `task_complete` (`last_agent_message`). Those are
//! understood too; their shapes come from codex-core's protocol types and from other tools'
//! parsers of that output, not from a capture.

use serde_json::Value;

use super::{StreamEvent, str_at, string_at, summarize, text_at};

pub(super) fn parse(line: &Value) -> Vec<StreamEvent> {
    if let Some(msg) = line.get("msg") {
        return legacy(msg);
    }
    match str_at(line, "type") {
        Some("thread.started") => vec![StreamEvent::Started {
            session_id: string_at(line, "thread_id"),
            model: None,
        }],
        Some("item.started") => line.get("item").and_then(tool).into_iter().collect(),
        Some("item.completed") => line.get("item").map(item_completed).unwrap_or_default(),
        Some("turn.completed") => vec![finished(None, false)],
        Some("turn.failed") => {
            let message = line
                .get("error")
                .and_then(|error| str_at(error, "message"))
                .unwrap_or("turn failed");
            vec![StreamEvent::Error(message.to_owned()), finished(None, true)]
        }
        Some("error") => string_at(line, "message")
            .map(|message| vec![StreamEvent::Error(message)])
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

fn item_completed(item: &Value) -> Vec<StreamEvent> {
    let event = match str_at(item, "type") {
        Some("agent_message") => text_at(item, "text").map(|text| StreamEvent::Text {
            id: string_at(item, "id"),
            text,
        }),
        // A non-fatal notice: Codex 0.169.0 prints "Model metadata for `mock-model` not
        // found" this way in runs that succeed. A failure shows as `turn.failed`.
        Some("error") => string_at(item, "message").map(StreamEvent::Warning),
        _ => tool(item),
    };
    event.into_iter().collect()
}

/// The tool an item stands for, if it is a tool call.
fn tool(item: &Value) -> Option<StreamEvent> {
    let (name, summary) = match str_at(item, "type")? {
        "command_execution" => (
            "shell".to_owned(),
            str_at(item, "command")
                .map(unwrap_shell)
                .and_then(|command| summarize(&command)),
        ),
        "file_change" => {
            let paths: Vec<&str> = item
                .get("changes")
                .and_then(Value::as_array)
                .map(Vec::as_slice)
                .unwrap_or_default()
                .iter()
                .filter_map(|change| str_at(change, "path"))
                .collect();
            ("file_change".to_owned(), summarize(&paths.join(", ")))
        }
        "mcp_tool_call" => (mcp_name(item), None),
        "collab_tool_call" => (
            string_at(item, "tool").unwrap_or_else(|| "collab_tool_call".to_owned()),
            str_at(item, "prompt").and_then(summarize),
        ),
        "web_search" => (
            "web_search".to_owned(),
            str_at(item, "query").and_then(summarize),
        ),
        _ => return None,
    };
    Some(StreamEvent::Tool {
        id: string_at(item, "id"),
        name,
        summary,
    })
}

/// MCP tools are named as Claude Code names them, `mcp__<server>__<tool>`.
fn mcp_name(call: &Value) -> String {
    match (str_at(call, "server"), str_at(call, "tool")) {
        (Some(server), Some(tool)) => format!("mcp__{server}__{tool}"),
        _ => "mcp_tool_call".to_owned(),
    }
}

/// `bash -lc 'cargo test'` reads better as `cargo test`. Codex 0.169.0 prints the wrapper
/// as a shell would need it, the script quoted as one word: in single quotes, or in double
/// quotes with `\\`, `\"`, `\$` and `` \` `` escaped when the script has a single quote of
/// its own (`/bin/bash -lc "printf '%s' 'it'\\''s' > f"`). The script comes back unquoted
/// only when the rest of the line is exactly one shell word; anything else is shown as is.
fn unwrap_shell(command: &str) -> String {
    const SHELLS: [&str; 7] = [
        "bash",
        "/bin/bash",
        "/usr/bin/bash",
        "zsh",
        "/bin/zsh",
        "sh",
        "/bin/sh",
    ];
    let script = SHELLS.iter().find_map(|shell| {
        let rest = command.strip_prefix(shell)?;
        rest.strip_prefix(" -lc ")
            .or_else(|| rest.strip_prefix(" -c "))
    });
    script
        .and_then(one_shell_word)
        .unwrap_or_else(|| command.to_owned())
}

/// The value of `text` read as exactly one POSIX shell word (quotes removed, escapes
/// applied), or `None` when it is not one word or uses anything but quoting.
fn one_shell_word(text: &str) -> Option<String> {
    if text.is_empty() {
        return None;
    }
    let mut word = String::new();
    let mut chars = text.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' => loop {
                match chars.next()? {
                    '\'' => break,
                    c => word.push(c),
                }
            },
            '"' => loop {
                match chars.next()? {
                    '"' => break,
                    '\\' => match chars.next()? {
                        c @ ('\\' | '"' | '$' | '`') => word.push(c),
                        '\n' => {}
                        c => {
                            word.push('\\');
                            word.push(c);
                        }
                    },
                    // An expansion inside double quotes: not a plain word.
                    '$' | '`' => return None,
                    c => word.push(c),
                }
            },
            '\\' => match chars.next()? {
                '\n' => {}
                c => word.push(c),
            },
            c if c.is_whitespace() => return None,
            '$' | '`' | ';' | '&' | '|' | '<' | '>' | '(' | ')' | '*' | '?' | '[' | '#' | '~' => {
                return None;
            }
            c => word.push(c),
        }
    }
    Some(word)
}

fn finished(final_message: Option<String>, is_error: bool) -> StreamEvent {
    StreamEvent::Finished {
        final_message,
        is_error,
        num_turns: None,
        cost_usd: None,
    }
}

/// The `{"id":..,"msg":{..}}` events of older versions.
fn legacy(msg: &Value) -> Vec<StreamEvent> {
    let event = match str_at(msg, "type") {
        Some("session_configured") => Some(StreamEvent::Started {
            session_id: string_at(msg, "session_id"),
            model: string_at(msg, "model"),
        }),
        Some("agent_message") => {
            text_at(msg, "message").map(|text| StreamEvent::Text { id: None, text })
        }
        Some("exec_command_begin") => Some(StreamEvent::Tool {
            id: string_at(msg, "call_id"),
            name: "shell".to_owned(),
            summary: msg
                .get("command")
                .and_then(Value::as_array)
                .and_then(|argv| legacy_command(argv))
                .and_then(|command| summarize(&command)),
        }),
        Some("patch_apply_begin") => Some(StreamEvent::Tool {
            id: string_at(msg, "call_id"),
            name: "file_change".to_owned(),
            summary: msg
                .get("changes")
                .and_then(Value::as_object)
                .and_then(|changes| {
                    let paths: Vec<&str> = changes.keys().map(String::as_str).collect();
                    summarize(&paths.join(", "))
                }),
        }),
        Some("mcp_tool_call_begin") => Some(StreamEvent::Tool {
            id: string_at(msg, "call_id"),
            // Early versions put server and tool beside call_id, later ones in `invocation`.
            name: mcp_name(msg.get("invocation").unwrap_or(msg)),
            summary: None,
        }),
        Some("error") => string_at(msg, "message").map(StreamEvent::Error),
        Some("task_complete") => Some(finished(string_at(msg, "last_agent_message"), false)),
        _ => None,
    };
    event.into_iter().collect()
}

/// An argv list as one command line, with a `bash -lc SCRIPT` wrapper reduced to `SCRIPT`.
fn legacy_command(argv: &[Value]) -> Option<String> {
    let words: Vec<&str> = argv.iter().filter_map(Value::as_str).collect();
    match words.as_slice() {
        [shell, "-lc" | "-c", script]
            if ["bash", "zsh", "sh"].contains(&shell.rsplit('/').next().unwrap_or(shell)) =>
        {
            Some((*script).to_owned())
        }
        [] => None,
        _ => Some(words.join(" ")),
    }
}

#[cfg(test)]
mod tests;

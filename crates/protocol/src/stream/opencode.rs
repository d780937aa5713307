//! OpenCode's `opencode run --format json` lines.
//!
//! Verified on real runs of OpenCode 1.18.33 offline against a mock chat-completions API
//! (`tests/fixtures/agents/opencode-1.18.33/`); the v2 runner's text deltas were read from
//! the source (`packages/opencode/src/cli/cmd/run/noninteractive.ts`) and are not in any
//! capture (1.18.33 prints each text part whole).
//!
//! Every line is `{"type":..,"timestamp":<ms>,"sessionID":"ses_..",...}` plus one payload:
//!
//! - `step_start` / `step_finish` with `part` (a `step-start` or `step-finish` part; the
//!   latter has `reason`, `tokens` and the step's `cost`). There is no start-of-run record,
//!   so every `step_start` yields [`StreamEvent::Started`] with the line's `sessionID`, and
//!   so does every other line that yields an event (before it), since any line may be a
//!   run's first. A
//!   `step_finish` whose `reason` is not `tool-calls` (1.18.33 says `stop`) ends the
//!   model's last step: the run's success record, [`StreamEvent::Finished`]. A step's cost
//!   is the step's, not the run's, so it is not reported.
//! - `tool_use` with a `tool` part: `{callID, tool, state: {status, input, output|error}}`,
//!   printed once the call is `completed` or failed (`error`), never while it runs; so the
//!   live progress for OpenCode lags by one call. Tool names are lowercase (`read`, `bash`)
//!   and file inputs are `filePath`.
//! - `text` with a `text` part, printed once, when it ends. The v2 runner prints deltas as
//!   they stream, each with the same part `id`, and may print the rest after
//!   `step_finish`; the part id is the text's id, so both assemble the same way.
//!   `synthetic` parts (text OpenCode inserts itself) are not the model's words.
//! - `reasoning` (only with `--thinking`): ignored.
//! - `error` with `error`: `{name, data: {message, statusCode}}`. 1.18.33 prints it as the
//!   only line of a failed run (no `step_start` before it: its `sessionID` is the only
//!   place the session is named) and exits 1; the v2 runner's shape is `{type, message}`.
//!   Either is [`StreamEvent::Error`] and a failed [`StreamEvent::Finished`].
//! - `done` with `reason: "idle"` (from the source; 1.18.33 never prints it): a finished
//!   run with no message and no verdict.
//!
//! So a run succeeded when its last step finished (`step_finish`), failed when it printed
//! an `error`, and otherwise its exit code decides.

use serde_json::Value;

use super::{StreamEvent, str_at, string_at, text_at, tool_input_summary};

pub(super) fn parse(line: &Value) -> Vec<StreamEvent> {
    let part = line.get("part").filter(|part| part.is_object());
    let session_id = || {
        string_at(line, "sessionID").or_else(|| part.and_then(|part| string_at(part, "sessionID")))
    };
    let started = || StreamEvent::Started {
        session_id: session_id(),
        model: None,
    };
    let kind = str_at(line, "type");
    // Every line names the session; a run may begin with any of them (a failed one with
    // its `error`), so each line that says something tells the session first.
    let events: Vec<StreamEvent> = match (kind, part) {
        (Some("step_start"), _) => return vec![started()],
        (Some("step_finish"), _) => {
            let reason = part.and_then(|part| str_at(part, "reason"));
            if reason == Some("tool-calls") {
                Vec::new()
            } else {
                vec![finished(false)]
            }
        }
        (Some("text"), Some(part)) => text(part).into_iter().collect(),
        (Some("tool_use"), Some(part)) => tool(part).into_iter().collect(),
        (Some("error"), _) => vec![
            StreamEvent::Error(error_message(line.get("error"))),
            finished(true),
        ],
        (Some("done"), _) => vec![finished(false)],
        _ => Vec::new(),
    };
    if events.is_empty() || session_id().is_none() {
        return events;
    }
    std::iter::once(started()).chain(events).collect()
}

fn finished(is_error: bool) -> StreamEvent {
    StreamEvent::Finished {
        final_message: None,
        is_error,
        num_turns: None,
        cost_usd: None,
    }
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
mod tests;

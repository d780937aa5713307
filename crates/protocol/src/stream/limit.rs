//! Usage limits in agent output: how each agent says "your plan's limit is reached, come
//! back at ...", told apart from an outage (overloaded, 5xx) and from a plain rate limit
//! it retried itself.
//!
//! Observed offline against a mock API (`research/cc-facts.md`, B6, B7 and C8):
//!
//! - **Claude Code** (a subscription login): `{"type":"rate_limit_event","rate_limit_info":
//!   {"status":"rejected","resetsAt":<epoch s>,"rateLimitType":"five_hour"|"seven_day"|
//!   "seven_day_opus"|"seven_day_sonnet"|"overage",...}}`, then a synthetic assistant line
//!   and a `result` with `is_error:true`, `api_error_status:429` and the text: `You've
//!   hit your session limit · resets 10:22am (Europe/Paris)` (2.1.197), `You've hit your
//!   5-hour limit · resets ...` (2.1.330), weekly ones with a date (`resets Nov 27,
//!   10:22am (Europe/Paris)`), `You're out of usage credits · resets ...`; the binary
//!   also has `You've hit your monthly spend limit`, `org's monthly usage limit` and
//!   `Your org is out of usage`. A `rejected` event without a `rateLimitType` is the
//!   server's own throttle ("not your usage limit"): an outage. With an API key a 429 is
//!   `API Error: Request rejected (429)`: an outage too.
//! - **Codex**: `turn.failed` (and `error`) `You’ve hit your usage limit. ... try again at
//!   10:38 AM.` (a typographic apostrophe; local time, no zone; `Nov 27th, 2026 8:21 AM`
//!   further off; `Try again later.` without a time); `Quota exceeded. Check your plan and
//!   billing details.` and `To use Codex with your ChatGPT plan, upgrade to Plus` are
//!   credit limits. `exceeded retry limit, last status: 429` is an outage it retried.
//! - **OpenCode**: it retries every 429 itself (honouring `retry-after`), then prints one
//!   `error` line whose `error.data.statusCode` is 429 and exits 1; `insufficient_quota`
//!   in the response body is a credit limit. A reset comes only from the response's
//!   `retry-after` header or a `resets_at` / `resets_in_seconds` in its body.
//!
//! A window limit (a session, five-hour, weekly or model window) resets by itself; a
//! credit or spend limit may not reset for weeks. Which to wait for is the engine's
//! policy; this module only reads what the agent said, and the reset time as it said it:
//! an instant, a delay from the line's time, or a local clock time whose zone (named or
//! the machine's) the binary resolves.

use serde_json::Value;

use super::{AgentKind, str_at};

mod time;

pub use time::parse_claude_time;
use time::parse_codex_time;

/// Whether a limit resets by itself soon or is a spend or credit limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// A usage window of the plan (session, five-hour, weekly, a model's): it resets.
    Window,
    /// Out of credits, a spend or quota limit: it resets, if ever, when the account says.
    Credit,
}

/// A clock time as an agent wrote it, in local time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocalTime {
    pub year: Option<i32>,
    /// With the day, when the text names a date (1-12).
    pub month: Option<u8>,
    pub day: Option<u8>,
    /// 0-23.
    pub hour: u8,
    pub minute: u8,
    /// The IANA zone the agent named (`Europe/Paris`); `None`: the machine's own.
    pub zone: Option<String>,
}

/// When the limit resets, as far as the agent said.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reset {
    /// An instant, seconds since the epoch.
    At(u64),
    /// A delay from an instant (both seconds).
    After { from: u64, secs: u64 },
    /// A local clock time.
    Local(LocalTime),
    /// No time given.
    Unknown,
}

/// A usage limit an agent run ended on.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitHit {
    pub kind: LimitKind,
    /// The agent's own words (or, when it printed none, what its record says).
    pub message: String,
    pub reset: Reset,
}

/// Folds a run's stdout, line by line, into the usage limit it ended on, if any.
#[derive(Debug, Clone, Default)]
pub struct LimitWatch {
    /// Claude Code's last rejected `rate_limit_event` that names a limit: (type, reset).
    claude_event: Option<(String, Option<u64>)>,
    /// The last text that reads as a limit.
    from_text: Option<LimitHit>,
}

impl LimitWatch {
    /// Reads one line of `kind`'s stdout; never panics.
    pub fn push(&mut self, kind: AgentKind, line: &str) {
        if !may_hold_limit(kind, line) {
            return;
        }
        let Ok(value) = serde_json::from_str::<Value>(line) else {
            return;
        };
        match kind {
            AgentKind::Claude => self.claude(&value),
            AgentKind::Codex => {
                if str_at(&value, "type") == Some("turn.failed")
                    && let Some(hit) = value
                        .get("error")
                        .and_then(|e| str_at(e, "message"))
                        .and_then(codex_text)
                {
                    self.from_text = Some(hit);
                }
            }
            AgentKind::Opencode => {
                if let Some(hit) = opencode(&value) {
                    self.from_text = Some(hit);
                }
            }
        }
    }

    fn claude(&mut self, line: &Value) {
        match str_at(line, "type") {
            Some("rate_limit_event") => {
                let Some(info) = line.get("rate_limit_info") else {
                    return;
                };
                if str_at(info, "status") != Some("rejected") {
                    return;
                }
                // Without a type it is the server's throttle, not the user's limit.
                let Some(kind) = str_at(info, "rateLimitType") else {
                    return;
                };
                let reset = info
                    .get("resetsAt")
                    .and_then(Value::as_u64)
                    .or_else(|| info.get("overageResetsAt").and_then(Value::as_u64));
                self.claude_event = Some((kind.to_owned(), reset));
            }
            // Only a failed run's text: a model's own final message that reads like a limit
            // (a prompt-injected "You've hit your weekly limit") is not one.
            Some("result") if line.get("is_error").and_then(Value::as_bool) == Some(true) => {
                if let Some(hit) = str_at(line, "result").and_then(claude_text) {
                    self.from_text = Some(hit);
                }
            }
            Some("assistant") if str_at(line, "error") == Some("rate_limit") => {
                let text = line
                    .get("message")
                    .and_then(|m| m.get("content"))
                    .and_then(Value::as_array)
                    .and_then(|blocks| blocks.iter().find_map(|b| str_at(b, "text")));
                if let Some(hit) = text.and_then(claude_text) {
                    self.from_text = Some(hit);
                }
            }
            _ => {}
        }
    }

    /// The limit the run ended on, if it printed one.
    pub fn hit(&self) -> Option<LimitHit> {
        match (&self.claude_event, &self.from_text) {
            (Some((kind, reset)), text) => {
                let credit =
                    kind == "overage" || text.as_ref().is_some_and(|t| t.kind == LimitKind::Credit);
                Some(LimitHit {
                    kind: if credit {
                        LimitKind::Credit
                    } else {
                        LimitKind::Window
                    },
                    message: text.as_ref().map_or_else(
                        || {
                            format!(
                                "Claude Code's {} usage limit was reached",
                                kind.replace('_', "-")
                            )
                        },
                        |t| t.message.clone(),
                    ),
                    reset: match (reset, text) {
                        (Some(at), _) => Reset::At(*at),
                        (None, Some(text)) => text.reset.clone(),
                        (None, None) => Reset::Unknown,
                    },
                })
            }
            (None, text) => text.clone(),
        }
    }
}

/// Claude Code's limit texts (the `result`, the synthetic assistant message, a
/// StopFailure hook's `last_assistant_message`).
pub fn claude_text(text: &str) -> Option<LimitHit> {
    let text = text.trim();
    let normal = text.replace('’', "'");
    let window = normal.starts_with("You've hit your ");
    let credit = normal.starts_with("You're out of usage credits")
        || normal.starts_with("You're out of extra usage")
        || normal.starts_with("Your org is out of usage");
    if !window && !credit {
        return None;
    }
    let lower = normal.to_ascii_lowercase();
    let spend = [
        "spend limit",
        "monthly usage limit",
        "monthly limit",
        "group budget",
    ]
    .iter()
    .any(|w| lower.contains(w));
    let reset = normal
        .split_once(" resets ")
        .or_else(|| normal.split_once(" It resets "))
        .and_then(|(_, rest)| parse_claude_time(rest.split(" · ").next().unwrap_or(rest)))
        .map_or(Reset::Unknown, Reset::Local);
    Some(LimitHit {
        kind: if credit || spend {
            LimitKind::Credit
        } else {
            LimitKind::Window
        },
        message: text.to_owned(),
        reset,
    })
}

/// Codex's texts: a usage limit, or a plan or quota that does not cover the work.
fn codex_text(text: &str) -> Option<LimitHit> {
    let normal = text.replace('’', "'");
    let hit = |kind, reset| {
        Some(LimitHit {
            kind,
            message: text.trim().to_owned(),
            reset,
        })
    };
    if normal.contains("hit your usage limit") {
        let reset = normal
            .rsplit_once("try again at ")
            .and_then(|(_, rest)| parse_codex_time(rest.trim_end_matches('.')))
            .map_or(Reset::Unknown, Reset::Local);
        return hit(LimitKind::Window, reset);
    }
    if normal.starts_with("Quota exceeded") || normal.contains("with your ChatGPT plan, upgrade") {
        return hit(LimitKind::Credit, Reset::Unknown);
    }
    None
}

/// OpenCode's `error` line of a 429 it gave up retrying.
fn opencode(line: &Value) -> Option<LimitHit> {
    if str_at(line, "type") != Some("error") {
        return None;
    }
    let data = line.get("error")?.get("data")?;
    if data.get("statusCode").and_then(Value::as_u64) != Some(429) {
        return None;
    }
    let message = str_at(data, "message").unwrap_or("usage limit (HTTP 429)");
    let body = str_at(data, "responseBody").unwrap_or("");
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let error = parsed.as_ref().and_then(|b| b.get("error"));
    let kind = if body.contains("insufficient_quota") {
        LimitKind::Credit
    } else {
        LimitKind::Window
    };
    // The line's time (ms), else the response's: what a delay counts from.
    let from = line
        .get("timestamp")
        .and_then(Value::as_u64)
        .map(|ms| ms / 1000);
    let retry_after = data
        .get("responseHeaders")
        .and_then(|h| str_at(h, "retry-after"))
        .and_then(|s| s.trim().parse::<u64>().ok());
    let reset = match (
        error
            .and_then(|e| e.get("resets_at"))
            .and_then(Value::as_u64),
        error
            .and_then(|e| e.get("resets_in_seconds"))
            .and_then(Value::as_u64)
            .or(retry_after),
        from,
    ) {
        (Some(at), _, _) => Reset::At(at),
        (None, Some(secs), Some(from)) => Reset::After { from, secs },
        _ => Reset::Unknown,
    };
    Some(LimitHit {
        kind,
        message: format!("OpenCode: {message} (HTTP 429)"),
        reset,
    })
}

/// Whether a line an agent printed may hold a limit at all (cheap: most lines are
/// skipped without parsing).
fn may_hold_limit(kind: AgentKind, line: &str) -> bool {
    match kind {
        AgentKind::Claude => {
            line.contains("limit") || line.contains("credits") || line.contains("out of usage")
        }
        AgentKind::Codex => line.contains("turn.failed"),
        AgentKind::Opencode => line.contains("\"error\""),
    }
}

#[cfg(test)]
mod tests;

//! Usage limits in agent output: how each agent says "your plan's limit is reached, come
//! back at ..." (or "out of credits", "your seat does not include this"), told apart from
//! an outage (overloaded, 5xx, a rate limit it retried itself), whose words are kept too.
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
//! Claude Code's texts are the twelve [`CLAUDE_LIMIT_TEXTS`]: the beginnings of a
//! usage-limit error that its Agent SDK exports (`USAGE_LIMIT_ERROR_PREFIXES` in
//! `sdk.d.ts` of `@anthropic-ai/claude-agent-sdk` 0.3.332, for Claude Code 2.1.332,
//! checked 2026-11-27; `docs/unattended.md`). Those a mock can make Claude Code 2.1.197
//! and 2.1.332 print arrive as a `rate_limit` error (the synthetic assistant line, the
//! failed `result`, StopFailure's `error`), whatever their kind; they are read from the
//! text, whatever the error.
//!
//! A window limit (a session, five-hour, weekly or model window) resets by itself; a
//! credit or spend limit ends only when the account is topped up (or when the plan's
//! window behind it resets, and then the agent names the time); a seat or admin limit
//! only when an admin changes it. Which to wait for is the engine's policy; this module
//! only reads what the agent said, and the reset time as it said it: an instant, a delay
//! from the line's time, or a local clock time whose zone (named or the machine's) the
//! binary resolves.

use serde_json::Value;

use super::{AgentKind, str_at};

mod time;

pub use time::parse_claude_time;
use time::parse_codex_time;

/// Whether a limit resets by itself, or what has to happen first.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// A usage window of the plan (session, five-hour, weekly, a model's): it resets.
    Window,
    /// Out of credits or extra usage, a spend or quota limit: it ends when the account is
    /// topped up, or when the plan's window behind it resets (the agent names the time).
    Credit,
    /// A seat, allocation or group setting: only the account's admin lifts it.
    Admin,
}

/// How Claude Code's usage-limit errors begin (the twelve texts its Agent SDK exports for
/// 2.1.332), and what each one is. Only the first two are windows that reset by
/// themselves (a `You've hit your` that names a spend or monthly limit is read as a
/// credit limit, [`claude_text`]).
pub const CLAUDE_LIMIT_TEXTS: [(&str, LimitKind); 12] = [
    ("You've hit your", LimitKind::Window),
    ("You've reached your", LimitKind::Window),
    ("You're out of usage credits", LimitKind::Credit),
    (
        "Your org is out of usage · add funds to continue",
        LimitKind::Credit,
    ),
    (
        "Your org is out of usage · contact your admin",
        LimitKind::Admin,
    ),
    (
        "Your seat type doesn't include usage credits",
        LimitKind::Admin,
    ),
    ("Your seat type doesn't include usage", LimitKind::Admin),
    (
        "Your usage allocation has been disabled by your admin",
        LimitKind::Admin,
    ),
    ("Your group's usage limit is set to $0", LimitKind::Admin),
    ("Fable 5 requires usage credits", LimitKind::Credit),
    ("You're out of extra usage", LimitKind::Credit),
    (
        "Your seat type doesn't include extra usage",
        LimitKind::Admin,
    ),
];

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

/// Folds a run's stdout, line by line, into the usage limit it ended on, if any, or the
/// outage it reported (the service's error, not the user's limit).
#[derive(Debug, Clone, Default)]
pub struct LimitWatch {
    /// Claude Code's last rejected `rate_limit_event` that names a limit: (type, reset).
    claude_event: Option<(String, Option<u64>)>,
    /// The last text that reads as a limit.
    from_text: Option<LimitHit>,
    /// The agent's words of the last service error it gave up on (5xx, overloaded, a
    /// throttle it retried itself).
    outage: Option<String>,
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
                let message = value.get("error").and_then(|e| str_at(e, "message"));
                if str_at(&value, "type") != Some("turn.failed") {
                    return;
                }
                if let Some(hit) = message.and_then(codex_text) {
                    self.from_text = Some(hit);
                } else if let Some(text) = message.filter(|m| codex_outage(m)) {
                    self.outage = Some(text.trim().to_owned());
                }
            }
            AgentKind::Opencode => match opencode(&value) {
                Some(Trouble::Limit(hit)) => self.from_text = Some(hit),
                Some(Trouble::Outage(text)) => self.outage = Some(text),
                None => {}
            },
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
                let text = str_at(line, "result");
                if let Some(hit) = text.and_then(claude_text) {
                    self.from_text = Some(hit);
                } else if let Some(text) = text.filter(|_| claude_outage_status(line)) {
                    self.outage = Some(text.trim().to_owned());
                }
            }
            // The synthetic message of an API error (the model wrote none of it).
            Some("assistant") => {
                let Some(error) = str_at(line, "error") else {
                    return;
                };
                let text = line
                    .get("message")
                    .and_then(|m| m.get("content"))
                    .and_then(Value::as_array)
                    .and_then(|blocks| blocks.iter().find_map(|b| str_at(b, "text")))
                    .unwrap_or("");
                match (claude_text(text), error) {
                    (Some(hit), _) => self.from_text = Some(hit),
                    // An API account out of credit: waiting will not end it either.
                    (None, "billing_error") => {
                        self.from_text = Some(LimitHit {
                            kind: LimitKind::Credit,
                            message: text.trim().to_owned(),
                            reset: Reset::Unknown,
                        });
                    }
                    (None, "server_error" | "overloaded" | "rate_limit") => {
                        self.outage = Some(text.trim().to_owned());
                    }
                    _ => {}
                }
            }
            _ => {}
        }
    }

    /// The limit the run ended on, if it printed one. The words decide what it is: a
    /// seat text with a weekly window's event is still a seat limit.
    pub fn hit(&self) -> Option<LimitHit> {
        match (&self.claude_event, &self.from_text) {
            (Some((claim, reset)), text) => {
                let kind = match text.as_ref().map(|t| t.kind) {
                    Some(LimitKind::Admin) => LimitKind::Admin,
                    Some(LimitKind::Credit) => LimitKind::Credit,
                    _ if claim == "overage" => LimitKind::Credit,
                    _ => LimitKind::Window,
                };
                Some(LimitHit {
                    kind,
                    message: text.as_ref().map_or_else(
                        || {
                            format!(
                                "Claude Code's {} usage limit was reached",
                                claim.replace('_', "-")
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

    /// The outage the run ended on (the agent's words), unless it ended on a limit.
    pub fn outage(&self) -> Option<String> {
        if self.claude_event.is_some() || self.from_text.is_some() {
            return None;
        }
        self.outage.clone()
    }
}

/// A failed Claude Code run's status that is the service's, not the user's: a 429 that
/// names no limit (the server's own throttle, or an API key's rate limit), a 5xx, 529.
fn claude_outage_status(line: &Value) -> bool {
    line.get("api_error_status")
        .and_then(Value::as_u64)
        .is_some_and(|status| status == 429 || (500..600).contains(&status))
}

/// Codex's words for a service that failed it (after its own retries): its own texts
/// for a 5xx and for a model at capacity (read from Codex 0.171.0's executable; a 500
/// of the mock reads "We’re currently experiencing high demand, which may cause
/// temporary errors."), and the HTTP status it names otherwise.
fn codex_outage(message: &str) -> bool {
    let lower = message.to_ascii_lowercase();
    [
        "experiencing high demand",
        "is at capacity",
        "capacity is unavailable",
        "unexpected status 5",
        "last status: 429",
        "last status: 5",
        "stream disconnected",
        "overloaded",
        "service unavailable",
        "internal server error",
        "bad gateway",
        "gateway timeout",
    ]
    .iter()
    .any(|w| lower.contains(w))
}

/// Claude Code's limit texts (the `result`, the synthetic assistant message, a
/// StopFailure hook's `last_assistant_message`): one of [`CLAUDE_LIMIT_TEXTS`].
pub fn claude_text(text: &str) -> Option<LimitHit> {
    let text = text.trim();
    let normal = text.replace('’', "'");
    let (_, kind) = CLAUDE_LIMIT_TEXTS
        .iter()
        .find(|(prefix, _)| normal.starts_with(prefix))?;
    let lower = normal.to_ascii_lowercase();
    let spend = ["spend limit", "monthly", "group budget", "pooled"]
        .iter()
        .any(|w| lower.contains(w));
    let kind = match kind {
        LimitKind::Window if spend => LimitKind::Credit,
        kind => *kind,
    };
    let reset = normal
        .split_once(" resets ")
        .or_else(|| normal.split_once(" It resets "))
        .and_then(|(_, rest)| parse_claude_time(rest.split(" · ").next().unwrap_or(rest)))
        .map_or(Reset::Unknown, Reset::Local);
    Some(LimitHit {
        kind,
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

/// What an OpenCode `error` line reports.
enum Trouble {
    Limit(LimitHit),
    Outage(String),
}

/// OpenCode's `error` line: a 429 it gave up retrying, or a server error.
fn opencode(line: &Value) -> Option<Trouble> {
    if str_at(line, "type") != Some("error") {
        return None;
    }
    let data = line.get("error")?.get("data")?;
    let status = data.get("statusCode").and_then(Value::as_u64)?;
    if (500..600).contains(&status) {
        let message = str_at(data, "message").unwrap_or("server error");
        return Some(Trouble::Outage(format!(
            "OpenCode: {} (HTTP {status})",
            message.trim()
        )));
    }
    if status != 429 {
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
    Some(Trouble::Limit(LimitHit {
        kind,
        message: format!("OpenCode: {message} (HTTP 429)"),
        reset,
    }))
}

/// Whether a line an agent printed may hold a limit at all (cheap: most lines are
/// skipped without parsing).
fn may_hold_limit(kind: AgentKind, line: &str) -> bool {
    match kind {
        // The event, a synthetic error message, a failed result.
        AgentKind::Claude => {
            line.contains("rate_limit_event")
                || line.contains("\"error\"")
                || line.contains("\"is_error\"")
        }
        AgentKind::Codex => line.contains("turn.failed"),
        AgentKind::Opencode => line.contains("\"error\""),
    }
}

#[cfg(test)]
mod tests;

//! Usage limits are waited out, not fatal: the policy, pure, for both drivers.
//!
//! An agent whose plan's usage window is spent (Claude Code's session, five-hour or
//! weekly limit, Codex's usage limit, an OpenCode 429 it gave up retrying) cannot work
//! until the window resets; a loop left running overnight must not lose the night to it.
//! So a limit is neither an iteration nor an error:
//!
//! - `pagent loop` waits until the reset plus [`MARGIN_SECS`] (or `loop.limit_wait` when the
//!   agent named no time), then runs the same iteration again, with the same prompt, not
//!   counted; the no-progress count is untouched.
//! - In a session, Claude Code's StopFailure hook marks the loop waiting
//!   ([`decide_stop_failure`]); Claude Code 2.1.234 and later resume the session after
//!   the reset by themselves, older ones wait for the user (which client it is, the hook
//!   learns from its environment: [`continues_by_itself`]), and the next Stop goes on as
//!   if the limit had not been (it ends the wait, [`end_wait`]).
//!
//! A credit or spend limit (out of usage credits, a monthly spend cap, a quota) ends only
//! when the account is topped up, or when the plan's window behind it resets, and then the
//! agent names that time: unless its reset is known and within [`CREDIT_HORIZON_SECS`],
//! the loop ends at once as `gave up`, with the agent's words and "waiting will not end
//! this" ([`stop_reason`]). A seat or admin limit always ends it. Any other API error (an
//! outage, an overloaded server) never ends, cancels or re-prompts a loop: the runner
//! retries it with backoff (`failure.rs`), and in a session nothing is written at all.
//!
//! Time spent waiting is not work: `--max-duration` counts the time worked
//! ([`crate::budget::worked_secs`]), and `pagent status` shows the time waited apart.

use serde::{Deserialize, Serialize};

use crate::decide::{Belongs, Decision, LogEntry, Outcome, belongs};
use crate::{Action, State, Status, Timestamp, format_duration};

/// How long after the announced reset the loop goes on: a limit is lifted on the
/// provider's clock, not ours (Claude Code itself resumes 60-70 s after it).
pub const MARGIN_SECS: u64 = 60;
/// The wait when the agent named no reset time (`loop.limit_wait`'s default).
pub const DEFAULT_WAIT_SECS: u64 = 30 * 60;
/// A credit or spend limit is waited for only when it resets within this.
pub const CREDIT_HORIZON_SECS: u64 = 12 * 3600;
/// No single wait is longer (a weekly window is the longest pagent knows).
pub const MAX_WAIT_SECS: u64 = 8 * 24 * 3600;
/// The agent's words kept in the state, in characters.
const WHY_CAP: usize = 300;

/// A loop waiting for a usage limit to reset.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitWait {
    pub since: Timestamp,
    /// When the loop goes on: the reset plus a minute, or `loop.limit_wait` from `since`.
    /// `None` in a session whose agent named no reset time (the session resumes it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<Timestamp>,
    /// Whether `until` comes from a reset time the agent gave.
    #[serde(default)]
    pub reset_known: bool,
    /// The agent's own words.
    pub why: String,
    /// In a session: the Claude Code version whose limit it is (`2.1.197`), which says
    /// whether the session goes on by itself after the reset. `None` for `pagent loop`,
    /// or when the hook could not tell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client: Option<String>,
}

/// What kind of limit an agent hit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LimitKind {
    /// A usage window that resets by itself.
    Window,
    /// Out of credits, a spend cap, a quota: topped up by the account, or the plan's
    /// window behind it resets (when the agent names that time).
    Credit,
    /// A seat, allocation or group setting that only the account's admin lifts.
    Admin,
}

/// A usage limit as the binary read it from the agent, its reset resolved to an instant.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LimitSeen {
    pub kind: LimitKind,
    pub message: String,
    pub resets_at: Option<Timestamp>,
}

/// What to do about a limit.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LimitPlan {
    /// Wait until then, and run the same iteration again.
    Wait { until: Timestamp, reset_known: bool },
    /// A limit no night's wait ends: the loop ends as gave up, for this reason.
    GiveUp(String),
}

/// How long `pagent loop` waits: past an announced reset, and when none is announced.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitOptions {
    /// After the reset the agent named ([`MARGIN_SECS`] by default).
    pub margin_secs: u64,
    /// When it named none ([`DEFAULT_WAIT_SECS`] by default).
    pub fallback_secs: u64,
}

impl Default for WaitOptions {
    fn default() -> Self {
        WaitOptions {
            margin_secs: MARGIN_SECS,
            fallback_secs: DEFAULT_WAIT_SECS,
        }
    }
}

/// The policy: how long to wait for `seen` at `now`; or why not to wait at all.
pub fn plan(seen: &LimitSeen, now: Timestamp, options: WaitOptions) -> LimitPlan {
    let WaitOptions {
        margin_secs,
        fallback_secs,
    } = options;
    let ahead = seen
        .resets_at
        .filter(|at| at.0 > now.0)
        .map(|at| at.0 - now.0);
    if let Some(reason) = stop_reason(seen, ahead) {
        return LimitPlan::GiveUp(reason);
    }
    match ahead {
        // A reset already passed (a stale notice, a clock apart) proved wrong: wait as if
        // none was given.
        Some(secs) => LimitPlan::Wait {
            until: Timestamp(now.0 + (secs + margin_secs).min(MAX_WAIT_SECS)),
            reset_known: true,
        },
        None => LimitPlan::Wait {
            until: Timestamp(now.0 + fallback_secs.clamp(1, MAX_WAIT_SECS)),
            reset_known: false,
        },
    }
}

/// Why no wait ends `seen`, a limit whose reset is `ahead` seconds away (if known): a
/// seat or admin limit, or a credit or spend limit that does not reset within
/// [`CREDIT_HORIZON_SECS`]. `None`: a limit that a wait ends.
pub fn stop_reason(seen: &LimitSeen, ahead: Option<u64>) -> Option<String> {
    let (label, remedy) = match seen.kind {
        LimitKind::Window => return None,
        LimitKind::Credit if ahead.is_some_and(|secs| secs <= CREDIT_HORIZON_SECS) => {
            return None;
        }
        LimitKind::Credit => (
            "credit or spend stop",
            "add credits or raise the limit on the agent's account, then start the loop again",
        ),
        LimitKind::Admin => (
            "seat or admin stop",
            "only the account's admin can lift it, then start the loop again",
        ),
    };
    let when = match ahead {
        Some(secs) if seen.kind == LimitKind::Credit => {
            format!(" tonight (it resets in {})", format_duration(secs))
        }
        _ => String::new(),
    };
    Some(format!(
        "{label}: {}: waiting will not end this{when}; {remedy}",
        cap(&seen.message).trim_end_matches('.')
    ))
}

/// Whether the Claude Code named by `client` (`2.1.197`) goes on by itself after a usage
/// limit resets: 2.1.234 and later do, unless the user turned that off in its settings.
/// `None` when `client` is not a version.
pub fn continues_by_itself(client: &str) -> Option<bool> {
    let mut parts = client.trim().split('.').map(str::parse::<u32>);
    let (Some(Ok(major)), Some(Ok(minor)), Some(Ok(patch))) =
        (parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    Some((major, minor, patch) >= (2, 1, 234))
}

/// What a session's user must do for a loop waiting on a usage limit, for its client.
pub fn session_goes_on(client: Option<&str>) -> String {
    match client.map(|c| (c, continues_by_itself(c))) {
        Some((version, Some(true))) => format!(
            "Claude Code {version} goes on by itself after the reset (if its settings let it \
             continue at a usage limit; otherwise type /pagent:resume once it has reset)"
        ),
        Some((version, Some(false))) => format!(
            "Claude Code {version} does not go on by itself: once the limit has reset, type \
             /pagent:resume in the session (nothing runs until then)"
        ),
        _ => "Claude Code 2.1.234 and later go on by themselves after the reset; with an \
              older one, type /pagent:resume once it has reset"
            .to_owned(),
    }
}

fn cap(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(WHY_CAP) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

/// The state and log line of a loop that starts waiting at `now` until `until`: the
/// time worked so far is counted, the iteration and the no-progress count are untouched.
pub fn begin_wait(
    state: &State,
    seen: &LimitSeen,
    until: Option<Timestamp>,
    reset_known: bool,
    now: Timestamp,
) -> Outcome {
    let mut next = state.clone();
    crate::budget::tick(&mut next, now);
    next.limit_wait = Some(LimitWait {
        since: now,
        until,
        reset_known,
        why: cap(&seen.message),
        client: None,
    });
    next.last_failure = None;
    let detail = match until {
        Some(until) => format!(
            "usage limit: waiting {} ({}), then the same iteration again: {}",
            format_duration(until.since(now)),
            if reset_known {
                "until just past the reset"
            } else {
                "no reset time given"
            },
            cap(&seen.message)
        ),
        None => format!(
            "usage limit: waiting for the session to go on after the reset: {}",
            cap(&seen.message)
        ),
    };
    Outcome {
        decision: Decision::Allow,
        write: Some(next.clone()),
        log: Some(LogEntry {
            action: Action::LimitWait,
            stage: next.current().name.clone(),
            iteration: next.iterations[next.stage],
            detail,
        }),
    }
}

/// `state` with its wait (if any) ended at `now`: the time waited is added to the time
/// waited, never to the time worked.
pub fn end_wait(state: &State, now: Timestamp) -> State {
    let mut next = state.clone();
    if let Some(wait) = next.limit_wait.take() {
        next.usage.waited_secs = next.usage.waited_secs.saturating_add(now.since(wait.since));
        next.updated_at = now;
    }
    next
}

/// The log line of a wait that ended and the iteration that runs again.
pub fn resumed_entry(state: &State, now: Timestamp) -> LogEntry {
    let waited = state
        .limit_wait
        .as_ref()
        .map_or(0, |wait| now.since(wait.since));
    LogEntry {
        action: Action::LimitResumed,
        stage: state.current().name.clone(),
        iteration: state.iterations[state.stage],
        detail: format!(
            "usage limit waited out ({}): the same iteration runs again",
            format_duration(waited)
        ),
    }
}

/// The outcome of a limit that will not reset soon: the loop ends as gave up.
pub fn give_up(state: &State, reason: String, now: Timestamp) -> Outcome {
    let mut next = end_wait(state, now);
    crate::budget::tick(&mut next, now);
    let name = next.current().name.clone();
    let iteration = next.iterations[next.stage];
    let message = format!("pagent: gave up: {reason}. /pagent:status shows where it stopped.");
    next.finish(Status::GaveUp, reason.clone(), now);
    Outcome {
        decision: Decision::Notify(message),
        write: Some(next),
        log: Some(LogEntry {
            action: Action::GaveUp,
            stage: name,
            iteration,
            detail: reason,
        }),
    }
}

/// What the binary knows about a StopFailure of a Claude Code session.
#[derive(Debug, Clone)]
pub struct StopFailureEvent<'a> {
    pub session_id: Option<&'a str>,
    pub seal_valid: bool,
    /// Claude Code's error kind: `rate_limit`, `server_error`, ...
    pub error: &'a str,
    /// The limit read from `last_assistant_message`, its reset resolved.
    pub limit: Option<LimitSeen>,
    /// True when `last_assistant_message` said something other than a usage limit (the
    /// server's own throttle, an API key's rate limit): an outage, not a wait.
    pub outage: bool,
    /// The Claude Code version the hook runs under (`2.1.197`), if it could tell.
    pub client: Option<&'a str>,
    pub now: Timestamp,
}

/// Decides a StopFailure (a turn that ended on an API error, with no Stop). Only a usage
/// limit of this session's own active loop is written: a limit that resets makes the
/// loop wait, with no iteration counted and the no-progress count untouched, and the user
/// hears it once, with what to do on their client; a limit no wait ends (out of credits,
/// a seat or admin setting) ends the loop at once, saying why. Every other API error
/// leaves the loop as it is: the Stop hook was not called, so the loop goes on at the
/// session's next stop.
pub fn decide_stop_failure(event: &StopFailureEvent<'_>, state: &State) -> Outcome {
    let ours = state.is_active()
        && event.seal_valid
        && state.paused.is_none()
        && matches!(
            belongs(state, event.session_id),
            Belongs::Owner | Belongs::Unclaimed
        );
    if !ours || event.error != "rate_limit" || event.outage || state.limit_wait.is_some() {
        return Outcome::silent();
    }
    let seen = event.limit.clone().unwrap_or(LimitSeen {
        kind: LimitKind::Window,
        message: "Claude Code hit a usage limit".to_owned(),
        resets_at: None,
    });
    let ahead = seen
        .resets_at
        .filter(|at| at.0 > event.now.0)
        .map(|at| at.0 - event.now.0);
    let mut claimed = state.clone();
    if claimed.session_id.is_none() {
        claimed.session_id = event.session_id.map(str::to_owned);
    }
    if let Some(reason) = stop_reason(&seen, ahead) {
        let mut outcome = give_up(&claimed, reason, event.now);
        // Claude Code shows no StopFailure hook's message: the session hears it at its
        // next prompt (`notice.rs`).
        if let (Decision::Notify(message), Some(written)) = (&outcome.decision, &mut outcome.write)
        {
            written.session_notice = Some(message.clone());
        }
        return outcome;
    }
    let until = ahead.map(|secs| Timestamp(event.now.0 + secs + MARGIN_SECS));
    let mut outcome = begin_wait(&claimed, &seen, until, until.is_some(), event.now);
    if let Some(written) = &mut outcome.write
        && let Some(wait) = &mut written.limit_wait
    {
        wait.client = event.client.map(str::to_owned);
    }
    let reset = match until {
        Some(until) => format!("in about {}", format_duration(until.since(event.now))),
        None => "when it does (Claude Code named no time)".to_owned(),
    };
    outcome.decision = Decision::Notify(format!(
        "pagent: {}. The loop waits for the reset, {reset}; {}. The turn the limit cut \
         short counts no iteration.",
        seen.message.trim().trim_end_matches('.'),
        session_goes_on(event.client)
    ));
    outcome
}

#[cfg(test)]
mod tests;

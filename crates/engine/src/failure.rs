//! Why one of `pagent loop`'s agent runs failed, and what the runner does about it: pure.
//!
//! Every failed run is one of four classes, said in the same words wherever it shows (the
//! runner's lines and `--json` events, `pagent status`, the dashboard, the event log, the
//! notification):
//!
//! - a **service outage** (a 5xx, overloaded, the server's own throttle, a rate limit the
//!   agent gave up retrying): retried with growing delays, not counted, for as long as
//!   `loop.outage_wait` allows, since a night's run must not end on what a person would have
//!   waited out;
//! - a **usage limit** that resets: waited out (`limit.rs`), then the same iteration runs
//!   again;
//! - a **credit, spend or admin stop** (out of credits, a seat that does not include
//!   usage): no wait ends it, so the loop ends at once, saying why and what to do;
//! - an **agent crash or bad exit**: retried `loop.retries` times, then `pagent loop` stops
//!   with the state saved.
//!
//! [`after_failure`] decides, [`record`] keeps the last failure in the state for `pagent
//! status` and the dashboard; a run that gets as far as a decision clears it.

use serde::{Deserialize, Serialize};

use crate::limit::{LimitPlan, LimitSeen, WaitOptions, plan};
use crate::{State, Timestamp, format_duration};

/// The longest wait between two retries.
pub const MAX_RETRY_DELAY_SECS: u64 = 300;
/// How long an outage is retried by default (the config's `loop.outage_wait`).
pub const DEFAULT_OUTAGE_SECS: u64 = 3600;
/// The agent's words kept with a failure, in characters.
const WHY_CAP: usize = 300;

/// The four classes of a failed run.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureClass {
    Outage,
    UsageLimit,
    Stop,
    Crash,
}

impl FailureClass {
    /// The name `--json` and the event log use.
    pub fn as_str(self) -> &'static str {
        match self {
            FailureClass::Outage => "outage",
            FailureClass::UsageLimit => "usage_limit",
            FailureClass::Stop => "stop",
            FailureClass::Crash => "crash",
        }
    }

    /// The class in words, as every place says it.
    pub fn label(self) -> &'static str {
        match self {
            FailureClass::Outage => "service outage",
            FailureClass::UsageLimit => "usage limit",
            FailureClass::Stop => "credit, spend or admin stop",
            FailureClass::Crash => "agent crash or bad exit",
        }
    }
}

/// What a failed run reported: a usage limit, an outage, or neither (why it failed).
#[derive(Debug, Clone, Copy)]
pub enum Failed<'a> {
    Limit(&'a LimitSeen),
    Outage(&'a str),
    Crash(&'a str),
}

/// How `pagent loop` retries.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryOptions {
    /// Retries of a crash (and of a limit under `--no-limit-wait`): `loop.retries`.
    pub retries: u32,
    /// The first retry's delay; each next one doubles it, up to [`MAX_RETRY_DELAY_SECS`].
    pub first_delay_secs: u64,
    /// How long an outage is retried, from its first failed run.
    pub outage_secs: u64,
    /// `--no-limit-wait`: a limit is retried as a crash is, not waited for.
    pub no_limit_wait: bool,
}

/// One iteration's failed runs so far.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Attempts {
    /// Crashes, and limits retried under `--no-limit-wait`.
    pub crashes: u32,
    pub outages: u32,
    /// When the first failed run of the outage under way ended.
    pub outage_since: Option<Timestamp>,
}

/// What the runner does next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AfterFailure {
    /// Run the same iteration again after the delay (not counted): `text` says why, and
    /// which retry it is.
    Retry { delay_secs: u64, text: String },
    /// Wait for the usage limit to reset, then run the same iteration again.
    Wait { until: Timestamp, reset_known: bool },
    /// The loop ends as gave up, for this reason: no wait ends the limit.
    End(String),
    /// `pagent loop` stops, the state saved: the retries (or the outage's time) are spent.
    Stop(String),
}

/// The class of a failed run and what to do about it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub class: FailureClass,
    pub next: AfterFailure,
    /// The iteration's failed runs, this one counted.
    pub attempts: Attempts,
}

/// Decides what follows a failed run at `now`, after `attempts` earlier ones.
pub fn after_failure(
    failed: Failed<'_>,
    attempts: Attempts,
    now: Timestamp,
    retry: RetryOptions,
    wait: WaitOptions,
) -> Verdict {
    let mut attempts = attempts;
    let (class, next) = match failed {
        Failed::Limit(seen) => match plan(seen, now, wait) {
            LimitPlan::GiveUp(reason) => (FailureClass::Stop, AfterFailure::End(reason)),
            LimitPlan::Wait { .. } if retry.no_limit_wait => {
                attempts.crashes += 1;
                let why = format!("{} (--no-limit-wait)", cap(&seen.message));
                let next = crash_retry(FailureClass::UsageLimit, &why, attempts.crashes, retry);
                (FailureClass::UsageLimit, next)
            }
            LimitPlan::Wait { until, reset_known } => (
                FailureClass::UsageLimit,
                AfterFailure::Wait { until, reset_known },
            ),
        },
        Failed::Outage(why) => {
            attempts.outages += 1;
            let since = *attempts.outage_since.get_or_insert(now);
            (
                FailureClass::Outage,
                outage_retry(why, since, attempts, now, retry),
            )
        }
        Failed::Crash(why) => {
            attempts.crashes += 1;
            let next = crash_retry(FailureClass::Crash, why, attempts.crashes, retry);
            (FailureClass::Crash, next)
        }
    };
    Verdict {
        class,
        next,
        attempts,
    }
}

/// The delay before retry `n` (1-based): the first delay, doubled each time, capped.
fn backoff(first_delay_secs: u64, n: u32) -> u64 {
    first_delay_secs
        .saturating_mul(1 << n.saturating_sub(1).min(16))
        .min(MAX_RETRY_DELAY_SECS)
}

fn crash_retry(class: FailureClass, why: &str, n: u32, retry: RetryOptions) -> AfterFailure {
    let label = class.label();
    let why = cap(why);
    let why = why.trim_end_matches('.');
    if n > retry.retries {
        let times = match n {
            1 => "once".to_owned(),
            n => format!("{n} times in a row"),
        };
        return AfterFailure::Stop(format!(
            "{label}: {why}; the agent failed {times}: fix the cause and run `pagent loop` \
             to resume"
        ));
    }
    let delay_secs = backoff(retry.first_delay_secs, n);
    AfterFailure::Retry {
        delay_secs,
        text: format!(
            "{label}: {why}; retry {n} of {} in {}, not counted as an iteration",
            retry.retries,
            format_duration(delay_secs)
        ),
    }
}

fn outage_retry(
    why: &str,
    since: Timestamp,
    attempts: Attempts,
    now: Timestamp,
    retry: RetryOptions,
) -> AfterFailure {
    let label = FailureClass::Outage.label();
    let why = cap(why);
    let why = why.trim_end_matches('.');
    let lasted = now.since(since);
    if lasted >= retry.outage_secs {
        return AfterFailure::Stop(format!(
            "{label}: {why}; the service still failed after {} of retries (loop.outage_wait: \
             {}): run `pagent loop` to resume once it is back",
            format_duration(lasted),
            format_duration(retry.outage_secs)
        ));
    }
    let delay_secs = backoff(retry.first_delay_secs, attempts.outages)
        .min(retry.outage_secs - lasted)
        .max(1);
    AfterFailure::Retry {
        delay_secs,
        text: format!(
            "{label}: {why}; retry {} in {}, retried with backoff for up to {}, not counted \
             as an iteration",
            attempts.outages,
            format_duration(delay_secs),
            format_duration(retry.outage_secs)
        ),
    }
}

/// A failed run the state remembers until an iteration ends.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LastFailure {
    pub class: FailureClass,
    pub at: Timestamp,
    /// What the runner said of it (the class, the agent's words, what follows).
    pub text: String,
    /// When the next run starts; `None` when none will (the runner stopped).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub retry_at: Option<Timestamp>,
}

impl LastFailure {
    /// `3m ago: service outage: …; retry 2 in 20s, …`, as `pagent status` says it.
    pub fn describe(&self, now: Timestamp) -> String {
        format!("{} ago: {}", format_duration(now.since(self.at)), self.text)
    }
}

/// `state` remembering the failed run of `verdict`, said in `text`, at `now`.
pub fn record(state: &State, verdict: &Verdict, text: &str, now: Timestamp) -> State {
    let mut next = state.clone();
    let retry_at = match &verdict.next {
        AfterFailure::Retry { delay_secs, .. } => Some(Timestamp(now.0 + delay_secs)),
        _ => None,
    };
    next.last_failure = Some(LastFailure {
        class: verdict.class,
        at: now,
        text: cap(text),
        retry_at,
    });
    next.updated_at = now;
    next
}

fn cap(text: &str) -> String {
    let text = text.trim();
    match text.char_indices().nth(WHY_CAP) {
        Some((at, _)) => format!("{}…", &text[..at]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests;

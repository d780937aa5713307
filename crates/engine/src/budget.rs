//! Budgets: a loop may be bounded by wall-clock time, tokens and money as well as by
//! iterations. The policy is here, pure: what a budget is, how the user writes one
//! (`--max-duration 2h`, `--max-tokens 2M`, `--max-cost 5`), and whether one is reached,
//! with the figures for the `gave up` message.
//!
//! A budget is judged at every Stop and every `pagent loop` iteration, after the stage's
//! exit condition: work that finished the loop on the turn that crossed the budget still
//! completes (the money is spent either way), but a loop that is not done ends as `gave
//! up` instead of advancing or re-prompting. A token or cost budget over a loop whose
//! agent reports no usage cannot be judged, and the loop's other bounds still hold; status
//! says so.

use serde::{Deserialize, Serialize};

use crate::decide::{Decision, LogEntry, Step};
use crate::usage::{format_cost, format_count};
use crate::{Action, State, Status, Timestamp, format_duration};

/// The largest budgets accepted: beyond these a figure is a typo, not a plan.
pub const MAX_DURATION_SECS: u64 = 30 * 24 * 3600;
pub const MAX_TOKENS: u64 = 1_000_000_000_000;
pub const MAX_COST_MICROUSD: u64 = 100_000 * 1_000_000;

/// The limits of one loop; `None` means no such limit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Budget {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_duration_secs: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_tokens: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_cost_microusd: Option<u64>,
}

impl Budget {
    pub fn is_empty(&self) -> bool {
        *self == Budget::default()
    }

    /// `self`'s limits where set, else `under`'s (flags over a workflow's values).
    pub fn over(self, under: Budget) -> Budget {
        Budget {
            max_duration_secs: self.max_duration_secs.or(under.max_duration_secs),
            max_tokens: self.max_tokens.or(under.max_tokens),
            max_cost_microusd: self.max_cost_microusd.or(under.max_cost_microusd),
        }
    }

    /// Whether `max_*` values read from a state file are within what set-up accepts.
    pub fn is_valid(&self) -> bool {
        self.max_duration_secs
            .is_none_or(|s| (1..=MAX_DURATION_SECS).contains(&s))
            && self
                .max_tokens
                .is_none_or(|t| (1..=MAX_TOKENS).contains(&t))
            && self
                .max_cost_microusd
                .is_none_or(|c| (1..=MAX_COST_MICROUSD).contains(&c))
    }

    /// `2h, 500k tokens, $5.00` for the set-up line and status.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        if let Some(secs) = self.max_duration_secs {
            parts.push(format_duration(secs));
        }
        if let Some(tokens) = self.max_tokens {
            parts.push(format!("{} tokens", format_count(tokens)));
        }
        if let Some(cost) = self.max_cost_microusd {
            parts.push(format_cost(cost));
        }
        parts.join(", ")
    }
}

/// Which budget a loop reached, with the figures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reached {
    Duration {
        used: u64,
        limit: u64,
    },
    Tokens {
        used: u64,
        limit: u64,
    },
    Cost {
        used: u64,
        limit: u64,
        source: String,
    },
}

impl Reached {
    /// `the token budget (12.3k tokens used of 10.0k)`.
    pub fn describe(&self) -> String {
        match self {
            Reached::Duration { used, limit } => format!(
                "the time budget ({} worked of {})",
                format_duration(*used),
                format_duration(*limit)
            ),
            Reached::Tokens { used, limit } => {
                let (short_used, short_limit) = (format_count(*used), format_count(*limit));
                // The exact figures too, when the short ones rounded them.
                let exact = if short_used == used.to_string() && short_limit == limit.to_string() {
                    String::new()
                } else {
                    format!("; {used} of {limit}")
                };
                format!("the token budget ({short_used} tokens used of {short_limit}{exact})")
            }
            Reached::Cost {
                used,
                limit,
                source,
            } => format!(
                "the cost budget ({} spent of {}, {source})",
                format_cost(*used),
                format_cost(*limit)
            ),
        }
    }
}

/// The first budget of `state` that its usage has reached by `now`, if any. Time first:
/// it is the one figure that never depends on the agent's honesty.
pub fn reached(state: &State, now: Timestamp) -> Option<Reached> {
    let budget = &state.budget;
    let usage = &state.usage;
    if let Some(limit) = budget.max_duration_secs {
        let used = worked_secs(state, now);
        if used >= limit {
            return Some(Reached::Duration { used, limit });
        }
    }
    if let Some(limit) = budget.max_tokens {
        let used = usage.tokens.total();
        if used >= limit {
            return Some(Reached::Tokens { used, limit });
        }
    }
    if let Some(limit) = budget.max_cost_microusd {
        let used = usage.cost_microusd;
        if usage.cost_known() && used >= limit {
            return Some(Reached::Cost {
                used,
                limit,
                source: usage.cost_source(),
            });
        }
    }
    None
}

/// Moves the state's clock to `now`: the time since its last write is added to the loop's
/// elapsed time (nothing when the clock went backwards, nor while it waits for a usage
/// limit), then `updated_at` is `now`.
pub fn tick(state: &mut State, now: Timestamp) {
    state.usage.elapsed_secs = worked_secs(state, now);
    state.updated_at = now;
}

/// The time the loop has worked by `now`: what `--max-duration` counts. Waiting for a
/// usage limit to reset is not work (see `limit.rs`).
pub fn worked_secs(state: &State, now: Timestamp) -> u64 {
    match &state.limit_wait {
        // The wait began with a write: nothing since then is work.
        Some(_) => state.usage.elapsed_secs,
        None => state.usage.elapsed_at(state.updated_at, now),
    }
}

/// The time the loop has waited for usage limits to reset by `now`, the wait under way
/// included.
pub fn waited_secs(state: &State, now: Timestamp) -> u64 {
    let current = state
        .limit_wait
        .as_ref()
        .map_or(0, |wait| now.since(wait.since));
    state.usage.waited_secs.saturating_add(current)
}

/// The step that ends `next` (already ticked to `now`) as `gave up` when a budget is
/// reached; `None` while every budget holds.
pub fn give_up_if_reached(next: &State, now: Timestamp) -> Option<Step> {
    let reached = reached(next, now)?;
    let mut next = next.clone();
    let name = next.current().name.clone();
    let iteration = next.iterations[next.stage];
    let reason = format!(
        "reached {} at stage {name}, iteration {iteration}",
        reached.describe()
    );
    let message = format!("pagent: gave up: {reason}. /pagent:status shows where it stopped.");
    next.finish(Status::GaveUp, reason.clone(), now);
    Some(Step {
        decision: Decision::Notify(message),
        write: next,
        log: LogEntry {
            action: Action::GaveUp,
            stage: name,
            iteration,
            detail: reason,
        },
    })
}

/// `2h`, `90m`, `1h30m`, `45s`, `3600` (seconds), `1d`.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let bad = || format!("{text:?} is not a duration like 45m, 2h or 1h30m");
    let trimmed = text.trim();
    if trimmed.is_empty() {
        return Err(bad());
    }
    let mut total: u64 = 0;
    let mut number = String::new();
    let mut saw_unit = false;
    for c in trimmed.chars() {
        if c.is_ascii_digit() {
            number.push(c);
            continue;
        }
        let unit = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            _ => return Err(bad()),
        };
        let n: u64 = number.parse().map_err(|_| bad())?;
        total = total.saturating_add(n.saturating_mul(unit));
        number.clear();
        saw_unit = true;
    }
    if !number.is_empty() {
        if saw_unit {
            return Err(bad());
        }
        total = number.parse().map_err(|_| bad())?;
    }
    within("a duration", total, MAX_DURATION_SECS, &format_duration)
}

/// `500000`, `500k`, `2M`, `1.5M`, `1_000_000`.
pub fn parse_tokens(text: &str) -> Result<u64, String> {
    let bad = || format!("{text:?} is not a token count like 500000, 500k or 2M");
    let cleaned: String = text.trim().chars().filter(|c| *c != '_').collect();
    let (number, scale) = match cleaned.chars().last() {
        Some('k' | 'K') => (&cleaned[..cleaned.len() - 1], 1_000),
        Some('m' | 'M') => (&cleaned[..cleaned.len() - 1], 1_000_000),
        Some('g' | 'G' | 'b' | 'B') => (&cleaned[..cleaned.len() - 1], 1_000_000_000),
        _ => (cleaned.as_str(), 1),
    };
    let value = parse_decimal(number, scale).ok_or_else(bad)?;
    within("a token budget", value, MAX_TOKENS, &|n| n.to_string())
}

/// `5`, `5.50`, `$5`, `0.25` (US dollars).
pub fn parse_cost(text: &str) -> Result<u64, String> {
    let bad = || format!("{text:?} is not an amount of US dollars like 5, 0.50 or $12");
    let trimmed = text.trim();
    let number = trimmed.strip_prefix('$').unwrap_or(trimmed);
    let value = parse_decimal(number, 1_000_000).ok_or_else(bad)?;
    within("a cost budget", value, MAX_COST_MICROUSD, &format_cost)
}

/// `digits[.digits]` times `scale`, exactly (no floats), rounded down; `None` for
/// anything else (a sign, an exponent, overflow).
fn parse_decimal(text: &str, scale: u64) -> Option<u64> {
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    if whole.is_empty() && fraction.is_empty() {
        return None;
    }
    let digits = |s: &str| s.chars().all(|c| c.is_ascii_digit());
    if !digits(whole) || !digits(fraction) || fraction.len() > 12 {
        return None;
    }
    let whole: u64 = if whole.is_empty() {
        0
    } else {
        whole.parse().ok()?
    };
    let mut value = whole.checked_mul(scale)?;
    let mut unit = scale;
    for c in fraction.chars() {
        unit /= 10;
        value = value.checked_add(u64::from(c.to_digit(10)?) * unit)?;
    }
    Some(value)
}

fn within(what: &str, value: u64, max: u64, shown: &dyn Fn(u64) -> String) -> Result<u64, String> {
    if value == 0 {
        return Err(format!("{what} must be more than 0"));
    }
    if value > max {
        return Err(format!("{what} may be at most {}", shown(max)));
    }
    Ok(value)
}

/// A budget field of a workflow file: a string in the flag's syntax, or a plain number
/// (seconds, tokens, dollars).
pub fn parse_json_field(
    value: &serde_json::Value,
    parse: fn(&str) -> Result<u64, String>,
) -> Result<u64, String> {
    match value {
        serde_json::Value::String(text) => parse(text),
        serde_json::Value::Number(n) => parse(&n.to_string()),
        _ => Err("expected a number or a string".to_owned()),
    }
}

#[cfg(test)]
mod edges;
#[cfg(test)]
mod tests;

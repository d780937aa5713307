//! What a loop has used so far: tokens, money and time, kept in the state so `pagent
//! status` can show them and a budget (see `budget.rs`) can end the loop.
//!
//! Figures come from the agent: the `usage` of each assistant message in a Claude Code
//! transcript (the Stop hook), or the usage and cost records of an agent's output stream
//! (`pagent loop`). Each becomes a [`Report`]. A report's cost is the agent's own figure
//! when it gives one; otherwise it is estimated from a per-model price table ([`Prices`]:
//! pagent's list prices, data in `prices.toml` (see `usage/list.rs`), overridden by the
//! user's own config), and a model that no
//! price matches leaves its tokens "unpriced". The state records which of those sources
//! the total came from, so the figure is never shown as more exact than it is.
//!
//! Money is kept in whole micro-dollars (`u64`), never floats: the state stays `Eq`, sums
//! are exact, and every addition saturates, so a forged or absurd report (`u64::MAX`
//! tokens) can only end a loop early, never wrap its total back to zero.

use serde::{Deserialize, Serialize};

use crate::Timestamp;

mod list;

pub use list::{ListPrice, PRICES_TOML, list_prices};

/// Token counts, as Anthropic splits them (other agents map onto the same four).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Tokens {
    /// Input not read from the prompt cache.
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl Tokens {
    /// Every token the model read or wrote: what `--max-tokens` counts.
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_read)
            .saturating_add(self.cache_write)
    }

    pub fn saturating_add(&self, other: &Tokens) -> Tokens {
        Tokens {
            input: self.input.saturating_add(other.input),
            output: self.output.saturating_add(other.output),
            cache_read: self.cache_read.saturating_add(other.cache_read),
            cache_write: self.cache_write.saturating_add(other.cache_write),
        }
    }

    /// What `self` adds over `counted`, field by field (a message re-reported with
    /// grown counts adds only its growth; a shrunk one adds nothing).
    pub fn growth_over(&self, counted: &Tokens) -> Tokens {
        Tokens {
            input: self.input.saturating_sub(counted.input),
            output: self.output.saturating_sub(counted.output),
            cache_read: self.cache_read.saturating_sub(counted.cache_read),
            cache_write: self.cache_write.saturating_sub(counted.cache_write),
        }
    }

    /// The larger of each field.
    pub fn max(&self, other: &Tokens) -> Tokens {
        Tokens {
            input: self.input.max(other.input),
            output: self.output.max(other.output),
            cache_read: self.cache_read.max(other.cache_read),
            cache_write: self.cache_write.max(other.cache_write),
        }
    }
}

/// One usage record from an agent: a transcript message, a stream's end-of-run or step
/// record.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Report {
    pub model: Option<String>,
    pub tokens: Tokens,
    /// The agent's own cost figure, when it gives one.
    pub cost_microusd: Option<u64>,
}

/// Where a loop's cost figure came from; several may apply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct CostSources {
    /// The agent reported the cost itself (Claude Code's `total_cost_usd`, OpenCode).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub reported: bool,
    /// Estimated from pagent's built-in list prices.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub built_in_prices: bool,
    /// Estimated from the prices in the user's config.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub user_prices: bool,
}

/// A loop's usage so far. `Default` is a loop that used nothing (and an older state file
/// without the field).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Usage {
    pub tokens: Tokens,
    pub cost_microusd: u64,
    #[serde(skip_serializing_if = "is_default")]
    pub cost_sources: CostSources,
    /// Tokens of reports with no cost and no price for their model: not in the cost.
    #[serde(skip_serializing_if = "is_zero")]
    pub unpriced_tokens: u64,
    /// How many usage records were counted: 0 means the agent reported none (so a token
    /// or cost budget cannot be judged, and status says so).
    pub reports: u64,
    /// Wall-clock seconds the loop has run, summed from the forward steps of the clock
    /// between writes (see `budget::tick`): a clock set back never makes it shrink.
    pub elapsed_secs: u64,
    /// Wall-clock seconds spent waiting for the agent's usage limits to reset (see
    /// `limit.rs`): not in `elapsed_secs`, never counted against `--max-duration`.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub waited_secs: u64,
    /// Where the Stop hook stopped reading the session's transcript.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub transcript: Option<TranscriptCursor>,
}

fn is_default(sources: &CostSources) -> bool {
    *sources == CostSources::default()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// The Stop hook's place in a transcript, so each Stop reads only what was written
/// since the last one.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct TranscriptCursor {
    pub path: String,
    /// Bytes already read (always at a line boundary, unless `skipping`).
    pub offset: u64,
    /// The offset is inside a line too long to be an assistant message worth reading:
    /// skip to its end first.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub skipping: bool,
    /// The last message counted and what was counted for it: Claude Code writes one line
    /// per content block, each repeating its message's usage.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub message_id: Option<String>,
    pub message_tokens: Tokens,
}

impl Usage {
    /// Adds one report, pricing it when the agent gave no cost.
    pub fn add(&mut self, report: &Report, prices: &Prices) {
        self.tokens = self.tokens.saturating_add(&report.tokens);
        self.reports = self.reports.saturating_add(1);
        let cost = match report.cost_microusd {
            Some(cost) => {
                self.cost_sources.reported = true;
                Some(cost)
            }
            None if report.tokens.total() == 0 => Some(0),
            None => match report.model.as_deref().and_then(|m| prices.find(m)) {
                Some(price) => {
                    match price.source {
                        PriceSource::BuiltIn => self.cost_sources.built_in_prices = true,
                        PriceSource::User => self.cost_sources.user_prices = true,
                    }
                    Some(price.cost_microusd(&report.tokens))
                }
                None => None,
            },
        };
        match cost {
            Some(cost) => self.cost_microusd = self.cost_microusd.saturating_add(cost),
            None => {
                self.unpriced_tokens = self.unpriced_tokens.saturating_add(report.tokens.total());
            }
        }
    }

    /// Seconds run by `now`: the sum so far plus the clock's forward step since the
    /// state was last written.
    pub fn elapsed_at(&self, updated_at: Timestamp, now: Timestamp) -> u64 {
        self.elapsed_secs.saturating_add(now.since(updated_at))
    }

    /// Whether any cost figure is known at all.
    pub fn cost_known(&self) -> bool {
        self.cost_sources != CostSources::default()
    }

    /// Where the cost came from, in words: `reported by the agent`, `estimated from
    /// pagent's list prices`, ...; and what it leaves out.
    pub fn cost_source(&self) -> String {
        let mut parts = Vec::new();
        if self.cost_sources.reported {
            parts.push("reported by the agent");
        }
        if self.cost_sources.user_prices {
            parts.push("estimated from the prices in your config");
        }
        if self.cost_sources.built_in_prices {
            parts.push("estimated from pagent's list prices");
        }
        let mut text = if parts.is_empty() {
            "no cost reported or priced".to_owned()
        } else {
            parts.join(" and ")
        };
        if self.unpriced_tokens > 0 {
            text.push_str(&format!(
                "; {} tokens of a model with no price not counted",
                format_count(self.unpriced_tokens)
            ));
        }
        text
    }

    /// `12.3k tokens, $0.42` style figures for one line of status.
    pub fn summary(&self) -> String {
        if self.reports == 0 {
            return "tokens not reported".to_owned();
        }
        let mut text = format!("{} tokens", format_count(self.tokens.total()));
        if self.cost_known() {
            text.push_str(&format!(", {}", format_cost(self.cost_microusd)));
            if self.unpriced_tokens > 0 {
                text.push('+');
            }
        }
        text
    }
}

/// `950`, `12.3k`, `4.56M`, `1.20G`.
pub fn format_count(n: u64) -> String {
    // Float formatting only for display; the figures themselves stay integers.
    #[allow(clippy::cast_precision_loss)]
    let f = n as f64;
    match n {
        0..=999 => n.to_string(),
        1_000..=999_999 => format!("{:.1}k", f / 1e3),
        1_000_000..=999_999_999 => format!("{:.2}M", f / 1e6),
        _ => format!("{:.2}G", f / 1e9),
    }
}

/// `$0.42`, `$12.50`; under a cent, two significant digits (`$0.0031`, `$0.000051`), so a
/// cost that is not zero never reads as `$0.0000`. Integer arithmetic throughout.
pub fn format_cost(microusd: u64) -> String {
    let dollars = microusd / 1_000_000;
    let micros = microusd % 1_000_000;
    if dollars == 0 && micros > 0 && micros < 10_000 {
        let mut scale = 1;
        while micros / scale >= 100 {
            scale *= 10;
        }
        let rounded = (micros + scale / 2) / scale * scale;
        if rounded < 10_000 {
            let digits = format!("{rounded:06}");
            return format!("$0.{}", digits.trim_end_matches('0'));
        }
    }
    let cents = (micros + 5_000) / 10_000;
    let (dollars, cents) = if cents == 100 {
        (dollars + 1, 0)
    } else {
        (dollars, cents)
    };
    format!("${dollars}.{cents:02}")
}

/// Whose price a figure used.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PriceSource {
    BuiltIn,
    User,
}

/// The price of one model family, in micro-dollars per million tokens (so `$3/Mtok` is
/// `3_000_000`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Price {
    /// Matches a model name that starts with it (after a `provider/` part).
    pub prefix: String,
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
    pub source: PriceSource,
}

impl Price {
    pub fn cost_microusd(&self, tokens: &Tokens) -> u64 {
        let part = |n: u64, per_million: u64| u128::from(n) * u128::from(per_million);
        let sum = part(tokens.input, self.input)
            + part(tokens.output, self.output)
            + part(tokens.cache_read, self.cache_read)
            + part(tokens.cache_write, self.cache_write);
        u64::try_from(sum / 1_000_000).unwrap_or(u64::MAX)
    }
}

/// Dollars per million tokens to micro-dollars per million tokens; `None` for a value no
/// price can have (negative, not a number, over $100,000 per million).
pub fn per_million(dollars: f64) -> Option<u64> {
    if !dollars.is_finite() || !(0.0..=100_000.0).contains(&dollars) {
        return None;
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Some((dollars * 1e6).round() as u64)
}

/// The price table: the user's prices (from their own config) before the built-in ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Prices {
    entries: Vec<Price>,
}

impl Default for Prices {
    fn default() -> Self {
        Prices::built_in()
    }
}

impl Prices {
    /// pagent's list prices ([`list_prices`], the embedded `prices.toml`).
    pub fn built_in() -> Prices {
        let entries = list_prices()
            .iter()
            .filter_map(|p| {
                Some(Price {
                    prefix: p.prefix.to_string(),
                    input: per_million(p.input)?,
                    output: per_million(p.output)?,
                    cache_read: per_million(p.cache_read)?,
                    cache_write: per_million(p.cache_write)?,
                    source: PriceSource::BuiltIn,
                })
            })
            .collect();
        Prices { entries }
    }

    /// Every price in the table, the user's first.
    pub fn entries(&self) -> &[Price] {
        &self.entries
    }

    /// The built-in table with the user's prices added over it.
    pub fn with_user(user: Vec<Price>) -> Prices {
        let mut prices = Prices::built_in();
        let mut entries: Vec<Price> = user
            .into_iter()
            .map(|p| Price {
                source: PriceSource::User,
                ..p
            })
            .collect();
        entries.append(&mut prices.entries);
        Prices { entries }
    }

    /// The price for `model`: the user's longest matching prefix, else the built-in
    /// longest. `anthropic/claude-...` (OpenCode) and `claude-...[1m]` (Claude Code's
    /// long-context name) match as `claude-...`.
    pub fn find(&self, model: &str) -> Option<&Price> {
        let model = model.rsplit('/').next().unwrap_or(model);
        let model = model.split('[').next().unwrap_or(model).trim();
        let best = |source: PriceSource| {
            self.entries
                .iter()
                .filter(|p| p.source == source && model.starts_with(p.prefix.as_str()))
                .max_by_key(|p| p.prefix.len())
        };
        best(PriceSource::User).or_else(|| best(PriceSource::BuiltIn))
    }
}

#[cfg(test)]
mod tests;

//! How `pagent loop` (and each loop of `pagent parallel`, each team worker) times and
//! retries its agent: the `loop` section of the user's own `config.json` (issue 31, item
//! 4). What a person tunes once for their machine and their provider (the watchdog, the
//! retries and their delay, how long an outage or a usage limit is waited out) lives here,
//! not among the flags; the old flags still work, hidden, and win over the config.
//!
//! [`KNOBS`] is the one table: each key's default, its bounds and its description. The
//! defaults of [`Tuning`], the config's validation and its JSON Schema are all read from
//! it. Only the user's own file may hold the section: a project's config that tried to
//! tune a loop is refused (`config::project_backpressure`), and the bounds keep even the
//! user's file from making a loop wait without end.

use std::collections::BTreeMap;
use std::time::Duration;

use pagent_engine::failure::{DEFAULT_OUTAGE_SECS, MAX_RETRY_DELAY_SECS};
use pagent_engine::limit::{DEFAULT_WAIT_SECS, MARGIN_SECS};
use serde_json::{Value, json};

const DAY: u64 = 24 * 3600;

/// One key of the `loop` section: a whole number (seconds, but for `retries`).
#[derive(Debug, Clone, Copy)]
pub struct Knob {
    pub key: &'static str,
    /// The flag that sets it for one run (hidden from `--help` but `--iteration-timeout`).
    pub flag: &'static str,
    pub default: u64,
    pub min: u64,
    pub max: u64,
    pub what: &'static str,
}

/// The keys of the `loop` section, their defaults and bounds.
pub const KNOBS: &[Knob] = &[
    Knob {
        key: "iteration_timeout",
        flag: "--iteration-timeout",
        default: 30 * 60,
        min: 1,
        max: 7 * DAY,
        what: "Seconds before an iteration that runs longer is stopped",
    },
    Knob {
        key: "idle_timeout",
        flag: "--idle-timeout",
        default: 10 * 60,
        min: 1,
        max: 7 * DAY,
        what: "Seconds an agent may print nothing before the watchdog stops it",
    },
    Knob {
        key: "retries",
        flag: "--retries",
        default: 3,
        min: 0,
        max: 20,
        what: "Retries, with a doubling delay, when the agent crashes or exits with an error (not counted as iterations)",
    },
    Knob {
        key: "retry_delay",
        flag: "--retry-delay",
        default: 5,
        min: 1,
        max: MAX_RETRY_DELAY_SECS,
        what: "Seconds before the first retry; each next one doubles it (at most 300)",
    },
    Knob {
        key: "outage_wait",
        flag: "--outage-wait",
        default: DEFAULT_OUTAGE_SECS,
        min: 0,
        max: 7 * DAY,
        what: "Seconds an outage of the agent's service (a 5xx, overloaded) is retried before the loop stops, its state saved",
    },
    Knob {
        key: "limit_wait",
        flag: "--limit-wait",
        default: DEFAULT_WAIT_SECS,
        min: 1,
        max: 7 * DAY,
        what: "Seconds to wait on a usage limit that names no reset time",
    },
    Knob {
        key: "limit_margin",
        flag: "--limit-margin",
        default: MARGIN_SECS,
        min: 0,
        max: DAY,
        what: "Seconds past the reset a usage limit names before the loop goes on (the provider's clock is not ours)",
    },
];

/// The tuning a loop runs with: [`KNOBS`]' defaults under the user's `loop` section.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    pub iteration_timeout: Duration,
    pub idle_timeout: Duration,
    pub retries: u32,
    pub retry_delay: Duration,
    pub outage_wait: Duration,
    pub limit_wait: Duration,
    pub limit_margin: Duration,
}

impl Default for Tuning {
    fn default() -> Self {
        Tuning::with(&BTreeMap::new())
    }
}

impl Tuning {
    /// The defaults, with the keys `section` sets (validated by [`check`]).
    pub fn with(section: &BTreeMap<String, u64>) -> Tuning {
        // A key missing from the table would read as 0: the tests below catch it.
        let value = |key: &str| {
            let default = KNOBS.iter().find(|k| k.key == key).map_or(0, |k| k.default);
            section.get(key).copied().unwrap_or(default)
        };
        let secs = |key: &str| Duration::from_secs(value(key));
        Tuning {
            iteration_timeout: secs("iteration_timeout"),
            idle_timeout: secs("idle_timeout"),
            retries: u32::try_from(value("retries")).unwrap_or(u32::MAX),
            retry_delay: secs("retry_delay"),
            outage_wait: secs("outage_wait"),
            limit_wait: secs("limit_wait"),
            limit_margin: secs("limit_margin"),
        }
    }
}

/// Whether `section` holds only known keys, each within its bounds; else which is not.
pub fn check(section: &BTreeMap<String, u64>) -> Result<(), String> {
    for (key, value) in section {
        let Some(knob) = KNOBS.iter().find(|k| k.key == key) else {
            let known: Vec<&str> = KNOBS.iter().map(|k| k.key).collect();
            return Err(format!(
                "{key} is not a key pagent knows (those are {})",
                known.join(", ")
            ));
        };
        if !(knob.min..=knob.max).contains(value) {
            let unit = if knob.key == "retries" {
                ""
            } else {
                " seconds"
            };
            return Err(format!(
                "{key} must be from {} to {}{unit} (it is {value})",
                knob.min, knob.max
            ));
        }
    }
    Ok(())
}

/// The section's JSON Schema, from [`KNOBS`].
pub fn schema() -> Value {
    let properties: serde_json::Map<String, Value> = KNOBS
        .iter()
        .map(|knob| {
            let schema = json!({
                "type": "integer",
                "minimum": knob.min,
                "maximum": knob.max,
                "default": knob.default,
                "description": format!(
                    "{} [default: {}; from {} to {}; {} sets it for one run].",
                    knob.what, knob.default, knob.min, knob.max, knob.flag
                ),
            });
            (knob.key.to_owned(), schema)
        })
        .collect();
    json!({
        "type": "object",
        "description": "How pagent loop, pagent parallel and a team's workers time and retry their agent (your own config only).",
        "properties": properties,
        "additionalProperties": false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_31_every_knob_reaches_the_tuning_and_its_default_is_within_its_bounds() {
        for knob in KNOBS {
            assert!((knob.min..=knob.max).contains(&knob.default), "{knob:?}");
            let mut section = BTreeMap::new();
            section.insert(knob.key.to_owned(), knob.default + 1);
            assert_ne!(Tuning::with(&section), Tuning::default(), "{knob:?}");
        }
    }

    #[test]
    fn issue_31_a_tuning_value_out_of_its_bounds_is_refused() {
        let mut section = BTreeMap::new();
        section.insert("outage_wait".to_owned(), 10 * 365 * DAY);
        assert_eq!(
            check(&section).unwrap_err(),
            "outage_wait must be from 0 to 604800 seconds (it is 315360000)"
        );
        let mut section = BTreeMap::new();
        section.insert("retry_wait".to_owned(), 1);
        assert!(
            check(&section)
                .unwrap_err()
                .starts_with("retry_wait is not")
        );
    }
}

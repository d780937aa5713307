//! What `pagent loop --json` prints, one object per line: [`LoopEvent`]. The runner's
//! progress writes these and `pagent parallel` reads its children's back, through the
//! same type, so neither side spells a key the other does not know.

use pagent_engine::failure::FailureClass;
use pagent_engine::{Action, Kind, Status, Timestamp, Usage};
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum LoopEvent {
    Started {
        resumed: bool,
        workflow: String,
        kind: Kind,
        agent: String,
        root: String,
    },
    IterationStarted {
        stage: String,
        iteration: u32,
        max_iterations: u32,
        attempt: u32,
    },
    /// The agent is using a tool now.
    Tool {
        name: String,
        summary: Option<String>,
    },
    /// Something the agent's stream reported that did not parse as expected.
    Warning {
        text: String,
    },
    IterationFinished {
        stage: String,
        iteration: u32,
        outcome: Action,
        detail: String,
        elapsed_secs: u64,
        /// The loop's figures so far.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<UsageFigures>,
    },
    /// A failed run, run again after `delay_secs`: `reason` says why (its class first),
    /// `max` is the retries a crash gets (0 for an outage, retried for a time instead).
    Retry {
        reason: String,
        attempt: u32,
        max: u32,
        delay_secs: u64,
        /// `outage`, `crash`, or `usage_limit` (under `--no-limit-wait`).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure: Option<FailureClass>,
    },
    Note {
        text: String,
    },
    /// The agent hit a usage limit: the loop waits until `until`, then runs the same
    /// iteration again (not counted).
    LimitWait {
        reason: String,
        until: Timestamp,
        wait_secs: u64,
        /// Whether `until` is the reset the agent named (plus a minute), else `loop.limit_wait`.
        reset_known: bool,
    },
    /// The usage limit was waited out: the same iteration runs again.
    LimitResumed {
        waited_secs: u64,
    },
    /// The last word. `status` and `iterations` are null when the loop ended in an error
    /// before or outside its state.
    Finished {
        outcome: Ending,
        status: Option<Status>,
        iterations: Option<u32>,
        reason: String,
        elapsed_secs: u64,
        /// The loop's figures at its end (none when it ended outside its state).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        usage: Option<UsageFigures>,
        /// The class of the failed run that ended it, if one did: `stop` (a limit no
        /// wait ends), `crash` or `outage` (retries spent).
        #[serde(default, skip_serializing_if = "Option::is_none")]
        failure: Option<FailureClass>,
    },
}

/// A loop's tokens and cost so far: what `pagent parallel` shows per task and in total.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageFigures {
    pub tokens: u64,
    pub cost_microusd: u64,
    /// False while no cost was reported or priced: `cost_microusd` means nothing then.
    pub cost_known: bool,
    /// How many usage records the agent gave (0: it reports none).
    pub reports: u64,
}

impl UsageFigures {
    pub fn of(usage: &Usage) -> UsageFigures {
        UsageFigures {
            tokens: usage.tokens.total(),
            cost_microusd: usage.cost_microusd,
            cost_known: usage.cost_known(),
            reports: usage.reports,
        }
    }
}

/// How a `pagent loop` ended, in the words it prints.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum Ending {
    #[serde(rename = "complete")]
    Complete,
    #[serde(rename = "gave up")]
    GaveUp,
    /// Ctrl-C or a signal: the state is saved.
    #[serde(rename = "interrupted")]
    Interrupted,
    /// Ended elsewhere: cancelled, replaced, or its state removed.
    #[serde(rename = "stopped")]
    Stopped,
    #[serde(rename = "error")]
    Error,
}

impl Ending {
    pub fn as_str(self) -> &'static str {
        match self {
            Ending::Complete => "complete",
            Ending::GaveUp => "gave up",
            Ending::Interrupted => "interrupted",
            Ending::Stopped => "stopped",
            Ending::Error => "error",
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::{Value, json};

    use super::*;

    /// The wire form scripts (and `pagent parallel`) read: the keys and words as before
    /// the type existed, and every event reads back as itself.
    #[test]
    fn events_keep_their_wire_form_and_read_back() {
        let cases = [
            (
                LoopEvent::IterationFinished {
                    stage: "ralph".into(),
                    iteration: 2,
                    outcome: Action::GaveUp,
                    detail: "d".into(),
                    elapsed_secs: 3,
                    usage: None,
                },
                json!({"event": "iteration_finished", "stage": "ralph", "iteration": 2, "outcome": "gave_up", "detail": "d", "elapsed_secs": 3}),
            ),
            (
                LoopEvent::Tool {
                    name: "Bash".into(),
                    summary: None,
                },
                json!({"event": "tool", "name": "Bash", "summary": null}),
            ),
            (
                LoopEvent::Finished {
                    outcome: Ending::GaveUp,
                    status: Some(Status::GaveUp),
                    iterations: Some(4),
                    reason: "r".into(),
                    elapsed_secs: 9,
                    usage: None,
                    failure: None,
                },
                json!({"event": "finished", "outcome": "gave up", "status": "gave_up", "iterations": 4, "reason": "r", "elapsed_secs": 9}),
            ),
            (
                LoopEvent::Finished {
                    outcome: Ending::Error,
                    status: None,
                    iterations: None,
                    reason: "r".into(),
                    elapsed_secs: 0,
                    usage: None,
                    failure: None,
                },
                json!({"event": "finished", "outcome": "error", "status": null, "iterations": null, "reason": "r", "elapsed_secs": 0}),
            ),
        ];
        for (event, wire) in cases {
            assert_eq!(serde_json::to_value(&event).unwrap(), wire);
            let back: LoopEvent = serde_json::from_value(wire).unwrap();
            assert_eq!(back, event);
        }
        for ending in [
            Ending::Complete,
            Ending::GaveUp,
            Ending::Interrupted,
            Ending::Stopped,
            Ending::Error,
        ] {
            assert_eq!(
                serde_json::to_value(ending).unwrap(),
                Value::from(ending.as_str())
            );
        }
    }
}

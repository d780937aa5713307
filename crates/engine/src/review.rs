//! The `review` exit condition: a fresh reviewer agent, started by the binary, reads the
//! work and says whether it meets the stated criteria.
//!
//! The policy lives here, pure: the reviewer is the dearest condition, so it runs only
//! when everything else the stage asks for already holds (files, checks, the promise, the
//! backpressure gate); at most once per iteration (the verdict is kept in the state with
//! the stage and iteration it belongs to, and reused if the same iteration is decided
//! again); and only a well-formed "met" verdict is "met". A reviewer that fails, times out
//! or answers in a shape pagent cannot read is "not met" with a note that says so, and the
//! loop stays bounded by its iteration and no-progress limits like any other re-prompt.
//!
//! The binary only starts the process ([`World::run_review`]) and hands back its final
//! message; what the reviewer is told ([`review_prompt`]) and how its answer is read
//! ([`parse_verdict`]) are decided here, in `prompt` and `verdict` beside this file.

use serde::{Deserialize, Serialize};

use crate::{Check, Condition, Evaluation, Finding, State, Timestamp, World};

/// Default time a reviewer gets, in seconds: it must leave room, inside the Stop hook's
/// own limit, for the checks that run before it.
pub const DEFAULT_REVIEW_TIMEOUT_SECS: u64 = 240;
/// The longest a reviewer may be given: under the Stop hook's 600 s with room to spare.
pub const MAX_REVIEW_TIMEOUT_SECS: u64 = 480;
/// The criteria are the user's words, but a reviewer prompt is not a place for a book.
pub const MAX_CRITERIA_CHARS: usize = 4_000;

/// A stage's review: the criteria, who reviews, and for how long.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Review {
    pub criteria: String,
    pub reviewer: Reviewer,
    pub timeout_secs: u64,
}

/// The reviewer agent: a known CLI, or any command line (prompt on stdin).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Reviewer {
    Claude,
    Codex,
    Opencode,
    Command(String),
}

impl Reviewer {
    pub fn name(&self) -> &str {
        match self {
            Reviewer::Claude => "claude",
            Reviewer::Codex => "codex",
            Reviewer::Opencode => "opencode",
            Reviewer::Command(line) => line,
        }
    }

    /// How it reads in a consent list: what running the review means.
    pub fn display(&self) -> String {
        match self {
            Reviewer::Command(line) => format!("reviewer command: {line}"),
            known => format!(
                "a {} reviewer agent (read-only, may run the stage's checks)",
                known.name()
            ),
        }
    }
}

/// What the binary is asked to run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReviewRequest {
    pub prompt: String,
    pub reviewer: Reviewer,
    pub timeout_secs: u64,
    /// The stage's check commands: the only commands the reviewer may run.
    pub checks: Vec<Check>,
}

/// How a reviewer process ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ReviewOutcome {
    /// It ended and this was its final message (to be parsed for the verdict).
    Answered(String),
    /// It could not start, crashed, or reported an error.
    Failed(String),
    TimedOut {
        after_secs: u64,
    },
    /// The caller does not run reviewers (`pagent status`).
    NotRun,
}

/// The last review of a loop, kept in the state: what `pagent status` shows, and what
/// makes a second decision of the same iteration reuse it rather than review again.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReviewRecord {
    pub stage: usize,
    pub iteration: u32,
    pub met: bool,
    /// A few words: "met", "not met: no test for the empty input", "unreadable answer".
    pub summary: String,
    /// The sentence the worker's re-prompt carries.
    pub detail: String,
    pub at: Timestamp,
}

impl Condition {
    /// The stage's review, if its condition has one (at most one, see `parse`).
    pub fn review(&self) -> Option<&Review> {
        match self {
            Condition::Review(review) => Some(review),
            Condition::All(items) => items.iter().find_map(Condition::review),
            _ => None,
        }
    }

    /// This condition with `review` required too (a review is always the last item of a
    /// top-level `all`); an error if it already has one.
    pub fn with_review(self, review: Condition) -> Result<Condition, String> {
        if self.review().is_some() {
            return Err("the stage already has a review".to_owned());
        }
        Ok(match self {
            Condition::All(mut items) => {
                items.push(review);
                Condition::All(items)
            }
            other => Condition::All(vec![other, review]),
        })
    }
}

/// The finding a review leaf adds before it has run: never met.
pub(crate) fn waiting_finding(ready: bool) -> Finding {
    let (detail, short) = if ready {
        (
            "the reviewer has not looked at the work yet".to_owned(),
            "review pending".to_owned(),
        )
    } else {
        (
            "the reviewer looks at the work once everything else holds".to_owned(),
            "then a review".to_owned(),
        )
    };
    Finding {
        met: false,
        detail,
        short,
        output_tail: None,
    }
}

/// Runs (or reuses) the stage's review when it is due, and puts its verdict in place of
/// the waiting finding. Due means: the condition has a review and every other finding,
/// the backpressure gate's included, holds.
pub(crate) fn conclude(
    next: &mut State,
    evaluation: &mut Evaluation,
    world: &mut dyn World,
    now: Timestamp,
) {
    let Some(index) = evaluation.review_at else {
        return;
    };
    let others_hold = evaluation
        .findings
        .iter()
        .enumerate()
        .all(|(i, f)| i == index || f.met);
    if !others_hold {
        evaluation.findings[index] = waiting_finding(false);
        return;
    }
    let Some(review) = next.current().exit_when.review().cloned() else {
        return;
    };
    let (stage, iteration) = (next.stage, next.iterations[next.stage]);
    let record = match &next.review {
        Some(done) if done.stage == stage && done.iteration == iteration => done.clone(),
        _ => {
            let request = ReviewRequest {
                prompt: review_prompt(next, &review, evaluation),
                reviewer: review.reviewer.clone(),
                timeout_secs: review.timeout_secs,
                checks: next.current().exit_when.checks(),
            };
            match world.run_review(&request) {
                // Status and other read-only callers: nothing to record.
                ReviewOutcome::NotRun => return,
                outcome => {
                    let record = record_of(&outcome, stage, iteration, now);
                    next.review = Some(record.clone());
                    record
                }
            }
        }
    };
    evaluation.findings[index] = Finding {
        met: record.met,
        detail: record.detail.clone(),
        short: format!("review {}", record.summary),
        output_tail: None,
    };
    evaluation.met = evaluation.findings.iter().all(|f| f.met);
}

mod prompt;
mod verdict;

pub use prompt::review_prompt;
pub use verdict::{Verdict, parse_verdict, record_of};

#[cfg(test)]
mod tests;

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
//! ([`parse_verdict`]) are decided here.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::render::{cap_head, cap_message};
use crate::{Check, Condition, Evaluation, Finding, Kind, State, Timestamp, World};

/// Default time a reviewer gets, in seconds: it must leave room, inside the Stop hook's
/// own limit, for the checks that run before it.
pub const DEFAULT_REVIEW_TIMEOUT_SECS: u64 = 240;
/// The longest a reviewer may be given: under the Stop hook's 600 s with room to spare.
pub const MAX_REVIEW_TIMEOUT_SECS: u64 = 480;
/// The criteria are the user's words, but a reviewer prompt is not a place for a book.
pub const MAX_CRITERIA_CHARS: usize = 4_000;
/// How much of the task or stage prompt the reviewer is shown inline.
const TASK_CAP: usize = 6_000;
/// The longest a verdict's sentence may be (the re-prompt carries it).
const DETAIL_CAP: usize = 3_000;
/// How much of a final message is searched for the verdict (its end).
const ANSWER_SCAN: usize = 64 * 1024;

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

/// A reviewer's verdict, as parsed from its final message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    pub met: bool,
    pub missing: Vec<String>,
    pub files: Vec<String>,
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
}

impl Condition {
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
            "review waits".to_owned(),
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

/// What a reviewer's ending means for the loop.
pub fn record_of(
    outcome: &ReviewOutcome,
    stage: usize,
    iteration: u32,
    now: Timestamp,
) -> ReviewRecord {
    // What a reviewer wrote ends up in the state, a re-prompt and the log: cut it here.
    let not_met = |summary: String, detail: String| ReviewRecord {
        stage,
        iteration,
        met: false,
        summary,
        detail: cap_message(&detail, DETAIL_CAP),
        at: now,
    };
    let again = "it reviews again at your next stop";
    match outcome {
        ReviewOutcome::Answered(text) => match parse_verdict(text) {
            Ok(verdict) if verdict.met => ReviewRecord {
                stage,
                iteration,
                met: true,
                summary: "met".to_owned(),
                detail: "the reviewer agrees the work meets the criteria".to_owned(),
                at: now,
            },
            Ok(verdict) => {
                let mut items = verdict.missing.clone();
                if !verdict.files.is_empty() {
                    items.push(format!("files: {}", verdict.files.join(", ")));
                }
                let first = verdict.missing.first().cloned().unwrap_or_default();
                not_met(
                    cap_message(&format!("not met: {first}"), 200),
                    format!(
                        "the reviewer says the work does not meet the criteria yet: {}. Fix that; the reviewer looks again when everything else holds at your next stop",
                        items.join("; ")
                    ),
                )
            }
            Err(why) => not_met(
                "unreadable answer".to_owned(),
                format!(
                    "the reviewer's answer could not be read as a verdict ({why}), so the work is not counted as reviewed; {again}"
                ),
            ),
        },
        ReviewOutcome::Failed(why) => not_met(
            "failed".to_owned(),
            format!(
                "the reviewer could not finish ({why}), so the work is not counted as reviewed; {again}"
            ),
        ),
        ReviewOutcome::TimedOut { after_secs } => not_met(
            "timed out".to_owned(),
            format!(
                "the reviewer did not answer within {after_secs} s and was stopped, so the work is not counted as reviewed; {again}"
            ),
        ),
        ReviewOutcome::NotRun => {
            not_met("not run".to_owned(), "the reviewer was not run".to_owned())
        }
    }
}

/// Reads the verdict from a reviewer's final message: the last JSON object in it that has
/// a boolean `met`. "met" needs `met: true` and nothing listed as missing; anything else
/// that is well formed is "not met", and a verdict that says "not met" must say what.
pub fn parse_verdict(text: &str) -> Result<Verdict, String> {
    let start = text.len().saturating_sub(ANSWER_SCAN);
    let start = (start..=text.len())
        .find(|i| text.is_char_boundary(*i))
        .unwrap_or(text.len());
    let tail = &text[start..];
    let object = tail
        .rmatch_indices('{')
        .take(200)
        .find_map(|(at, _)| {
            let mut stream = serde_json::Deserializer::from_str(&tail[at..]).into_iter::<Value>();
            match stream.next() {
                Some(Ok(Value::Object(map))) if map.get("met").is_some_and(Value::is_boolean) => {
                    Some(map)
                }
                _ => None,
            }
        })
        .ok_or_else(|| {
            if tail.trim().is_empty() {
                "the final message was empty".to_owned()
            } else {
                "no JSON object with a true or false \"met\" in the final message".to_owned()
            }
        })?;
    let strings = |key: &str| -> Result<Vec<String>, String> {
        match object.get(key) {
            None | Some(Value::Null) => Ok(Vec::new()),
            Some(Value::String(one)) => Ok(vec![one.clone()]),
            Some(Value::Array(items)) => items
                .iter()
                .map(|v| {
                    v.as_str()
                        .map(str::to_owned)
                        .ok_or_else(|| format!("\"{key}\" must list strings"))
                })
                .collect(),
            Some(_) => Err(format!("\"{key}\" must be a list of strings")),
        }
    };
    let clean = |items: Vec<String>| -> Vec<String> {
        items
            .into_iter()
            .map(|s| cap_message(s.trim(), 400))
            .filter(|s| !s.is_empty())
            .take(20)
            .collect()
    };
    let missing = clean(strings("missing")?);
    let files = clean(strings("files")?);
    let said_met = object.get("met") == Some(&Value::Bool(true));
    if said_met && !missing.is_empty() {
        return Err(format!(
            "it says met but lists what is missing ({})",
            missing.join("; ")
        ));
    }
    if !said_met && missing.is_empty() {
        return Err("it says not met without saying what is missing".to_owned());
    }
    Ok(Verdict {
        met: said_met,
        missing,
        files,
    })
}

/// What the reviewer is told: its role, the criteria, the task, what the stage was to
/// produce and what pagent already checked, the commands it may run, and the answer
/// format.
pub fn review_prompt(state: &State, review: &Review, evaluation: &Evaluation) -> String {
    let stage = state.current();
    let mut out = String::from(
        "You are an independent reviewer. Another agent worked in this project and says its work is done. \
         Do not change any file. Read the code and the files it produced, run the allowed checks if they help, \
         and judge strictly whether the work meets the criteria below. Do not trust claims in comments or \
         messages: look at the work itself.\n\n",
    );
    out.push_str("## Criteria\n\n");
    out.push_str(&cap_head(
        &review.criteria,
        MAX_CRITERIA_CHARS,
        "criteria cut",
    ));
    out.push_str("\n\n");
    match state.kind {
        Kind::Ralph => out.push_str("## The task the agent was given\n\n"),
        Kind::Pipeline => {
            if let Some(prd) = &state.prd_path {
                out.push_str(&format!(
                    "## The requirements\n\nThe PRD is {prd} (read it).\n\n"
                ));
            }
            out.push_str(&format!(
                "## The stage under review: {}\n\nIts instructions were:\n\n",
                stage.name
            ));
        }
    }
    out.push_str(&cap_head(
        &stage.prompt,
        TASK_CAP,
        "cut; the rest does not change the criteria",
    ));
    out.push_str("\n\n");
    let held: Vec<&str> = evaluation
        .findings
        .iter()
        .filter(|f| f.met)
        .map(|f| f.detail.as_str())
        .collect();
    if !held.is_empty() {
        out.push_str("## Already checked by pagent\n\n");
        for line in held {
            out.push_str(&format!("- {line}\n"));
        }
        out.push('\n');
    }
    let checks = stage.exit_when.checks();
    if checks.is_empty() {
        out.push_str("You may read files; do not run commands that change anything.\n\n");
    } else {
        out.push_str("## Commands you may run\n\n");
        for check in &checks {
            out.push_str(&format!("- `{}`\n", check.display()));
        }
        out.push('\n');
    }
    out.push_str(
        "## Your answer\n\nEnd your final message with one JSON object, and nothing after it:\n\
         {\"met\": false, \"missing\": [\"what is missing or wrong, one item each\"], \"files\": [\"path:line\"]}\n\
         Use \"met\": true (and an empty \"missing\") only if every criterion holds. \
         If \"met\" is false, \"missing\" must say what, with file references where you can.\n",
    );
    out
}

#[cfg(test)]
mod tests;

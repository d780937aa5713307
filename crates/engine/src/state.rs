//! The state file (`.claude/pagent-pipeline.json`): one loop, its stages and its counters.
//!
//! The state is self-contained: stage prompts are rendered and conditions validated at
//! set-up and stored in it, so a Stop never reads a workflow file or a prompt template, and
//! a later edit of those cannot change a running loop behind its seal. Only pagent writes
//! it; [`State::from_json`] re-checks the invariants the engine relies on, so a corrupt or
//! hand-edited file is reported, never trusted.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::backpressure::{BackpressureConfig, FailedCheck};
use crate::budget::Budget;
use crate::pause::Pause;
use crate::usage::Usage;
use crate::{Condition, DEFAULT_MAX_ITERATIONS, DEFAULT_NO_PROGRESS_LIMIT, Timestamp, Workflow};

pub const STATE_VERSION: u32 = 1;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Kind {
    Pipeline,
    Ralph,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Status {
    Active,
    Complete,
    Cancelled,
    GaveUp,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Active => "active",
            Status::Complete => "complete",
            Status::Cancelled => "cancelled",
            Status::GaveUp => "gave_up",
        }
    }

    /// The status as a person reads it: `gave up`, not `gave_up`.
    pub fn as_words(self) -> &'static str {
        match self {
            Status::GaveUp => "gave up",
            other => other.as_str(),
        }
    }
}

/// Who advances the loop: the Stop hook inside one session, or `pagent loop` from outside.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Driver {
    #[default]
    Hook,
    Loop,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Stage {
    pub name: String,
    /// Rendered: placeholders already substituted.
    pub prompt: String,
    pub exit_when: Condition,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_iterations: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    pub version: u32,
    pub kind: Kind,
    pub workflow: String,
    pub status: Status,
    /// Index of the current stage in `stages` (0-based).
    pub stage: usize,
    /// The owning Claude Code session, or `None` until the first Stop claims it.
    pub session_id: Option<String>,
    pub started_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ended_at: Option<Timestamp>,
    /// Why a finished loop ended, in words for the user.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub end_reason: Option<String>,
    /// The PRD as the user named it, and its path relative to the project (or absolute).
    pub prd_file: Option<String>,
    pub prd_path: Option<String>,
    /// How many stages to run before completing (at most `stages.len()`).
    pub max_stages: usize,
    /// Iterations allowed per stage unless the stage sets its own.
    pub max_iterations: u32,
    /// Stops in a row with an unchanged working tree before giving up; 0 disables.
    pub no_progress_limit: u32,
    /// Iterations used per stage, parallel to `stages`.
    pub iterations: Vec<u32>,
    pub fingerprint: Option<String>,
    pub no_progress_count: u32,
    /// What the last evaluation found missing, for `pagent status`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_feedback: Option<String>,
    pub stages: Vec<Stage>,
    #[serde(default)]
    pub driver: Driver,
    /// `pagent loop` only: the prompt of the next iteration, kept so a run that crashed or
    /// was interrupted resumes exactly where it stopped.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pending_prompt: Option<String>,
    /// PostToolUse checks chosen at set-up (project config, then the workflow's).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub backpressure: Option<BackpressureConfig>,
    /// Set once at set-up: tells one loop from the next, so a runner notices at once
    /// when its loop was replaced (`--force`) rather than merely advanced.
    #[serde(default)]
    pub loop_id: String,
    /// Bumped by every write: a decision is applied only to the state it was made on, and
    /// an older copy of a sealed file (restored from a backup, a `git stash`) is refused
    /// because the user's folder remembers the newest generation written.
    #[serde(default)]
    pub generation: u64,
    /// Set while the user has taken the session over (they typed a message during the
    /// loop): stops are allowed and count nothing until `pagent resume`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paused: Option<Pause>,
    /// How many times in a row the Stop hook continued the session's current turn with
    /// no tool call between: Claude Code ends a turn past its cap (see `block_cap.rs`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub continuations: u32,
    /// The next re-prompt carries the full stage prompt again: the conversation was
    /// compacted since the model last read it.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub full_prompt_due: bool,
    /// Files edited in this loop whose latest backpressure check failed, by path relative
    /// to the project: while any is listed, the loop does not complete and a stage does
    /// not advance (unless the workflow turns the gate off).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub failing_checks: BTreeMap<String, FailedCheck>,
    /// The latest reviewer verdict (a `review` condition), with the stage and iteration
    /// it belongs to: shown by `pagent status`, and reused if that iteration is decided
    /// again, so a reviewer runs at most once per iteration.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<crate::review::ReviewRecord>,
    /// The story the pending prompt names (a stories stage): the one a `STORY DONE`
    /// promise claims, so a claim can never tick another (see `stories/stage.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub story: Option<String>,
    /// Time, token and cost limits chosen at set-up (see `budget.rs`).
    #[serde(default, skip_serializing_if = "Budget::is_empty")]
    pub budget: Budget,
    /// Time, tokens and cost used so far (see `usage.rs`).
    #[serde(default)]
    pub usage: Usage,
    /// Set while the loop waits for the agent's usage limit to reset (see `limit.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub limit_wait: Option<crate::limit::LimitWait>,
    /// `pagent loop`: the agent's last failed run since the last iteration ended (an
    /// outage or a crash being retried, or the one that stopped the runner), said by
    /// `pagent status` and the dashboard (see `failure.rs`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_failure: Option<crate::failure::LastFailure>,
    /// Set by the UserPromptExpansion hook that set this loop up from a slash command: a
    /// digest of its text, so the command's `!` line hands the model the first prompt
    /// instead of setting the loop up again (and clears it).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub slash_handoff: Option<String>,
    /// One line for the loop's session, shown at its next hook call and cleared: what the
    /// user did to the loop from elsewhere (a terminal, the dashboard).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_notice: Option<String>,
    /// `pagent loop` only: the repository's own git configuration when the loop started,
    /// as a digest of each key's values. A git process the runner starts after an agent
    /// ran (a push, `gh`, a signed merge) is started only while the configuration is
    /// still this one: an agent can write `.git/config`, and git runs commands from it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub git_config: Option<BTreeMap<String, String>>,
    /// `pagent loop --sandbox`: the loop's agent runs contained (bubblewrap; see
    /// docs/security.md), said by `pagent status` and the dashboard.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub contained: bool,
    /// HMAC of everything else with the user's secret (see `seal.rs`).
    pub seal: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum StateError {
    /// The parser's words are in the message, so the error has no source of its own (a
    /// report would say them twice).
    #[error("the state file is not valid JSON for pagent: {0}")]
    Parse(serde_json::Error),
    #[error("the state file has version {0}; this pagent reads version {STATE_VERSION}")]
    Version(u32),
    #[error("the state file is inconsistent: {0}")]
    Inconsistent(String),
}

/// Limits chosen at set-up (command-line flags over workflow values over defaults).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SetupOptions {
    pub max_stages: Option<usize>,
    pub max_iterations: Option<u32>,
    pub no_progress_limit: Option<u32>,
    pub session_id: Option<String>,
    pub prd_file: Option<String>,
    pub prd_path: Option<String>,
    pub driver: Driver,
    pub backpressure: Option<BackpressureConfig>,
    pub budget: Budget,
}

impl State {
    /// A new active pipeline from a validated workflow and its rendered prompts (one per
    /// stage, in order). The first stage starts at iteration 1: its prompt is delivered by
    /// the set-up command itself.
    pub fn new_pipeline(
        workflow: &Workflow,
        prompts: Vec<String>,
        options: SetupOptions,
        fingerprint: Option<String>,
        now: Timestamp,
    ) -> State {
        let stages: Vec<Stage> = workflow
            .stages
            .iter()
            .zip(prompts)
            .map(|(spec, prompt)| Stage {
                name: spec.name.clone(),
                prompt,
                exit_when: spec.exit_when.clone(),
                max_iterations: spec.max_iterations,
            })
            .collect();
        // The flags' limits over the workflow's (the defaults are `new`'s).
        let mut options = options;
        options.max_iterations = options.max_iterations.or(workflow.max_iterations);
        options.no_progress_limit = options.no_progress_limit.or(workflow.no_progress_limit);
        // The workflow's own checks apply over the project's configuration.
        options.budget = options.budget.over(workflow.budget);
        if let Some(own) = &workflow.backpressure {
            options.backpressure = Some(
                options
                    .backpressure
                    .take()
                    .unwrap_or_default()
                    .overlaid(own),
            );
        }
        Self::new(
            (Kind::Pipeline, workflow.name.clone(), stages),
            options,
            fingerprint,
            now,
        )
    }

    /// A new active ralph loop: one stage whose condition is the promise.
    pub fn new_ralph(
        prompt: String,
        promise: String,
        options: SetupOptions,
        fingerprint: Option<String>,
        now: Timestamp,
    ) -> State {
        let stage = Stage {
            name: "ralph".to_owned(),
            prompt,
            exit_when: Condition::Promise(promise),
            max_iterations: None,
        };
        Self::new(
            (Kind::Ralph, "ralph".to_owned(), vec![stage]),
            options,
            fingerprint,
            now,
        )
    }

    /// A new active loop of `kind` running `workflow`'s `stages`, its limits from
    /// `options` (the defaults where they set none).
    fn new(
        (kind, workflow, stages): (Kind, String, Vec<Stage>),
        options: SetupOptions,
        fingerprint: Option<String>,
        now: Timestamp,
    ) -> State {
        let max_iterations = options.max_iterations.unwrap_or(DEFAULT_MAX_ITERATIONS);
        let no_progress_limit = options
            .no_progress_limit
            .unwrap_or(DEFAULT_NO_PROGRESS_LIMIT);
        let count = stages.len();
        let mut iterations = vec![0; count];
        if let Some(first) = iterations.first_mut() {
            *first = 1;
        }
        State {
            version: STATE_VERSION,
            kind,
            workflow,
            status: Status::Active,
            stage: 0,
            session_id: options.session_id,
            started_at: now,
            updated_at: now,
            ended_at: None,
            end_reason: None,
            prd_file: options.prd_file,
            prd_path: options.prd_path,
            max_stages: options
                .max_stages
                .map_or(count, |m| m.clamp(1, count.max(1))),
            max_iterations,
            no_progress_limit,
            iterations,
            fingerprint,
            no_progress_count: 0,
            last_feedback: None,
            stages,
            driver: options.driver,
            pending_prompt: None,
            backpressure: options.backpressure,
            loop_id: String::new(),
            generation: 0,
            paused: None,
            continuations: 0,
            full_prompt_due: false,
            failing_checks: BTreeMap::new(),
            review: None,
            story: None,
            budget: options.budget,
            usage: Usage::default(),
            limit_wait: None,
            last_failure: None,
            slash_handoff: None,
            session_notice: None,
            git_config: None,
            contained: false,
            seal: None,
        }
    }

    /// Parses and checks a state file's bytes.
    pub fn from_json(bytes: &[u8]) -> Result<State, StateError> {
        let state: State = serde_json::from_slice(bytes).map_err(StateError::Parse)?;
        if state.version != STATE_VERSION {
            return Err(StateError::Version(state.version));
        }
        let inconsistent = |why: String| Err(StateError::Inconsistent(why));
        if state.stages.is_empty() {
            return inconsistent("it has no stages".into());
        }
        if state.stage >= state.stages.len() {
            return inconsistent(format!(
                "stage {} does not exist (there are {})",
                state.stage,
                state.stages.len()
            ));
        }
        if state.iterations.len() != state.stages.len() {
            return inconsistent(format!(
                "{} iteration counters for {} stages",
                state.iterations.len(),
                state.stages.len()
            ));
        }
        if state.max_iterations == 0
            || state.max_stages == 0
            || state.max_stages > state.stages.len()
        {
            return inconsistent("max_iterations and max_stages must be at least 1 (and max_stages at most the number of stages)".into());
        }
        if !state.budget.is_valid() {
            return inconsistent("a budget is 0 or beyond what set-up accepts".into());
        }
        Ok(state)
    }

    pub fn to_json_pretty(&self) -> String {
        // Serialising plain data with string keys cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    pub fn is_active(&self) -> bool {
        self.status == Status::Active
    }

    pub fn current(&self) -> &Stage {
        &self.stages[self.stage]
    }

    /// The iteration budget of stage `index`.
    pub fn stage_limit(&self, index: usize) -> u32 {
        self.stages
            .get(index)
            .and_then(|s| s.max_iterations)
            .unwrap_or(self.max_iterations)
    }

    /// Total iterations across stages.
    pub fn total_iterations(&self) -> u32 {
        self.iterations.iter().sum()
    }

    /// Whether a failed backpressure check of an edited file holds the loop back.
    pub fn checks_gate(&self) -> bool {
        self.backpressure.as_ref().is_none_or(|b| b.gate)
    }

    /// Marks the loop finished.
    pub fn finish(&mut self, status: Status, reason: String, now: Timestamp) {
        self.status = status;
        self.end_reason = Some(reason);
        self.ended_at = Some(now);
        self.updated_at = now;
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests;

//! The report `pagent status` prints: the loop as it stands now, stage by stage, each
//! condition's progress measured on the disk (files and folders; commands are not run,
//! their last result comes from the event log), with usage, budget and the last review,
//! and for a `pagent loop` whether a runner drives it now (its runner lock held) or it
//! was interrupted. `human` prints it for a person; `--json` serialises it as it is.

use pagent_engine::{Action, Driver, Kind, State, Status, Timestamp};
use serde::Serialize;

use crate::io::now;
use crate::store::eventlog::read_events;
use crate::store::project::Project;
use crate::store::user::UserDir;
use crate::world::FsWorld;
use crate::world::driven::Driven;

mod human;
mod limit;

pub use human::print_human;
pub use limit::after_the_wait;

#[derive(Debug, Serialize)]
pub struct Report {
    kind: Kind,
    workflow: String,
    status: Status,
    stage: String,
    stage_index: usize,
    stages: Vec<StageReport>,
    iterations: u32,
    elapsed_secs: u64,
    started_at: String,
    updated_at: String,
    end_reason: Option<String>,
    session_id: Option<String>,
    /// `hook` (the Stop hook inside a session) or `loop` (`pagent loop`).
    driver: Driver,
    prd_file: Option<String>,
    no_progress_count: u32,
    no_progress_limit: u32,
    last_feedback: Option<String>,
    /// False when the state was not set up by this user for this project: pagent ignores it.
    sealed: bool,
    /// The loop's most recent backpressure checks (PostToolUse), oldest first.
    checks: Vec<CheckReport>,
    /// True while the loop is paused: the user took it over, or something other than its
    /// driver stopped it (Claude Code's cap, the session was quit).
    paused: bool,
    /// Completes "paused because ...".
    paused_because: Option<String>,
    /// What to type to go on with a paused loop, and to end it, as its driver takes it.
    go_on: Option<String>,
    /// Edited files whose latest check fails: the loop does not complete meanwhile.
    failing_checks: Vec<String>,
    /// Tokens and cost so far, and where the figures came from.
    usage: UsageReport,
    /// The loop's time, token and cost limits (empty when none).
    budget: pagent_engine::Budget,
    /// The latest reviewer verdict of a `review` condition.
    review: Option<ReviewReport>,
    /// Time spent waiting for usage limits to reset (not in `elapsed_secs`, the time
    /// worked), and the wait under way.
    waited_secs: u64,
    limit_wait: Option<limit::LimitReport>,
    /// `pagent loop`: the agent's last failed run since an iteration last ended (an outage
    /// or a crash retried, or the one that stopped the runner).
    last_failure: Option<FailureReport>,
    /// An active loop driven by `pagent loop`: whether a runner drives it now (`false`
    /// after Ctrl-C or a crash: `pagent loop` resumes it); `None` for other loops, or
    /// when it cannot be told.
    runner_running: Option<bool>,
    /// What the project's logs take on disk, once measured ([`Report::measure_logs`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    logs: Option<LogsReport>,
    /// `pagent loop --sandbox`: the loop's agent runs contained (docs/security.md).
    contained: bool,
    /// The project, for the hint that resumes an interrupted loop.
    #[serde(skip)]
    root: String,
}

/// What a project's logs take: the run and review logs (kept under `cap_bytes`) and the
/// event log (two halves of at most 8 MiB).
#[derive(Debug, Serialize)]
struct LogsReport {
    bytes: u64,
    runs_bytes: u64,
    run_files: usize,
    events_bytes: u64,
    cap_bytes: u64,
}

#[derive(Debug, Serialize)]
struct UsageReport {
    tokens: pagent_engine::Tokens,
    total_tokens: u64,
    /// Whole micro-dollars, exact; `cost_usd` is the same for reading.
    cost_microusd: u64,
    cost_usd: f64,
    cost_source: String,
    /// How many usage records the agent gave (0: none, so tokens are unknown).
    reports: u64,
}

#[derive(Debug, Serialize)]
struct ReviewReport {
    stage: String,
    iteration: u32,
    met: bool,
    summary: String,
    detail: String,
    at: String,
}

#[derive(Debug, Serialize)]
struct FailureReport {
    /// `outage` or `crash` (`usage_limit` under `--no-limit-wait`).
    class: pagent_engine::failure::FailureClass,
    at: Timestamp,
    /// When the next run starts; none when the runner stopped.
    retry_at: Option<Timestamp>,
    /// In words, as `pagent loop` said it (how long ago, first).
    text: String,
}

#[derive(Debug, Serialize)]
struct CheckReport {
    ts: Timestamp,
    detail: String,
    ms: Option<u64>,
}

/// How many of the latest backpressure checks status shows.
const RECENT_CHECKS: usize = 5;

#[derive(Debug, Serialize)]
struct StageReport {
    name: String,
    /// done, current, waiting, skipped (past max_stages), or the loop's end status.
    state: &'static str,
    iterations: u32,
    max_iterations: u32,
    met: bool,
    progress: String,
}

/// One stage's line: where it stands and what its exit condition says now.
fn stage_report(
    state: &State,
    i: usize,
    stage: &pagent_engine::Stage,
    world: &mut FsWorld,
) -> StageReport {
    let evaluation = stage.exit_when.evaluate(world);
    let label = match (i.cmp(&state.stage), state.status) {
        _ if i >= state.max_stages => "skipped",
        (std::cmp::Ordering::Less, _) | (std::cmp::Ordering::Equal, Status::Complete) => "done",
        (std::cmp::Ordering::Equal, Status::Active) => "current",
        (std::cmp::Ordering::Equal, Status::GaveUp) => "gave_up",
        (std::cmp::Ordering::Equal, Status::Cancelled) => "cancelled",
        (std::cmp::Ordering::Greater, _) => "waiting",
    };
    // Status reads no transcript, runs no command and starts no reviewer: for a
    // condition with any of those, the last stop's finding says what is known.
    let unseen = stage.exit_when.runs_commands()
        || stage.exit_when.promise().is_some()
        || stage.exit_when.review().is_some();
    let progress = match (label, stage.exit_when.promise()) {
        ("done", Some(promise)) if !evaluation.met => format!("promise {promise} made"),
        ("current", _) if unseen => state
            .last_feedback
            .clone()
            .unwrap_or_else(|| evaluation.summary()),
        _ => evaluation.summary(),
    };
    StageReport {
        name: stage.name.clone(),
        state: label,
        iterations: state.iterations[i],
        max_iterations: state.stage_limit(i),
        met: evaluation.met,
        progress,
    }
}

pub fn build(project: &Project, user_dir: &UserDir, state: &State, sealed: bool) -> Report {
    let mut world = FsWorld::read_only(project);
    let stages = state
        .stages
        .iter()
        .enumerate()
        .map(|(i, stage)| stage_report(state, i, stage, &mut world))
        .collect();
    let end = state.ended_at.unwrap_or_else(now);
    // The loop's own clock (forward steps only), or the wall clock if that says more (a
    // cancel ends a loop without ticking its clock); waiting for a usage limit is neither.
    let waited = pagent_engine::budget::waited_secs(state, end);
    let elapsed = pagent_engine::budget::worked_secs(state, end)
        .max(end.since(state.started_at).saturating_sub(waited));
    let usage = &state.usage;
    let runner_running = (state.driver == Driver::Loop && state.is_active())
        .then(|| project.runner_is_running())
        .flatten();
    #[allow(clippy::cast_precision_loss)]
    let cost_usd = usage.cost_microusd as f64 / 1e6;
    Report {
        kind: state.kind,
        workflow: state.workflow.clone(),
        status: state.status,
        stage: state.current().name.clone(),
        stage_index: state.stage,
        stages,
        iterations: state.total_iterations(),
        elapsed_secs: elapsed,
        started_at: state.started_at.to_string(),
        updated_at: state.updated_at.to_string(),
        end_reason: state.end_reason.clone(),
        session_id: state.session_id.clone(),
        driver: state.driver,
        prd_file: state.prd_file.clone(),
        no_progress_count: state.no_progress_count,
        no_progress_limit: state.no_progress_limit,
        last_feedback: state.last_feedback.clone(),
        sealed,
        checks: recent_checks(project, state),
        paused: state.paused.is_some(),
        paused_because: state.paused.as_ref().map(|p| p.why.clone()),
        go_on: state
            .paused
            .as_ref()
            .map(|_| Driven::of(project, user_dir, state).go_on(state, &project.root)),
        failing_checks: state.failing_checks.keys().cloned().collect(),
        usage: UsageReport {
            tokens: usage.tokens,
            total_tokens: usage.tokens.total(),
            cost_microusd: usage.cost_microusd,
            cost_usd,
            cost_source: usage.cost_source(),
            reports: usage.reports,
        },
        budget: state.budget,
        review: state.review.as_ref().map(|r| ReviewReport {
            stage: state
                .stages
                .get(r.stage)
                .map_or_else(String::new, |s| s.name.clone()),
            iteration: r.iteration,
            met: r.met,
            summary: r.summary.clone(),
            detail: r.detail.clone(),
            at: r.at.to_string(),
        }),
        waited_secs: waited,
        limit_wait: limit::limit_report(state, end, runner_running),
        last_failure: state.last_failure.as_ref().map(|f| FailureReport {
            class: f.class,
            at: f.at,
            retry_at: f.retry_at,
            text: f.describe(end),
        }),
        runner_running,
        logs: None,
        contained: state.contained,
        root: project.root.display().to_string(),
    }
}

impl Report {
    /// Adds what the project's logs take on disk, and their cap (the user's).
    pub fn measure_logs(&mut self, project: &Project, cap: u64) {
        let size = crate::store::runs::logs_size(project);
        self.logs = Some(LogsReport {
            bytes: size.total(),
            runs_bytes: size.runs,
            run_files: size.run_files,
            events_bytes: size.events,
            cap_bytes: cap,
        });
    }

    /// An active loop whose `pagent loop` is not running (interrupted, or crashed).
    fn interrupted(&self) -> bool {
        self.status == Status::Active && self.runner_running == Some(false)
    }
}

/// The loop's latest checks, from the event log (they are not worth a state write each).
fn recent_checks(project: &Project, state: &State) -> Vec<CheckReport> {
    let Ok((events, _)) = read_events(project) else {
        return Vec::new();
    };
    let started = state.started_at;
    let mut checks: Vec<CheckReport> = events
        .into_iter()
        .filter(|e| e.action == Action::Check && e.ts >= started)
        .map(|e| CheckReport {
            ts: e.ts,
            detail: e.detail,
            ms: e.ms,
        })
        .collect();
    let skip = checks.len().saturating_sub(RECENT_CHECKS);
    checks.drain(..skip);
    checks
}

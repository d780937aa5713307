//! One iteration's agent run, and what follows a run that failed.
//!
//! Every failed run is classified by the engine (`pagent_engine::failure`): a service
//! outage is retried with growing delays for up to `loop.outage_wait`, an agent crash or bad
//! exit `loop.retries` times (the user's config, `store/tuning.rs`), and a usage limit goes back to the runner
//! ([`Attempt::Limited`]) to be waited out, or to end the loop when no wait ends it
//! (`limit.rs`), unless `--no-limit-wait` makes it a crash to retry. A retry is not an
//! iteration: the engine's loop never hears of it, so a flaky API cannot use up the loop's
//! iterations or trip its no-progress limit. Each attempt gets its own log file
//! (`-retry1`, ...), waiting between attempts still answers Ctrl-C, and each failure is
//! written to the state (`last_failure`, for `pagent status` and the dashboard) and the
//! event log with its class, before the runner says it.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use pagent_engine::failure::{
    AfterFailure, Attempts, Failed, FailureClass, RetryOptions, Verdict, after_failure, record,
};
use pagent_engine::limit::{LimitSeen, WaitOptions};
use pagent_engine::{Action, Decision, LogEntry, Outcome, State};
use pagent_protocol::stream::{LimitHit, UsageRecord};

use crate::agent::{self, AgentRun, AgentSpec, End, Limits};
use crate::cli::env::{self, Env};
use crate::cli::ui;
use crate::io::now;
use crate::runner::pause::apply_over_pause;
use crate::runner::progress::Progress;
use crate::store::eventlog::Event;
use crate::store::project::{Project, RUNS_DIR};
use crate::world::zone;
use pagent_door::process::SearchPath;
use pagent_door::process::signals;

/// How one iteration's attempts ended.
#[derive(Debug)]
pub(super) enum Attempt {
    Ran(Box<AgentRun>),
    /// The agent hit a usage limit; `spent` is what its attempts used.
    Limited {
        hit: LimitHit,
        spent: Vec<UsageRecord>,
    },
    /// Ctrl-C, or the loop ended elsewhere.
    Interrupted,
}

/// `pagent loop` stopped because its agent kept failing: the error, with the class of
/// its failed runs (for `--json`'s last event).
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct KeptFailing {
    pub class: FailureClass,
    pub message: String,
}

impl KeptFailing {
    fn new(class: FailureClass, reason: &str) -> KeptFailing {
        KeptFailing {
            class,
            message: format!("{reason} (the state is saved; the agent's output is in {RUNS_DIR})"),
        }
    }
}

/// What a run reported, when it failed: a usage limit (whatever the exit), else an
/// outage's words, else why it failed; `None` for a run that did not fail.
fn failed_run<'a>(
    limit: Option<&'a LimitSeen>,
    failure: Option<&'a str>,
    outage: Option<&'a str>,
) -> Option<Failed<'a>> {
    match (limit, failure, outage) {
        (Some(seen), _, _) => Some(Failed::Limit(seen)),
        (None, None, _) => None,
        (None, Some(_), Some(outage)) => Some(Failed::Outage(outage)),
        (None, Some(why), None) => Some(Failed::Crash(why)),
    }
}

/// Where and how one iteration's agent runs: the same for every attempt.
pub(super) struct Runs<'a> {
    pub agent: &'a AgentSpec,
    pub search: &'a SearchPath,
    pub options: &'a crate::agent::Options,
    pub project: &'a Project,
    pub env: &'a Env,
    pub limits: Limits,
    pub run_id: &'a str,
}

impl Runs<'_> {
    fn retry_options(&self) -> RetryOptions {
        RetryOptions {
            retries: self.options.retries,
            first_delay_secs: self.options.retry_delay.as_secs(),
            outage_secs: self.options.outage_wait.as_secs(),
            no_limit_wait: self.options.no_limit_wait,
        }
    }

    pub fn wait_options(&self) -> WaitOptions {
        WaitOptions {
            margin_secs: self.options.limit_margin.as_secs(),
            fallback_secs: self.options.limit_wait.as_secs(),
        }
    }
}

/// One iteration's agent run, run again (not counted) while it fails in a way a retry
/// may mend. `state` is the loop's, kept up to date with each failure written to it.
/// `limited` counts the usage limits this iteration met before (its log files).
pub(super) fn run_with_retries(
    runs: &Runs<'_>,
    state: &mut State,
    prompt: &str,
    progress: &mut Progress,
    limited: u32,
    still_ours: &mut dyn FnMut() -> bool,
) -> anyhow::Result<Attempt> {
    let mut attempts = Attempts::default();
    let mut attempt = 0;
    // A failed attempt's tokens were spent too: they count with the run that follows.
    let mut spent = Vec::new();
    loop {
        progress.iteration_started(state, attempt);
        let (run, log_path) = run_once(
            runs,
            state,
            prompt,
            progress,
            (limited, attempt),
            still_ours,
        )?;
        match &run.end {
            End::Interrupted | End::Stopped => return Ok(Attempt::Interrupted),
            End::NotStarted(why) => bail!("{why}"),
            _ => {}
        }
        let seen: Option<LimitSeen> = run
            .limit
            .as_ref()
            .map(|hit| zone::limit_seen(hit, &zone::of_env(runs.env), now()));
        let why = run.failure(runs.agent);
        let Some(failed) = failed_run(seen.as_ref(), why.as_deref(), run.outage.as_deref()) else {
            let mut run = run;
            spent.append(&mut run.usage);
            run.usage = spent;
            return Ok(Attempt::Ran(Box::new(run)));
        };
        let verdict = after_failure(
            failed,
            attempts,
            now(),
            runs.retry_options(),
            runs.wait_options(),
        );
        attempts = verdict.attempts;
        spent.extend(run.usage.iter().cloned());
        let (delay, text) = match &verdict.next {
            AfterFailure::Wait { .. } | AfterFailure::End(_) => {
                let Some(hit) = run.limit else {
                    bail!("a usage limit without its words");
                };
                return Ok(Attempt::Limited { hit, spent });
            }
            AfterFailure::Retry { delay_secs, text } => (Duration::from_secs(*delay_secs), text),
            AfterFailure::Stop(reason) => {
                remember(runs, state, &verdict, reason, &log_path, &run, progress)?;
                crate::session::notify::runner_stopped(runs.env, &runs.project.root, state, reason);
                return Err(KeptFailing::new(verdict.class, reason).into());
            }
        };
        if !remember(runs, state, &verdict, text, &log_path, &run, progress)? {
            return Ok(Attempt::Interrupted);
        }
        attempt += 1;
        let of = match verdict.class {
            FailureClass::Outage => 0,
            _ => runs.options.retries,
        };
        progress.retrying(verdict.class, text, delay, attempt, of);
        if !sleep_while_ours(delay, still_ours) {
            return Ok(Attempt::Interrupted);
        }
    }
}

/// Starts the agent once for this iteration, with its own prompt and log file.
fn run_once(
    runs: &Runs<'_>,
    state: &State,
    prompt: &str,
    progress: &mut Progress,
    (limited, attempt): (u32, u32),
    still_ours: &mut dyn FnMut() -> bool,
) -> anyhow::Result<(AgentRun, std::path::PathBuf)> {
    let stage = &state.current().name;
    let iteration = state.iterations[state.stage];
    let env = [
        (env::PAGENT_STAGE, stage.clone()),
        (env::PAGENT_ITERATION, iteration.to_string()),
        (
            env::PAGENT_PROJECT_DIR,
            runs.project.root.display().to_string(),
        ),
    ];
    let mut retry = if limited == 0 {
        String::new()
    } else {
        format!("-limit{limited}")
    };
    if attempt > 0 {
        retry.push_str(&format!("-retry{attempt}"));
    }
    let base = format!("{}-{stage}-{iteration:03}{retry}", runs.run_id);
    let log_path = Path::new(RUNS_DIR).join(format!("{base}.log"));
    let prompt_rel = Path::new(RUNS_DIR).join(format!("{base}.prompt.md"));
    runs.project
        .dir()
        .write_atomic(&prompt_rel, prompt.as_bytes())
        .context("cannot write the agent's prompt file")?;
    let log_file = match runs.project.dir().create(&log_path) {
        Ok(file) => Some(file),
        Err(err) => {
            progress.note(&format!("the agent's output is not logged: {err}"));
            None
        }
    };
    let prompt_file = runs.project.root.join(&prompt_rel);
    let run = agent::Invocation {
        spec: runs.agent,
        search: runs.search,
        cwd: &runs.project.root,
        prompt,
        prompt_file: &prompt_file,
        log: log_file,
        env: &env,
        remove: &[],
        limits: runs.limits,
    }
    .run(&mut |event| {
        match event {
            Some(event) => progress.agent_event(event),
            None => progress.tick(),
        }
        still_ours()
    });
    Ok((run, log_path))
}

/// Writes the failed run to the state and the event log (the retry, or the failure that
/// stops the runner); false when the loop ended elsewhere meanwhile.
fn remember(
    runs: &Runs<'_>,
    state: &mut State,
    verdict: &Verdict,
    text: &str,
    log_path: &Path,
    run: &AgentRun,
    progress: &mut Progress,
) -> anyhow::Result<bool> {
    let at = now();
    let action = match verdict.next {
        AfterFailure::Stop(_) => Action::Failed,
        _ => Action::Retry,
    };
    let outcome = Outcome {
        decision: Decision::Allow,
        write: Some(record(state, verdict, text, at)),
        log: Some(LogEntry {
            action,
            stage: state.current().name.clone(),
            iteration: state.iterations[state.stage],
            detail: format!("{text} (log: {})", log_path.display()),
        }),
    };
    let class = verdict.class;
    let logged = |entry| Event::of(entry, at, None).took(run.elapsed).failed(class);
    let stderr = progress.stderr();
    match apply_over_pause(
        runs.project,
        runs.env,
        state,
        outcome,
        logged,
        &mut |m: &str| ui::warn(stderr, m),
    )? {
        Some(written) => {
            *state = written;
            Ok(true)
        }
        None => Ok(false),
    }
}

/// Sleeps `total` (an outage's retry may be minutes away) unless Ctrl-C comes or the loop
/// is no longer this runner's (`pagent cancel`): false then, within a tenth of a second.
fn sleep_while_ours(total: Duration, still_ours: &mut dyn FnMut() -> bool) -> bool {
    let step = Duration::from_millis(100);
    let mut slept = Duration::ZERO;
    while slept < total {
        if signals::interrupted() || !still_ours() {
            return false;
        }
        std::thread::sleep(step);
        slept += step;
    }
    !signals::interrupted()
}

//! One iteration's agent run, retried while the agent crashes or reports an API error.
//!
//! A retry is not an iteration: the engine never hears of it, so a flaky API cannot use
//! up the loop's iterations or trip its no-progress limit. Each attempt gets its own log
//! file (`-retry1`, ...), the delay doubles up to a cap, and waiting between attempts
//! still answers Ctrl-C. A usage limit is not an error to retry: the run returns it
//! ([`Attempt::Limited`]) for the runner to wait out (`limit.rs`), unless
//! `--no-limit-wait` makes it one.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use pagent_engine::{Action, LogEntry, State};
use pagent_protocol::stream::{LimitHit, UsageRecord};

use crate::agent::{self, AgentRun, AgentSpec, End, Limits};
use crate::cli::env;
use crate::cli::ui;
use crate::io::now;
use crate::runner::progress::Progress;
use crate::session;
use crate::store::eventlog::Event;
use crate::store::project::{Project, RUNS_DIR};
use pagent_door::process::SearchPath;
use pagent_door::process::signals;

/// The longest wait between retries.
const MAX_RETRY_DELAY: Duration = Duration::from_secs(300);

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

/// One iteration's agent run, retried (not counted) while it crashes or reports an API
/// error. `limited` counts the usage limits this iteration met before (its log files).
#[allow(clippy::too_many_arguments)]
pub(super) fn run_with_retries(
    agent: &AgentSpec,
    search: &SearchPath,
    options: &crate::agent::Options,
    project: &Project,
    state: &State,
    prompt: &str,
    limits: Limits,
    run_id: &str,
    progress: &mut Progress,
    limited: u32,
    still_ours: &mut dyn FnMut() -> bool,
) -> anyhow::Result<Attempt> {
    let stage = &state.current().name;
    let iteration = state.iterations[state.stage];
    let env = [
        (env::PAGENT_STAGE, stage.clone()),
        (env::PAGENT_ITERATION, iteration.to_string()),
        (env::PAGENT_PROJECT_DIR, project.root.display().to_string()),
    ];
    let mut attempt = 0;
    // A failed attempt's tokens were spent too: they count with the run that follows.
    let mut spent = Vec::new();
    loop {
        progress.iteration_started(state, attempt);
        let mut retry = if limited == 0 {
            String::new()
        } else {
            format!("-limit{limited}")
        };
        if attempt > 0 {
            retry.push_str(&format!("-retry{attempt}"));
        }
        let base = format!("{run_id}-{stage}-{iteration:03}{retry}");
        let log_path = Path::new(RUNS_DIR).join(format!("{base}.log"));
        let prompt_rel = Path::new(RUNS_DIR).join(format!("{base}.prompt.md"));
        project
            .dir()
            .write_atomic(&prompt_rel, prompt.as_bytes())
            .context("cannot write the agent's prompt file")?;
        let log_file = match project.dir().create(&log_path) {
            Ok(file) => Some(file),
            Err(err) => {
                progress.note(&format!("the agent's output is not logged: {err}"));
                None
            }
        };
        let run = agent::run_agent(
            agent,
            search,
            &project.root,
            prompt,
            &project.root.join(&prompt_rel),
            log_file,
            &env,
            limits,
            &mut |event| {
                match event {
                    Some(event) => progress.agent_event(event),
                    None => progress.tick(),
                }
                still_ours()
            },
        );
        match &run.end {
            End::Interrupted | End::Stopped => return Ok(Attempt::Interrupted),
            End::NotStarted(why) => bail!("{why}"),
            _ => {}
        }
        if !options.no_limit_wait
            && let Some(hit) = run.limit
        {
            spent.extend(run.usage);
            return Ok(Attempt::Limited { hit, spent });
        }
        let Some(why) = run.failure(agent) else {
            let mut run = run;
            spent.append(&mut run.usage);
            run.usage = spent;
            return Ok(Attempt::Ran(Box::new(run)));
        };
        spent.extend(run.usage.iter().cloned());
        attempt += 1;
        let entry = LogEntry {
            action: Action::Retry,
            stage: stage.clone(),
            iteration,
            detail: format!("{why} (log: {})", log_path.display()),
        };
        let event = Event::of(entry, now(), None).took(run.elapsed);
        session::log(project, &event, &mut |m: &str| {
            ui::warn(progress.stderr(), m)
        });
        if attempt > options.retries {
            bail!(
                "the agent failed {} ({why}); the state is saved: fix the cause and run `pagent loop` to resume \
                 (logs in {})",
                match attempt {
                    1 => "once".to_owned(),
                    n => format!("{n} times in a row"),
                },
                RUNS_DIR
            );
        }
        let delay = options
            .retry_delay
            .saturating_mul(1 << (attempt - 1).min(16))
            .min(MAX_RETRY_DELAY);
        progress.retrying(&why, delay, attempt, options.retries);
        if !sleep_unless_interrupted(delay) {
            return Ok(Attempt::Interrupted);
        }
    }
}

fn sleep_unless_interrupted(total: Duration) -> bool {
    let step = Duration::from_millis(100);
    let mut slept = Duration::ZERO;
    while slept < total {
        if signals::interrupted() {
            return false;
        }
        std::thread::sleep(step);
        slept += step;
    }
    !signals::interrupted()
}

//! `pagent loop` waits out the agent's usage limit: the runner's side of
//! `pagent_engine::limit`.
//!
//! The agent's words become the engine's [`LimitSeen`] (its reset resolved in its zone,
//! `world/zone`), the engine's plan says how long to wait or that the loop ends, and the
//! wait is written before it begins (so `pagent status`, the dashboard and a runner that
//! resumes after a crash all see it). Then the runner sleeps in steps of a tenth of a
//! second, redrawing the countdown, looking at the state every quarter second: Ctrl-C
//! and `pagent cancel` end the wait within that, `pagent pause` is kept, and `pagent
//! resume` (which ends a wait) sends the loop on at once. When the time comes the wait
//! is written as over and the same iteration runs again, with the same prompt, not
//! counted.

use std::time::{Duration, Instant};

use pagent_engine::failure::FailureClass;
use pagent_engine::limit::{
    LimitPlan, LimitSeen, begin_wait, end_wait, give_up, plan, resumed_entry,
};
use pagent_engine::{Decision, Outcome, State, Timestamp};
use pagent_protocol::stream::{LimitHit, UsageRecord};

use crate::cli::env::Env;
use crate::cli::ui;
use crate::io::now;
use crate::process::signals;
use crate::runner::pause::apply_over_pause;
use crate::runner::progress::Progress;
use crate::runner::retry::Runs;
use crate::runner::usage::metered;
use crate::runner::watch::ended_elsewhere;
use crate::store;
use crate::store::eventlog::Event;
use crate::store::project::Project;
use crate::store::user::UserDir;
use crate::world::zone;

/// How often the waiting runner looks at the state (cancel, resume, replacement).
const LOOK_EVERY: Duration = Duration::from_millis(250);
const STEP: Duration = Duration::from_millis(100);

/// How a wait ended.
pub(super) enum Waited {
    /// Waited out (or resumed by the user): run the same iteration again.
    Go(Box<State>),
    /// A limit that will not reset soon: the loop ended as gave up.
    GaveUp(Box<State>),
    /// Cancelled, replaced or removed meanwhile: why.
    Ended(String),
    /// Ctrl-C or SIGTERM: the wait stays in the state, `pagent loop` resumes it.
    Interrupted,
}

/// The agent hit `hit` running `prompt`: wait as the engine plans, or end the loop (a
/// limit no wait ends: a credit, spend or admin stop).
pub(super) fn wait_out(
    runs: &Runs<'_>,
    state: &State,
    hit: &LimitHit,
    spent: &[UsageRecord],
    prompt: &str,
    progress: &mut Progress,
) -> anyhow::Result<Waited> {
    let (project, env) = (runs.project, runs.env);
    let user_dir = &UserDir::of(env);
    let now = now();
    let seen: LimitSeen = zone::limit_seen(hit, &zone::of_env(env), now);
    let mut next = metered(state, spent, runs.options, user_dir);
    next.pending_prompt = Some(prompt.to_owned());
    let outcome = match plan(&seen, now, runs.wait_options()) {
        LimitPlan::GiveUp(reason) => {
            let outcome = give_up(&next, reason, now);
            let stopped = apply(project, env, state, outcome, FailureClass::Stop, progress)?;
            return Ok(match stopped {
                Some(written) => Waited::GaveUp(Box::new(written)),
                None => Waited::Ended(ended(project, state)),
            });
        }
        LimitPlan::Wait { until, reset_known } => {
            begin_wait(&next, &seen, Some(until), reset_known, now)
        }
    };
    let class = FailureClass::UsageLimit;
    let Some(waiting) = apply(project, env, state, outcome, class, progress)? else {
        return Ok(Waited::Ended(ended(project, state)));
    };
    crate::session::notify::limit_reached(env, &project.root, &waiting, &seen.message);
    wait(project, env, waiting, false, progress)
}

/// Waits until the state's `limit_wait` is over (at once when it has none), showing it;
/// `resumed`: a wait an earlier `pagent loop` began.
pub(super) fn wait(
    project: &Project,
    env: &Env,
    waiting: State,
    resumed: bool,
    progress: &mut Progress,
) -> anyhow::Result<Waited> {
    let Some(limit) = waiting.limit_wait.clone() else {
        return Ok(Waited::Go(Box::new(waiting)));
    };
    let zones = zone::of_env(env);
    let start = now();
    let until = limit.until.unwrap_or(start);
    let clock = zone::clock_text(&zones, seconds(until), seconds(start));
    progress.limit_wait(
        &limit.why,
        (until, &clock),
        until.since(start),
        limit.reset_known,
        resumed,
    );
    let mut looked = Instant::now();
    let mut current = waiting;
    loop {
        if signals::interrupted() {
            return Ok(Waited::Interrupted);
        }
        if looked.elapsed() >= LOOK_EVERY {
            looked = Instant::now();
            if let Some(why) = ended_elsewhere(project, &current) {
                return Ok(Waited::Ended(why));
            }
            match store::read_state(project) {
                // `pagent resume` ended the wait: go on now, as the user asks.
                Ok(Some(on_disk)) if on_disk.limit_wait.is_none() => {
                    progress.limit_resumed(now().since(limit.since));
                    return Ok(Waited::Go(Box::new(on_disk)));
                }
                Ok(Some(on_disk)) => current = on_disk,
                _ => {}
            }
        }
        let now = now();
        if now >= until {
            break;
        }
        progress.limit_countdown(until.since(now), &clock);
        std::thread::sleep(STEP);
    }
    let now = now();
    let outcome = Outcome {
        decision: Decision::Allow,
        write: Some(end_wait(&current, now)),
        log: Some(resumed_entry(&current, now)),
    };
    let class = FailureClass::UsageLimit;
    match apply(project, env, &current, outcome, class, progress)? {
        Some(written) => {
            progress.limit_resumed(now.since(limit.since));
            Ok(Waited::Go(Box::new(written)))
        }
        None => Ok(Waited::Ended(ended(project, &current))),
    }
}

fn seconds(t: Timestamp) -> i64 {
    i64::try_from(t.0).unwrap_or(i64::MAX)
}

/// Applies a limit's decision, its log line saying the failed run's class.
fn apply(
    project: &Project,
    env: &Env,
    decided_on: &State,
    outcome: Outcome,
    class: FailureClass,
    progress: &mut Progress,
) -> anyhow::Result<Option<State>> {
    let logged = |entry| Event::of(entry, now(), None).failed(class);
    apply_over_pause(project, env, decided_on, outcome, logged, &mut |m: &str| {
        ui::warn(progress.stderr(), m)
    })
}

fn ended(project: &Project, state: &State) -> String {
    ended_elsewhere(project, state).unwrap_or_else(|| "the state changed meanwhile".to_owned())
}

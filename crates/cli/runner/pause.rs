//! A paused `pagent loop` (`pagent pause`, the dashboard's button): the iteration in
//! progress finishes and counts, then the runner waits, without an agent running, until
//! the user resumes the loop, cancels it, or presses Ctrl-C.
//!
//! The pause is a write by the user while the runner's agent works, so the runner's
//! compare-and-swap after the iteration would find its state changed. When the pause (or
//! a pause and a resume) is the only change, [`apply_over_pause`] applies the iteration's
//! decision over it, keeping the user's pause; any other change voids the decision as
//! before (a cancel, a replacement).

use std::time::Duration;

use pagent_engine::{Outcome, State};

use crate::cli::env::Env;
use crate::runner::progress::Progress;
use crate::runner::watch::ended_elsewhere;
use crate::session;
use crate::store;
use crate::store::eventlog::Event;
use crate::store::project::Project;
use pagent_door::process::signals;

/// How often a paused runner looks whether it may go on.
const POLL: Duration = Duration::from_millis(250);

/// What [`wait_if_paused`] ended with.
pub(super) enum Waited {
    /// Not paused (any more): go on with this state.
    Go(Box<State>),
    /// Cancelled, replaced or removed meanwhile: why.
    Ended(String),
    /// Ctrl-C or SIGTERM while paused.
    Interrupted,
}

/// Returns at once when `state`'s loop is not paused on disk; else says so once and
/// waits for the user.
pub(super) fn wait_if_paused(project: &Project, state: State, progress: &mut Progress) -> Waited {
    let mut told = false;
    loop {
        if let Some(why) = ended_elsewhere(project, &state) {
            return Waited::Ended(why);
        }
        match store::read_state(project) {
            Ok(Some(now)) if now.loop_id == state.loop_id => match &now.paused {
                None if told => return Waited::Go(Box::new(now)),
                None => return Waited::Go(Box::new(state)),
                Some(pause) if !told => {
                    progress.note(&format!(
                        "paused because {}: waiting for `pagent resume` (or `pagent cancel`)",
                        pause.why
                    ));
                    told = true;
                }
                Some(_) => {}
            },
            // Unreadable for a moment, or already replaced: the next look tells.
            _ => {}
        }
        if signals::interrupted() {
            return Waited::Interrupted;
        }
        std::thread::sleep(POLL);
    }
}

/// [`session::apply`], and when another writer got there first and that write was only
/// the user's pause or resume, the same decision applied over it with the pause kept.
pub(super) fn apply_over_pause(
    project: &Project,
    env: &Env,
    decided_on: &State,
    outcome: Outcome,
    record: impl Fn(pagent_engine::LogEntry) -> Event,
    warn: &mut dyn crate::store::Warn,
) -> anyhow::Result<Option<State>> {
    if let Some(written) = session::apply(project, env, decided_on, &outcome, &record, warn)? {
        return Ok(Some(written));
    }
    let Ok(Some(on_disk)) = store::read_state(project) else {
        return Ok(None);
    };
    let Some(write) = outcome
        .write
        .as_ref()
        .and_then(|next| pagent_engine::pause::carry_pause(decided_on, &on_disk, next))
    else {
        return Ok(None);
    };
    let carried = Outcome {
        write: Some(write),
        ..outcome
    };
    session::apply(project, env, &on_disk, &carried, &record, warn)
}

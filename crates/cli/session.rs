//! Applying a decision to a project: [`apply`] writes the state the engine decided and
//! logs what happened, the same way for the Stop hook, `pagent loop` and `pagent cancel`.
//!
//! Decisions are made without the state lock (checks, the transcript, an agent run may
//! take long), so a write is compare-and-swap: under the lock, the state is re-read, and
//! the decision is written only if the state is still the generation it was made on. A
//! writer that lost (a cancel, a new loop, a second hook of the same stop) gets `None`
//! and writes and logs nothing: the winner already did. A failure to log never changes a
//! decision: the log is for people, the state file is the truth.
//!
//! The user's levers (cancel, pause, resume), applied the same
//! way for the commands and the dashboard, are in [`control`].

pub mod control;
pub mod notify;

use pagent_engine::{Outcome, State};

use crate::cli::env::Env;
use crate::store::eventlog::{Event, append_event};
use crate::store::project::Project;
use crate::store::user::UserDir;
use crate::store::{self, Applied, Warn};

/// Writes `outcome.write` over `decided_on` compare-and-swap, and on success (or when
/// there is nothing to write) logs `outcome.log` as `record` says (time, session,
/// duration). Entering a new stage also refreshes the prompt file the quiet re-prompts
/// point at. Returns the state as it now is on disk (as written, or `decided_on` when
/// there was nothing to write), or `None` when another writer changed it meanwhile.
/// A write that ends the loop (complete, gave up, cancelled) tells the user's notifier,
/// here and only here, whoever decided it (the Stop hook, `pagent loop`, a cancel).
pub fn apply(
    project: &Project,
    env: &Env,
    decided_on: &State,
    outcome: &Outcome,
    record: impl Fn(pagent_engine::LogEntry) -> Event,
    warn: &mut dyn Warn,
) -> anyhow::Result<Option<State>> {
    let user_dir = &UserDir::of(env);
    let now_on_disk = match &outcome.write {
        Some(next) => {
            let secret = store::secret::read_secret(user_dir)
                .ok_or_else(|| anyhow::anyhow!("pagent's secret cannot be read"))?;
            match store::apply_if_unchanged(project, user_dir, decided_on, next, &secret, warn)? {
                Applied::Changed => return Ok(None),
                Applied::Written(written) => {
                    if next.stage != decided_on.stage {
                        store::write_prompt_file(project, next, warn);
                    }
                    *written
                }
            }
        }
        None => decided_on.clone(),
    };
    if let Some(verdict) = crate::agent::review::new_verdict(decided_on, &now_on_disk) {
        // A reviewer ran in this decision: its verdict is a line of its own, before the
        // decision it led to.
        let entry = pagent_engine::LogEntry {
            action: pagent_engine::Action::Review,
            stage: decided_on
                .stages
                .get(verdict.stage)
                .map_or_else(String::new, |s| s.name.clone()),
            iteration: verdict.iteration,
            detail: verdict.detail.clone(),
        };
        log(
            project,
            &Event {
                ms: None,
                ..record(entry)
            },
            warn,
        );
    }
    if let Some(entry) = &outcome.log {
        let event = record(entry.clone());
        // A decision that wrote the state carries the loop's usage, for charts over time.
        let event = if outcome.write.is_some() {
            event.with_usage(&now_on_disk)
        } else {
            event
        };
        log(project, &event, warn);
    }
    if outcome.write.is_some() && decided_on.is_active() && !now_on_disk.is_active() {
        notify::loop_ended(env, &project.root, &now_on_disk);
    }
    Ok(Some(now_on_disk))
}

/// Applies `change` to the user's own active loop in `project` through [`apply`], for the
/// small hooks and commands (a typed prompt, a compaction, a check's result, `status`
/// with `--pause`) whose change is a pure function of the state and logs nothing of its
/// own. `change` returns the state to write, or `None` for "nothing to do"; it is decided
/// again on the newest state when another writer got there first (a few times at most).
/// Returns the state written, if any.
pub fn change_own_loop(
    project: &Project,
    env: &Env,
    change: impl Fn(&State) -> Option<State>,
    warn: &mut dyn Warn,
) -> anyhow::Result<Option<State>> {
    for _ in 0..4 {
        let Some(state) = store::read_state(project)?.filter(State::is_active) else {
            return Ok(None);
        };
        if store::ownership(project, &UserDir::of(env), &state) != store::Ownership::Own {
            return Ok(None);
        }
        let Some(next) = change(&state) else {
            return Ok(None);
        };
        if let Some(written) = write_quietly(project, env, &state, next, warn)? {
            return Ok(Some(written));
        }
    }
    anyhow::bail!("the loop state kept changing while pagent tried to update it")
}

/// The notice waiting for `session` (see `pagent_engine::notice`), cleared through
/// [`apply`] so it is said once; `None` when there is none for this session, or another
/// writer got there first (the next hook call says it).
pub fn tell_session(
    project: &Project,
    env: &Env,
    state: &State,
    session: Option<&str>,
    warn: &mut dyn Warn,
) -> anyhow::Result<Option<String>> {
    if store::ownership(project, &UserDir::of(env), state) != store::Ownership::Own {
        return Ok(None);
    }
    let Some((notice, next)) = pagent_engine::notice::take(state, session, crate::io::now()) else {
        return Ok(None);
    };
    Ok(write_quietly(project, env, state, next, warn)?.map(|_| notice))
}

/// [`apply`] of a new state that decides nothing and logs nothing (a mark, a notice
/// cleared): `None` when another writer got there first.
fn write_quietly(
    project: &Project,
    env: &Env,
    read: &State,
    next: State,
    warn: &mut dyn Warn,
) -> anyhow::Result<Option<State>> {
    let outcome = Outcome {
        decision: pagent_engine::Decision::Allow,
        write: Some(next),
        log: None,
    };
    let record = |entry| Event::of(entry, crate::io::now(), None);
    apply(project, env, read, &outcome, record, warn)
}

/// Appends `event` to the log; a failure is a warning. Returns whether it was written.
pub fn log(project: &Project, event: &Event, warn: &mut dyn Warn) -> bool {
    match append_event(project, event) {
        Ok(()) => true,
        Err(err) => {
            warn.warn(&format!("cannot append to the event log: {err:#}"));
            false
        }
    }
}

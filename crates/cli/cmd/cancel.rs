//! `pagent cancel`: end the active loop. The state is kept (status `cancelled`) so
//! `pagent status` and `pagent log` can still tell what happened; the next Stop is
//! allowed. Cancelling is always possible: it works on a loop of any session, and sets a
//! corrupt file aside, because it can only make pagent do less. A state that is not the
//! user's own is left alone: pagent ignores it anyway, and writes nothing for a stranger.
//!
//! The state is read under the lock, so the cancel is written over the newest state and
//! never over an update it did not see; nobody holds that lock across a check or an
//! agent run, so the cancel lands at once, and a hook or runner that decided meanwhile
//! finds its state changed and lets the stop (or the runner) go.

#![allow(clippy::print_stdout)]

use pagent_engine::{State, Status};

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::io::now;
use crate::store::eventlog::{Event, append_event};
use crate::store::project::Project;
use crate::{cli::ui, store, store::secret};

pub fn run(global: &Global, env: &Env) -> anyhow::Result<ExitStatus> {
    let project = Project::resolve(global, env, None)?;
    let config_dir = env.config_dir.as_deref();
    if store::read_state_bytes(&project)?.is_none() {
        println!(
            "pagent: no loop to cancel in {} (no state file).",
            project.root.display()
        );
        return Ok(ExitStatus::Success);
    }
    let _lock = store::lock_state(&project)?;
    let Some(bytes) = store::read_state_bytes(&project)? else {
        println!(
            "pagent: no loop to cancel in {} (no state file).",
            project.root.display()
        );
        return Ok(ExitStatus::Success);
    };
    let now = now();
    let state = match State::from_json(&bytes) {
        Ok(state) => state,
        Err(err) => {
            let aside = store::set_aside(&project, now.0)?;
            println!(
                "pagent: the state file was corrupt ({err}); moved it to {aside}. No loop is active now."
            );
            return Ok(ExitStatus::Success);
        }
    };
    if !state.is_active() {
        println!(
            "pagent: no active loop to cancel (the last one, {}, is {}).",
            ui::printable(&state.workflow, false),
            state.status.as_str()
        );
        return Ok(ExitStatus::Success);
    }
    if store::ownership(&project, config_dir, &state) != store::Ownership::Own {
        println!(
            "pagent: the active loop in .claude/pagent-pipeline.json was not set up by you for this project \
             (or is an older copy), so pagent ignores it already: nothing to cancel. \
             Delete the file if you want it gone; starting your own loop replaces it."
        );
        return Ok(ExitStatus::Success);
    }
    let mut cancelled = state.clone();
    let by = env.session_id.as_deref().map_or_else(
        || "cancelled by the user".to_owned(),
        |s| format!("cancelled by the user (session {s})"),
    );
    pagent_engine::budget::tick(&mut cancelled, now);
    cancelled.finish(Status::Cancelled, by, now);
    let secret = secret::read_or_create_secret(config_dir)?;
    store::write_state_atomic(&project, config_dir, &cancelled, &secret)?;
    crate::notify::loop_ended(env, &project.root, &cancelled);
    let event = Event {
        ts: now.to_string(),
        action: "cancel".into(),
        session_id: env.session_id.clone(),
        stage: Some(state.current().name.clone()),
        iteration: Some(state.iterations[state.stage]),
        detail: cancelled.end_reason.clone().unwrap_or_default(),
        ms: None,
    };
    if let Err(err) = append_event(&project, &event) {
        ui::warn(&format!("cannot append to the event log: {err:#}"));
    }
    println!(
        "pagent: cancelled the {} loop at stage {} ({} of {} stages, {} iterations). Claude can stop now.",
        ui::printable(&state.workflow, false),
        ui::printable(&state.current().name, false),
        state.stage + 1,
        state.max_stages,
        state.total_iterations()
    );
    Ok(ExitStatus::Success)
}

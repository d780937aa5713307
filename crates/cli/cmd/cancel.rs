//! `pagent cancel`: end the active loop. The state is kept (status `cancelled`) so
//! `pagent status` and `pagent log` can still tell what happened; the next Stop is
//! allowed. Cancelling is always possible: it works on a loop of any session, and sets a
//! corrupt file aside, because it can only make pagent do less. A state that is not the
//! user's own is left alone: pagent ignores it anyway, and writes nothing for a stranger.
//!
//! The cancel is applied like every decision (`session::apply`): compare-and-swap over
//! the state it was decided on, so it never overwrites an update it did not see. Nobody
//! holds the state lock across a check or an agent run, so the cancel lands at once; a
//! writer that slipped in between (a Stop hook's re-prompt) only makes it decide again on
//! the newer state, and a hook or runner that decided meanwhile finds its state changed
//! and lets the stop (or the runner) go.

use pagent_engine::{Action, Decision, LogEntry, Outcome, State, Status};

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::io::{Io, now};
use crate::session;
use crate::store::eventlog::Event;
use crate::store::project::Project;
use crate::{cli::ui, store};

/// How many times a cancel decides again when another writer got there first.
const TRIES: usize = 8;

pub fn run(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let project = Project::resolve(global, env, None)?;
    let config_dir = env.config_dir.as_deref();
    for _ in 0..TRIES {
        let Some(bytes) = store::read_state_bytes(&project)? else {
            writeln!(
                io.stdout,
                "pagent: no loop to cancel in {} (no state file).",
                project.root.display()
            )?;
            return Ok(ExitStatus::Success);
        };
        let now = now();
        let state = match State::from_json(&bytes) {
            Ok(state) => state,
            Err(err) => {
                let _lock = store::lock_state(&project)?;
                if store::read_state_bytes(&project)?.as_deref() != Some(&bytes[..]) {
                    continue;
                }
                let aside = store::set_aside(&project, now.0)?;
                writeln!(
                    io.stdout,
                    "pagent: the state file was corrupt ({err}); moved it to {aside}. No loop is active now."
                )?;
                return Ok(ExitStatus::Success);
            }
        };
        if !state.is_active() {
            writeln!(
                io.stdout,
                "pagent: no active loop to cancel (the last one, {}, is {}).",
                ui::printable(&state.workflow, false),
                state.status.as_str()
            )?;
            return Ok(ExitStatus::Success);
        }
        if store::ownership(&project, config_dir, &state) != store::Ownership::Own {
            writeln!(
                io.stdout,
                "pagent: the active loop in .claude/pagent-pipeline.json was not set up by you for this project \
                 (or is an older copy), so pagent ignores it already: nothing to cancel. \
                 Delete the file if you want it gone; starting your own loop replaces it."
            )?;
            return Ok(ExitStatus::Success);
        }
        // Make sure a secret exists before deciding: a cancel never fails for want of one.
        store::secret::read_or_create_secret(config_dir)?;
        let here = env.session_id.as_deref();
        let outcome = cancel(&state, here, now);
        let logged = |entry| Event::of(entry, now, here);
        let Some(written) =
            session::apply(&project, config_dir, &state, &outcome, logged, io.stderr)?
        else {
            continue;
        };
        crate::notify::loop_ended(env, &project.root, &written);
        writeln!(
            io.stdout,
            "pagent: cancelled the {} loop at stage {} ({} of {} stages, {} iterations). Claude can stop now.",
            ui::printable(&state.workflow, false),
            ui::printable(&state.current().name, false),
            state.stage + 1,
            state.max_stages,
            state.total_iterations()
        )?;
        return Ok(ExitStatus::Success);
    }
    anyhow::bail!(
        "the loop state kept changing while pagent tried to cancel it; run `pagent cancel` again"
    )
}

/// The cancelled state and its log line.
fn cancel(state: &State, session: Option<&str>, now: pagent_engine::Timestamp) -> Outcome {
    let mut cancelled = state.clone();
    let by = session.map_or_else(
        || "cancelled by the user".to_owned(),
        |s| format!("cancelled by the user (session {s})"),
    );
    pagent_engine::budget::tick(&mut cancelled, now);
    cancelled.finish(Status::Cancelled, by.clone(), now);
    Outcome {
        decision: Decision::Allow,
        write: Some(cancelled),
        log: Some(LogEntry {
            action: Action::Cancel,
            stage: state.current().name.clone(),
            iteration: state.iterations[state.stage],
            detail: by,
        }),
    }
}

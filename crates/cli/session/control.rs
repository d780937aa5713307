//! The user's three levers on a loop, from a terminal or the dashboard alike: [`cancel`],
//! [`pause`] and [`resume`]. `pagent cancel`, `pagent pause` and `pagent resume` print
//! what these return; the dashboard's buttons call the very same functions, so a button
//! is the command, not a copy of it.
//!
//! Each is a decision applied like every other ([`super::apply`]): compare-and-swap over
//! the state it was decided on, decided again when another writer got there first. Nobody
//! holds the state lock across a check or an agent run, so each lands at once. Only the
//! user's own loop is touched (a stranger's state is ignored by pagent anyway, and pagent
//! writes nothing for a stranger); cancel is the one that also sets a corrupt state file
//! aside, because it can only make pagent do less.

use std::path::Path;

use pagent_engine::{
    Action, Decision, Kind, LogEntry, Outcome, State, Status, Whose, count, whose_loop,
};

use crate::cli::env::Env;
use crate::cli::ui::printable;
use crate::io::now;
use crate::store::eventlog::Event;
use crate::store::project::Project;
use crate::store::user::UserDir;
use crate::store::{self, Ownership, Warn};

/// How the user stops a loop, as the start line and the resume line say it: Esc
/// interrupts the turn (and the next message pauses the loop), then the cancel command
/// ends it. (A cancel typed while Claude works, without Esc, ends the loop at its next
/// stop: `docs/commands.md`.)
pub const HOW_TO_STOP: &str = "To stop it: Esc, then /pagent:cancel.";

/// How many times an operation decides again when another writer got there first.
const TRIES: usize = 8;

/// What [`cancel`] did.
#[derive(Debug)]
pub enum Cancelled {
    NoState,
    /// The state file did not parse: it was moved to `aside`.
    SetAside {
        error: String,
        aside: String,
    },
    /// The loop had ended already.
    NotActive(Box<State>),
    /// The active state is not the user's own: pagent ignores it already.
    NotYours,
    Done {
        was: Box<State>,
    },
}

/// What [`pause`] did.
#[derive(Debug)]
pub enum Paused {
    NoActiveLoop,
    NotYours,
    Already(Box<State>),
    Done(Box<State>),
}

/// What [`resume`] did.
#[derive(Debug)]
pub enum Resumed {
    NoActiveLoop,
    /// Asked from a Claude Code session that does not own the loop.
    OtherSession {
        owner: String,
        workflow: String,
    },
    NotYours,
    Done {
        state: Box<State>,
        was_paused: bool,
    },
}

/// Ends the active loop (status `cancelled`, kept for status and the log); `here` is the
/// Claude Code session asking, if any. The user's notifier hears of it from `apply`, as
/// of any loop's end.
pub fn cancel(
    project: &Project,
    env: &Env,
    here: Option<&str>,
    warn: &mut dyn Warn,
) -> anyhow::Result<Cancelled> {
    let user_dir = &UserDir::of(env);
    for _ in 0..TRIES {
        let Some(bytes) = store::read_state_bytes(project)? else {
            return Ok(Cancelled::NoState);
        };
        let now = now();
        let state = match State::from_json(&bytes) {
            Ok(state) => state,
            Err(err) => {
                let _lock = store::lock_state(project)?;
                if store::read_state_bytes(project)?.as_deref() != Some(&bytes[..]) {
                    continue;
                }
                let aside = store::set_aside(project, now.0)?;
                return Ok(Cancelled::SetAside {
                    error: err.to_string(),
                    aside,
                });
            }
        };
        if !state.is_active() {
            return Ok(Cancelled::NotActive(Box::new(state)));
        }
        if store::ownership(project, user_dir, &state) != Ownership::Own {
            return Ok(Cancelled::NotYours);
        }
        // Make sure a secret exists before deciding: a cancel never fails for want of one.
        store::secret::read_or_create_secret(user_dir)?;
        let outcome = cancelled(&state, here, now);
        let logged = |entry| Event::of(entry, now, here);
        if super::apply(project, env, &state, &outcome, logged, warn)?.is_none() {
            continue;
        }
        return Ok(Cancelled::Done {
            was: Box::new(state),
        });
    }
    anyhow::bail!(
        "the loop state kept changing while pagent tried to cancel it; run `pagent cancel` again"
    )
}

/// The cancelled state and its log line.
fn cancelled(state: &State, session: Option<&str>, now: pagent_engine::Timestamp) -> Outcome {
    let mut cancelled = state.clone();
    let by = session.map_or_else(
        || "cancelled by the user".to_owned(),
        |s| format!("cancelled by the user (session {s})"),
    );
    pagent_engine::budget::tick(&mut cancelled, now);
    cancelled.finish(Status::Cancelled, by.clone(), now);
    // A cancel from a terminal or the dashboard: the loop's session hears of it.
    cancelled.session_notice = pagent_engine::notice::cancelled_elsewhere(state, session);
    Outcome {
        decision: Decision::Allow,
        write: Some(cancelled),
        log: Some(entry(state, Action::Cancel, by)),
    }
}

/// Pauses the active loop, whoever drives it: the Stop hook allows the session's stops,
/// `pagent loop` finishes its iteration and waits. `why` completes "paused because ...".
pub fn pause(
    project: &Project,
    env: &Env,
    why: &str,
    warn: &mut dyn Warn,
) -> anyhow::Result<Paused> {
    let user_dir = &UserDir::of(env);
    for _ in 0..TRIES {
        let Some(state) = store::read_state(project)?.filter(State::is_active) else {
            return Ok(Paused::NoActiveLoop);
        };
        if store::ownership(project, user_dir, &state) != Ownership::Own {
            return Ok(Paused::NotYours);
        }
        let now = now();
        let Some(next) = pagent_engine::pause::pause(&state, why, now) else {
            return Ok(Paused::Already(Box::new(state)));
        };
        let outcome = Outcome {
            decision: Decision::Allow,
            write: Some(next),
            log: Some(entry(&state, Action::Pause, format!("paused: {why}"))),
        };
        let logged = |entry| Event::of(entry, now, None);
        if let Some(written) = super::apply(project, env, &state, &outcome, logged, warn)? {
            return Ok(Paused::Done(Box::new(written)));
        }
    }
    anyhow::bail!("the loop state kept changing while pagent tried to pause it; try again")
}

/// Continues a paused loop (and starts its no-progress count afresh). From a Claude Code
/// session (`here`), only that session's loop; from a terminal or the dashboard, any of
/// the user's loops.
pub fn resume(
    project: &Project,
    env: &Env,
    here: Option<&str>,
    warn: &mut dyn Warn,
) -> anyhow::Result<Resumed> {
    let user_dir = &UserDir::of(env);
    for _ in 0..TRIES {
        let Some(state) = store::read_state(project)?.filter(State::is_active) else {
            return Ok(Resumed::NoActiveLoop);
        };
        if let (Whose::Other(owner), Some(_)) = (whose_loop(&state, here), here) {
            return Ok(Resumed::OtherSession {
                owner: owner.to_owned(),
                workflow: state.workflow.clone(),
            });
        }
        if store::ownership(project, user_dir, &state) != Ownership::Own {
            return Ok(Resumed::NotYours);
        }
        if state.paused.is_none() && state.limit_wait.is_none() {
            // Nothing to write: the loop goes on as it is (the command hands the model its
            // prompt, e.g. after Esc interrupted the turn). A usage-limit wait is ended
            // below, like a pause.
            return Ok(Resumed::Done {
                state: Box::new(state),
                was_paused: false,
            });
        }
        let now = now();
        let outcome = Outcome {
            decision: Decision::Allow,
            write: Some(pagent_engine::pause::resume(&state, now)),
            log: Some(entry(&state, Action::Resume, "resumed by the user".into())),
        };
        let logged = |entry| Event::of(entry, now, here);
        if let Some(written) = super::apply(project, env, &state, &outcome, logged, warn)? {
            return Ok(Resumed::Done {
                state: Box::new(written),
                // A usage-limit wait the user ends is resumed as much as a pause.
                was_paused: state.paused.is_some() || state.limit_wait.is_some(),
            });
        }
    }
    anyhow::bail!("the loop state kept changing while pagent tried to resume it; try again")
}

/// The log line of an operation at the loop's current stage and iteration.
fn entry(state: &State, action: Action, detail: String) -> LogEntry {
    LogEntry {
        action,
        stage: state.current().name.clone(),
        iteration: state.iterations[state.stage],
        detail,
    }
}

impl Cancelled {
    /// What `pagent cancel` (and the dashboard's cancel button) says.
    pub fn message(&self, root: &Path) -> String {
        match self {
            Cancelled::NoState => format!(
                "pagent: no loop to cancel in {} (no state file).",
                root.display()
            ),
            Cancelled::SetAside { error, aside } => format!(
                "pagent: the state file was corrupt ({error}); moved it to {aside}. No loop is active now."
            ),
            Cancelled::NotActive(state) => match state.ended_at {
                Some(ended) => format!(
                    "pagent: no active loop to cancel (the last one, {}, {} {} ago).",
                    printable(&state.workflow, false),
                    ended_word(state.status),
                    pagent_engine::format_duration(now().since(ended))
                ),
                None => format!(
                    "pagent: no active loop to cancel (the last one, {}, {}).",
                    printable(&state.workflow, false),
                    ended_word(state.status)
                ),
            },
            Cancelled::NotYours => "pagent: the active loop in .claude/pagent-pipeline.json was not set up by you for this project \
                 (or is an older copy), so pagent ignores it already: nothing to cancel. \
                 Delete the file if you want it gone; starting your own loop replaces it."
                .to_owned(),
            Cancelled::Done { was } => {
                let iterations = count(was.total_iterations(), "iteration");
                let what = match was.kind {
                    Kind::Ralph => format!("the Ralph loop after {iterations}"),
                    Kind::Pipeline => format!(
                        "the {} pipeline at stage {} ({} of {}), after {iterations}",
                        printable(&was.workflow, false),
                        printable(&was.current().name, false),
                        was.stage + 1,
                        was.max_stages,
                    ),
                };
                format!("pagent: cancelled {what}. Claude can stop now.")
            }
        }
    }
}

impl Paused {
    /// What `pagent pause` (and the dashboard's pause button) says.
    pub fn message(&self) -> String {
        match self {
            Paused::NoActiveLoop => "pagent: no active loop to pause in this project.".to_owned(),
            Paused::NotYours => {
                "pagent: the active loop was not set up by you for this project, so pagent \
                 ignores it already: nothing to pause."
                    .to_owned()
            }
            Paused::Already(state) => format!(
                "pagent: {} is paused already; `pagent resume` continues it.",
                what(state)
            ),
            Paused::Done(state) => {
                let effect = match whose_loop(state, None) {
                    Whose::Runner => "`pagent loop` finishes the iteration it is in, then waits",
                    _ => "its session may stop, and no iteration is counted",
                };
                format!(
                    "pagent: paused {}: {effect}. `pagent resume` continues it, `pagent cancel` ends it.",
                    what(state)
                )
            }
        }
    }
}

impl Resumed {
    /// The first line `pagent resume` (and the dashboard's resume button) says; the
    /// command prints the loop's prompt after it.
    pub fn message(&self) -> String {
        match self {
            Resumed::NoActiveLoop => "pagent: no active loop to resume in this project.".to_owned(),
            Resumed::OtherSession { owner, workflow } => format!(
                "the active {} loop belongs to another Claude Code session ({}); resume it there, \
                 or end it with `pagent cancel`",
                printable(workflow, false),
                printable(owner, false)
            ),
            Resumed::NotYours => {
                "the loop state is not yours (see `pagent status`), so it cannot be resumed"
                    .to_owned()
            }
            Resumed::Done { state, was_paused } => {
                let how = HOW_TO_STOP;
                if *was_paused {
                    format!("pagent: resumed {}. {how}", what(state))
                } else {
                    format!("pagent: {} was not paused; it goes on. {how}", what(state))
                }
            }
        }
    }
}

/// "was cancelled", "completed", "gave up", as a loop's end reads in a sentence after its
/// name ("the loop gave up").
pub fn ended_word(status: Status) -> &'static str {
    match status {
        Status::Cancelled => "was cancelled",
        Status::Complete => "completed",
        Status::GaveUp => "gave up",
        Status::Active => "is active",
    }
}

/// "the Ralph loop", "the default pipeline at stage qa".
fn what(state: &State) -> String {
    match state.kind {
        pagent_engine::Kind::Ralph => "the Ralph loop".to_owned(),
        pagent_engine::Kind::Pipeline => format!(
            "the {} pipeline at stage {}",
            printable(&state.workflow, false),
            printable(&state.current().name, false)
        ),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A loop that ended reads as a sentence whatever the state file holds: with its end
    /// time or without one (a state written before pagent kept it), never "is gave_up".
    #[test]
    fn cancel_after_a_loop_ended_says_how_it_ended() {
        let mut state = State::new_ralph(
            "task".into(),
            "DONE".into(),
            pagent_engine::SetupOptions::default(),
            None,
            pagent_engine::Timestamp(0),
        );
        state.status = Status::GaveUp;
        let said =
            |state: &State| Cancelled::NotActive(Box::new(state.clone())).message(Path::new("/p"));
        assert_eq!(
            said(&state),
            "pagent: no active loop to cancel (the last one, ralph, gave up)."
        );
        state.status = Status::Cancelled;
        assert_eq!(
            said(&state),
            "pagent: no active loop to cancel (the last one, ralph, was cancelled)."
        );
    }
}

//! The user's three levers on a loop, from a terminal, a Claude Code session or the
//! dashboard alike: [`cancel`], [`pause`] and [`resume`]. `pagent cancel`, `pagent pause`
//! and `pagent resume` print what these return; the dashboard's buttons and the slash
//! commands call the very same functions, so a button is the command, not a copy of it.
//!
//! Each is a decision applied like every other ([`super::apply`]): compare-and-swap over
//! the state it was decided on, decided again when another writer got there first. Nobody
//! holds the state lock across a check or an agent run, so each lands at once. Only the
//! user's own loop is touched (a stranger's state is ignored by pagent anyway, and pagent
//! writes nothing for a stranger); cancel is the one that also sets a corrupt state file
//! aside, because it can only make pagent do less.
//!
//! Who asks ([`By`]) and who drives the loop ([`Driven`]) decide what is allowed and what
//! is said (`words.rs`): a Claude Code session may not end another session's loop (it is
//! told how to), unless that session was quit, and may take such a loop over with
//! `/pagent:resume`; a loop whose session was quit is not "resumed" from a terminal into
//! a state nothing drives.

use std::path::PathBuf;

use pagent_engine::notice::By;
use pagent_engine::{Action, Decision, LogEntry, Outcome, State, Status, Whose, whose_loop};

use crate::cli::env::Env;
use crate::cli::hint::Hinted;
use crate::io::now;
use crate::store::eventlog::Event;
use crate::store::project::Project;
use crate::store::user::UserDir;
use crate::store::{self, Ownership, Warn};
use crate::world::driven::Driven;

mod words;

pub use words::{HOW_TO_STOP, ended_word};

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
    /// Asked from a Claude Code session whose loop it is not (and whose own session was
    /// not quit): refused, with how to cancel it.
    OtherSession {
        owner: String,
        was: Box<State>,
    },
    Done {
        was: Box<State>,
        driven: Driven,
        /// Whether a `pagent loop` drives it now (a runner's loop).
        running: Option<bool>,
        /// The loop's own session, when another session (the owner was quit) cancelled it.
        owner_quit: Option<String>,
    },
}

/// What [`pause`] did.
#[derive(Debug)]
pub enum Paused {
    NoActiveLoop,
    NotYours,
    Already { state: Box<State>, driven: Driven },
    Done { state: Box<State>, driven: Driven },
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
    /// Asked outside any session for a loop whose session was quit: nothing would drive
    /// it, so it stays paused, and the user is told how to go on.
    SessionGone {
        state: Box<State>,
        root: PathBuf,
    },
    Done {
        state: Box<State>,
        was_paused: bool,
        driven: Driven,
        /// Asked in the loop's own session (or one that took it over).
        in_session: bool,
        /// This session took over a loop whose own session was quit.
        took_over: bool,
        running: Option<bool>,
        root: PathBuf,
    },
}

/// Ends the active loop (status `cancelled`, kept for status and the log), asked `by` a
/// terminal, the dashboard or a session. The user's notifier hears of it from `apply`, as
/// of any loop's end.
pub fn cancel(
    project: &Project,
    env: &Env,
    by: By<'_>,
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
        let owner_quit = match (whose_loop(&state, by.session()), by) {
            (Whose::Other(owner), By::Session(_)) if pagent_engine::pause::session_gone(&state) => {
                Some(owner.to_owned())
            }
            (Whose::Other(owner), By::Session(_)) => {
                return Ok(Cancelled::OtherSession {
                    owner: owner.to_owned(),
                    was: Box::new(state),
                });
            }
            _ => None,
        };
        // Make sure a secret exists before deciding: a cancel never fails for want of one.
        store::secret::read_or_create_secret(user_dir)?;
        let outcome = cancelled(&state, by, now);
        let logged = |entry| Event::of(entry, now, by.session());
        if super::apply(project, env, &state, &outcome, logged, warn)?.is_none() {
            continue;
        }
        let driven = Driven::of(project, user_dir, &state);
        return Ok(Cancelled::Done {
            was: Box::new(state),
            driven,
            running: runner_running(project, driven),
            owner_quit,
        });
    }
    anyhow::bail!(
        Hinted::new("the loop state kept changing while pagent tried to cancel it")
            .hint("run `pagent cancel` again")
    )
}

/// Whether a `pagent loop` drives the loop now; `None` for a session's loop.
fn runner_running(project: &Project, driven: Driven) -> Option<bool> {
    (driven != Driven::Session)
        .then(|| project.runner_is_running())
        .flatten()
}

/// The cancelled state and its log line.
fn cancelled(state: &State, by: By<'_>, now: pagent_engine::Timestamp) -> Outcome {
    let mut cancelled = state.clone();
    let by_words = match by {
        By::Terminal => "cancelled by the user".to_owned(),
        By::Dashboard => "cancelled by the user (from the dashboard)".to_owned(),
        By::Session(s) => format!("cancelled by the user (session {s})"),
    };
    pagent_engine::budget::tick(&mut cancelled, now);
    cancelled.finish(Status::Cancelled, by_words.clone(), now);
    // A cancel from a terminal, the dashboard or another session: the loop's session
    // hears of it, and from where.
    cancelled.session_notice = pagent_engine::notice::cancelled_elsewhere(state, by);
    Outcome {
        decision: Decision::Allow,
        write: Some(cancelled),
        log: Some(entry(state, Action::Cancel, by_words)),
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
            let driven = Driven::of(project, user_dir, &state);
            return Ok(Paused::Already {
                state: Box::new(state),
                driven,
            });
        };
        let outcome = Outcome {
            decision: Decision::Allow,
            write: Some(next),
            log: Some(entry(&state, Action::Pause, format!("paused: {why}"))),
        };
        let logged = |entry| Event::of(entry, now, None);
        if let Some(written) = super::apply(project, env, &state, &outcome, logged, warn)? {
            let driven = Driven::of(project, user_dir, &written);
            return Ok(Paused::Done {
                state: Box::new(written),
                driven,
            });
        }
    }
    anyhow::bail!(
        Hinted::new("the loop state kept changing while pagent tried to pause it")
            .hint("try again")
    )
}

/// Continues a paused loop (and starts its no-progress count afresh), asked `by` a
/// session (only that session's loop, or one whose own session was quit, which it takes
/// over), a terminal or the dashboard (any of the user's loops that something drives).
pub fn resume(
    project: &Project,
    env: &Env,
    by: By<'_>,
    warn: &mut dyn Warn,
) -> anyhow::Result<Resumed> {
    let user_dir = &UserDir::of(env);
    for _ in 0..TRIES {
        let Some(state) = store::read_state(project)?.filter(State::is_active) else {
            return Ok(Resumed::NoActiveLoop);
        };
        let gone = pagent_engine::pause::session_gone(&state);
        let took_over = match (whose_loop(&state, by.session()), by) {
            (Whose::Other(_), By::Session(_)) if gone => true,
            (Whose::Other(owner), By::Session(_)) => {
                return Ok(Resumed::OtherSession {
                    owner: owner.to_owned(),
                    workflow: state.workflow.clone(),
                });
            }
            _ => false,
        };
        if store::ownership(project, user_dir, &state) != Ownership::Own {
            return Ok(Resumed::NotYours);
        }
        if gone && by.session().is_none() {
            return Ok(Resumed::SessionGone {
                state: Box::new(state),
                root: project.root.clone(),
            });
        }
        let driven = Driven::of(project, user_dir, &state);
        let done = |state: State, was_paused| Resumed::Done {
            state: Box::new(state),
            was_paused,
            driven,
            in_session: by.session().is_some(),
            took_over,
            running: runner_running(project, driven),
            root: project.root.clone(),
        };
        if state.paused.is_none() && state.limit_wait.is_none() {
            // Nothing to write: the loop goes on as it is (the command hands the model its
            // prompt, e.g. after Esc interrupted the turn). A usage-limit wait is ended
            // below, like a pause.
            return Ok(done(state, false));
        }
        let now = now();
        let next = match by {
            By::Session(session) if took_over => {
                pagent_engine::pause::take_over(&state, session, now)
            }
            _ => pagent_engine::pause::resume(&state, now),
        };
        let detail = if took_over {
            format!(
                "resumed by the user in session {}, which took the loop over (its own session was quit)",
                by.session().unwrap_or_default()
            )
        } else {
            "resumed by the user".to_owned()
        };
        let outcome = Outcome {
            decision: Decision::Allow,
            write: Some(next),
            log: Some(entry(&state, Action::Resume, detail)),
        };
        let logged = |entry| Event::of(entry, now, by.session());
        if let Some(written) = super::apply(project, env, &state, &outcome, logged, warn)? {
            // A usage-limit wait the user ends is resumed as much as a pause.
            return Ok(done(written, true));
        }
    }
    anyhow::bail!(
        Hinted::new("the loop state kept changing while pagent tried to resume it")
            .hint("try again")
    )
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

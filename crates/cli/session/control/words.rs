//! What the levers say: each answer of [`super::cancel`], [`super::pause`] and
//! [`super::resume`] in words that fit who drives the loop (a session, `pagent loop`, a
//! task of `pagent parallel`) and who asked. A `pagent loop` has no session, so no
//! "Esc" and no "Claude can stop now"; a session's loop is not set going from a
//! terminal; a parallel task is one of several.

use std::path::Path;

use pagent_engine::{Kind, State, Status, count};

use super::{Cancelled, Paused, Resumed};
use crate::cli::ui::printable;
use crate::io::now;
use crate::world::driven::Driven;

/// How the user stops a loop in a session, as the start line and the resume line say it:
/// Esc interrupts the turn (and the next message pauses the loop), then the cancel
/// command ends it. (A cancel typed while Claude works, without Esc, ends the loop at its
/// next stop: `docs/commands.md`.)
pub const HOW_TO_STOP: &str = "To stop it: Esc, then /pagent:cancel.";

/// How the user stops a loop a runner drives.
const HOW_TO_STOP_A_RUNNER: &str = "`pagent pause` pauses it, `pagent cancel` ends it.";

impl Cancelled {
    /// What `pagent cancel` (and the dashboard's cancel button, and `/pagent:cancel`)
    /// says.
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
            Cancelled::OtherSession { owner, was } => format!(
                "pagent: {} belongs to another Claude Code session ({}), so it was not \
                 cancelled from here: type /pagent:cancel in that session, or run `pagent \
                 cancel` in a terminal to end it anyway.",
                what(was),
                printable(owner, false)
            ),
            Cancelled::Done {
                was,
                owner_quit: Some(owner),
                ..
            } => format!(
                "pagent: cancelled {}; it was the loop of another Claude Code session ({}), which \
                 was quit.",
                done_what(was),
                printable(owner, false)
            ),
            Cancelled::Done {
                was,
                driven,
                running,
                ..
            } => cancelled_words(was, *driven, *running),
        }
    }
}

fn cancelled_words(was: &State, driven: Driven, running: Option<bool>) -> String {
    let what = done_what(was);
    match (driven, running) {
        (Driven::Session, _) => format!("pagent: cancelled {what}. Claude can stop now."),
        (Driven::Loop, Some(true)) => {
            format!("pagent: cancelled {what}: `pagent loop` stops its agent now.")
        }
        (Driven::Loop, _) => {
            format!("pagent: cancelled {what} (no `pagent loop` was running it).")
        }
        (Driven::Parallel, Some(true)) => format!(
            "pagent: cancelled this task's loop ({what}): `pagent parallel` stops its agent \
             now; the other tasks go on."
        ),
        (Driven::Parallel, _) => format!(
            "pagent: cancelled this task's loop ({what}; no `pagent parallel` was running it)."
        ),
    }
}

impl Paused {
    /// What `pagent pause` (and the dashboard's pause button) says.
    pub fn message(&self, root: &Path) -> String {
        match self {
            Paused::NoActiveLoop => "pagent: no active loop to pause in this project.".to_owned(),
            Paused::NotYours => {
                "pagent: the active loop was not set up by you for this project, so pagent \
                 ignores it already: nothing to pause."
                    .to_owned()
            }
            Paused::Already { state, driven } => format!(
                "pagent: {} is paused already. {}.",
                what(state),
                sentence(&driven.go_on(state, root))
            ),
            Paused::Done { state, driven } => {
                let effect = match driven {
                    Driven::Session => format!(
                        "paused {}: its Claude Code session may stop, and no iteration is counted",
                        what(state)
                    ),
                    Driven::Loop => format!(
                        "paused {}: `pagent loop` finishes the iteration it is in, then waits",
                        what(state)
                    ),
                    Driven::Parallel => "paused this task's loop: `pagent parallel` finishes the \
                         iteration it is in, then waits"
                        .to_owned(),
                };
                format!(
                    "pagent: {effect}. {}.",
                    sentence(&driven.go_on(state, root))
                )
            }
        }
    }
}

impl Resumed {
    /// The first line `pagent resume` (and the dashboard's resume button, and
    /// `/pagent:resume`) says; the command prints the loop's prompt after it.
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
            Resumed::SessionGone { state, root } => format!(
                "pagent: {} stays paused, because its Claude Code session was quit. {}.",
                what(state),
                sentence(&Driven::Session.go_on(state, root))
            ),
            Resumed::Done { .. } => self.done_words(),
        }
    }

    fn done_words(&self) -> String {
        let Resumed::Done {
            state,
            was_paused,
            driven,
            in_session,
            took_over,
            running,
            root,
        } = self
        else {
            return String::new();
        };
        let what = what(state);
        let verb = if *was_paused {
            format!("resumed {what}")
        } else {
            format!("{what} was not paused")
        };
        let root = root.display().to_string();
        let root = printable(&root, false);
        match (driven, running) {
            (Driven::Session, _) if *took_over => {
                format!("pagent: {verb} in this session (its own session was quit). {HOW_TO_STOP}")
            }
            (Driven::Session, _) if *in_session => {
                let goes_on = if *was_paused { "" } else { "; it goes on" };
                format!("pagent: {verb}{goes_on}. {HOW_TO_STOP}")
            }
            (Driven::Session, _) => format!(
                "pagent: {verb}: Claude goes on with it at its next stop; if its session is \
                 idle, /pagent:resume there sets it going."
            ),
            (Driven::Loop | Driven::Parallel, Some(false)) => format!(
                "pagent: {verb}, but no `pagent loop` runs it: `pagent loop` in {root} goes on \
                 with it."
            ),
            (Driven::Loop, _) => {
                format!("pagent: {verb}: `pagent loop` goes on with it. {HOW_TO_STOP_A_RUNNER}")
            }
            (Driven::Parallel, _) => format!(
                "pagent: {verb}: `pagent parallel` goes on with this task. {HOW_TO_STOP_A_RUNNER}"
            ),
        }
    }
}

/// "the Ralph loop after 3 iterations", "the default pipeline at stage qa (2 of 5), after
/// 4 iterations".
fn done_what(was: &State) -> String {
    let iterations = count(was.total_iterations(), "iteration");
    match was.kind {
        Kind::Ralph => format!("the Ralph loop after {iterations}"),
        Kind::Pipeline => format!(
            "the {} pipeline at stage {} ({} of {}), after {iterations}",
            printable(&was.workflow, false),
            printable(&was.current().name, false),
            was.stage + 1,
            was.max_stages,
        ),
    }
}

/// `text` as a sentence of its own: its first letter in capitals.
fn sentence(text: &str) -> String {
    let mut chars = text.chars();
    chars.next().map_or_else(String::new, |first| {
        first.to_uppercase().chain(chars).collect()
    })
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
        Kind::Ralph => "the Ralph loop".to_owned(),
        Kind::Pipeline => format!(
            "the {} pipeline at stage {}",
            printable(&state.workflow, false),
            printable(&state.current().name, false)
        ),
    }
}

#[cfg(test)]
mod tests;

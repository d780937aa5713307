//! Who drives a loop, as the words about it must say (issue 30, §4): a Claude Code
//! session (the Stop hook), `pagent loop`, or one of `pagent parallel`'s tasks. A loop of
//! `pagent loop` has no session, so "Esc, then /pagent:cancel" or "Claude can stop now"
//! is not true of it; a session's idle loop is not set going by `pagent resume` in a
//! terminal; a parallel task is one of several. The state says hook or runner; the
//! register of loops says which runner started it.
//!
//! [`Driven::go_on`] is the one sentence every place that shows a paused loop ends with
//! (`pagent status`, `status --all`, the dashboard): what to type to go on, and to end it.

use std::path::Path;

use pagent_engine::{Driver, State};

use crate::cli::ui::printable;
use crate::store::project::Project;
use crate::store::register::{self, Origin};
use crate::store::user::{UserDir, project_key};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Driven {
    /// The Stop hook of one Claude Code session.
    Session,
    /// `pagent loop`, started by the user.
    Loop,
    /// A `pagent loop` that `pagent parallel` started for one of its tasks.
    Parallel,
}

impl Driven {
    /// Who drives `state`'s loop in `project`.
    pub fn of(project: &Project, user_dir: &UserDir, state: &State) -> Driven {
        Driven::from_origin(state, || {
            register::find(user_dir, &project_key(&project.root)).map(|entry| entry.origin)
        })
    }

    /// The same, with the register's origin of the loop given (the dashboard has it).
    pub fn from_origin(state: &State, origin: impl FnOnce() -> Option<Origin>) -> Driven {
        match state.driver {
            Driver::Hook => Driven::Session,
            Driver::Loop if origin() == Some(Origin::Parallel) => Driven::Parallel,
            Driver::Loop => Driven::Loop,
        }
    }

    /// What to type to go on with the paused loop of `state` in `root`, and to end it.
    pub fn go_on(self, state: &State, root: &Path) -> String {
        let gone = state.paused.as_ref().is_some_and(|p| p.session_gone);
        match self {
            Driven::Session if gone => format!(
                "`claude --resume {}` in {}, then /pagent:resume, goes on with it (nothing drives \
                 it until then); /pagent:cancel or `pagent cancel` ends it",
                printable(state.session_id.as_deref().unwrap_or("SESSION"), false),
                printable(&root.display().to_string(), false)
            ),
            Driven::Session => {
                "/pagent:resume in its Claude Code session continues it, /pagent:cancel (or \
                 `pagent cancel`) ends it"
                    .to_owned()
            }
            Driven::Loop => "`pagent resume` continues it, `pagent cancel` ends it".to_owned(),
            Driven::Parallel => {
                "`pagent resume` continues this task, `pagent cancel` ends it (the other tasks \
                 go on)"
                    .to_owned()
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sentence a paused loop ends with, one per driver.
    #[test]
    fn item_a_what_to_type_fits_who_drives_the_loop() {
        let mut state = State::new_ralph(
            "Fix it".into(),
            "DONE".into(),
            pagent_engine::SetupOptions {
                session_id: Some("35f6".into()),
                ..pagent_engine::SetupOptions::default()
            },
            None,
            pagent_engine::Timestamp(0),
        );
        state.paused = Some(pagent_engine::Pause::new(
            pagent_engine::Timestamp(1),
            "you paused it",
        ));
        let root = Path::new("/home/user/project");
        let mut said = Vec::new();
        said.push(Driven::Session.go_on(&state, root));
        if let Some(pause) = &mut state.paused {
            pause.session_gone = true;
        }
        said.push(Driven::Session.go_on(&state, root));
        state.driver = Driver::Loop;
        for driven in [Driven::Loop, Driven::Parallel] {
            said.push(driven.go_on(&state, root));
        }
        insta::assert_snapshot!(said.join("\n"));
        assert_eq!(
            Driven::from_origin(&state, || Some(Origin::Parallel)),
            Driven::Parallel
        );
        assert_eq!(Driven::from_origin(&state, || None), Driven::Loop);
        state.driver = Driver::Hook;
        assert_eq!(
            Driven::from_origin(&state, || Some(Origin::Parallel)),
            Driven::Session
        );
    }
}

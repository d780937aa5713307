//! While the loop runs: is it still this runner's? A cancel, a removal, a `--force`
//! replacement or a hand-back to the Stop hook stops the agent and the runner.

use std::time::{Duration, Instant};

use pagent_engine::{State, Whose, whose_loop};

use crate::cli::exit::ExitStatus;
use crate::runner::loop_event::Ending;
use crate::runner::progress::Progress;
use crate::session::control::ended_word;
use crate::store;
use crate::store::project::Project;

/// How often a running agent's runner looks whether its loop is still its own.
const WATCH_EVERY: Duration = Duration::from_millis(250);

/// Watches, while an agent runs, whether the loop is still this runner's: a cancel, a
/// removal or a `--force` replacement stops the agent within [`WATCH_EVERY`].
pub(super) struct Watch<'a> {
    project: &'a Project,
    loop_id: String,
    last: Instant,
}

impl<'a> Watch<'a> {
    pub(super) fn new(project: &'a Project, loop_id: &str) -> Watch<'a> {
        Watch {
            project,
            loop_id: loop_id.to_owned(),
            last: Instant::now(),
        }
    }

    pub(super) fn still_ours(&mut self) -> bool {
        if self.last.elapsed() < WATCH_EVERY {
            return true;
        }
        self.last = Instant::now();
        match store::read_state(self.project) {
            Ok(Some(state)) => {
                state.is_active()
                    && whose_loop(&state, None) == Whose::Runner
                    && state.loop_id == self.loop_id
            }
            Ok(None) => false,
            // Unreadable for a moment: keep going; the write after the run will tell.
            Err(_) => true,
        }
    }
}

/// Why the loop must stop, if something other than this runner ended it (`pagent
/// cancel`), replaced it, handed it back to the Stop hook, or removed the state.
pub(super) fn ended_elsewhere(project: &Project, ours: &State) -> Option<String> {
    match store::read_state(project) {
        Ok(Some(state)) if state.loop_id != ours.loop_id => {
            Some("another loop replaced this one".to_owned())
        }
        Ok(Some(state)) if state.is_active() && whose_loop(&state, None) == Whose::Runner => None,
        Ok(Some(state)) if !state.is_active() => Some(
            state
                .end_reason
                .unwrap_or_else(|| format!("the loop {}", ended_word(state.status))),
        ),
        Ok(Some(_)) => Some("another loop replaced this one".to_owned()),
        Ok(None) => Some("the state file was removed".to_owned()),
        // Unreadable (corrupt, permissions): keep going; the write will report it.
        Err(_) => None,
    }
}

pub(super) fn stopped_elsewhere(
    state: &State,
    reason: &str,
    progress: &mut Progress,
) -> ExitStatus {
    progress.finished(state, Ending::Stopped, reason);
    ExitStatus::Interrupted
}

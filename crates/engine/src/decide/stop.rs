//! [`decide_stop`]: one Stop of a Claude Code session.
//!
//! The order is the safety contract: a loop that is not active or that `pagent loop`
//! drives is not the hook's; another session's stop is never touched, and a stop that
//! names no session never claims a loop; an unsealed state is never acted on (nor
//! rewritten, which would seal it); a paused loop lets the user stop. Only then does the
//! iteration policy run, and a continuation Claude Code would drop (its cap on
//! continuations in a row, `block_cap.rs`) pauses the loop instead.

use super::{Belongs, Decision, LogEntry, Outcome, belongs, bounded, iteration};
use crate::block_cap::{BlockCap, TurnSoFar, keep_within};
use crate::{Action, State, Timestamp, World};

/// What the binary knows about this Stop beyond the state itself.
#[derive(Debug, Clone, Copy)]
pub struct StopEvent<'a> {
    pub session_id: Option<&'a str>,
    /// Whether the state's seal verified with this user's secret for this project.
    pub seal_valid: bool,
    /// Whether the user was already told about this unsealed state.
    pub unsealed_warned: bool,
    pub now: Timestamp,
    /// The turn this Stop ends, and Claude Code's cap on its continuations.
    pub turn: TurnSoFar,
    pub block_cap: BlockCap,
}

/// The notice for a state whose seal does not verify (said once).
const UNSEALED_NOTICE: &str = "pagent: ignoring .claude/pagent-pipeline.json: it was not set up by you for this project \
     (its seal does not verify), so pagent will not run its commands, keep the session going or \
     write anything here. Delete the file, or start your own loop with /pagent:run or /pagent:ralph.";

/// Decides one Stop of the session `event.session_id` against `state`.
pub fn decide_stop(event: &StopEvent<'_>, state: &State, world: &mut dyn World) -> Outcome {
    bounded(decide_stop_unbounded(event, state, world))
}

fn decide_stop_unbounded(event: &StopEvent<'_>, state: &State, world: &mut dyn World) -> Outcome {
    if !state.is_active() {
        return Outcome::silent();
    }
    let stage_name = state.current().name.clone();
    let iteration = state.iterations[state.stage];
    let allowed = |action: Action, detail: String| Outcome {
        decision: Decision::Allow,
        write: None,
        log: Some(LogEntry {
            action,
            stage: stage_name.clone(),
            iteration,
            detail,
        }),
    };
    let session = match (belongs(state, event.session_id), event.session_id) {
        (Belongs::Runner, _) => return Outcome::silent(),
        (Belongs::OtherSession(owner) | Belongs::NoSessionId { owner: Some(owner) }, _) => {
            let detail = format!(
                "stop of session {} allowed: the loop belongs to {owner}",
                event.session_id.unwrap_or("(unknown)")
            );
            return allowed(Action::OtherSession, detail);
        }
        (Belongs::Unclaimed | Belongs::Owner, Some(session)) => session,
        // Only a named session may claim a loop: a stop that names none (a client that
        // sent `{}`) would otherwise be blocked, and by the next nameless stop again.
        (Belongs::NoSessionId { owner: None } | Belongs::Unclaimed | Belongs::Owner, _) => {
            return allowed(
                Action::OtherSession,
                "stop without a session id allowed: only a named session can claim the loop"
                    .to_owned(),
            );
        }
    };
    if !event.seal_valid {
        let mut outcome = allowed(
            Action::Unsealed,
            "the state file is not sealed by this user for this project; ignored".to_owned(),
        );
        if !event.unsealed_warned {
            outcome.decision = Decision::Notify(UNSEALED_NOTICE.to_owned());
        }
        return outcome;
    }

    let mut claimed = state.clone();
    if claimed.session_id.is_none() {
        claimed.session_id = Some(session.to_owned());
    }
    if let Some(pause) = &claimed.paused {
        // The user took over: their stops are theirs, and count nothing.
        if pause.told {
            return Outcome::silent();
        }
        let message = crate::pause::pause_notice(&claimed);
        let detail = format!("stop allowed: the loop is paused because {}", pause.why);
        let mut told = claimed.clone();
        if let Some(pause) = &mut told.paused {
            pause.told = true;
            // The session stops again: it is back (`claude --resume`), if it was quit.
            pause.session_gone = false;
        }
        return Outcome {
            decision: Decision::Notify(message),
            write: Some(told),
            log: Some(LogEntry {
                action: Action::Paused,
                stage: stage_name,
                iteration,
                detail,
            }),
        };
    }
    let step = iteration::decide_unbounded(&claimed, world, event.now);
    keep_within(step, &claimed, event.turn, event.block_cap, event.now).into()
}

//! The loop policy: what every hook event and every `pagent loop` iteration decides.
//!
//! - [`decide_stop`] (`stop.rs`): one Stop of a Claude Code session. Order matters and is
//!   part of the safety contract (DESIGN.md, "The engine"): inactive or loop-driven states
//!   allow silently; another session's stop is never touched; an unsealed state is never
//!   acted on (nor rewritten, which would seal it); only then is the current stage's
//!   condition evaluated.
//! - [`decide_iteration`] (`iteration.rs`): the policy proper, shared by the Stop hook and
//!   `pagent loop`: advance, re-prompt or give up, bounded by the iteration and
//!   no-progress limits.
//! - [`decide_post_tool_use`] (`post_tool_use.rs`): who gets an edited file checked, under
//!   which settings, and what the loop remembers of the result.
//!
//! "Is this loop this session's?" has one answer, [`whose_loop`], which every caller (the
//! hooks, set-up, the runner) asks; what each does with the answer is its own policy.
//! A hook asks it as [`belongs`], which also tells a hook whose input names no session
//! apart: every hook decision reads that one answer.

use crate::render::{MESSAGE_CAP, cap_message};
use crate::{Action, Driver, State};

mod iteration;
mod post_tool_use;
mod stop;

pub use iteration::decide_iteration;
pub use post_tool_use::{
    CheckPlan, EditEvent, decide_post_tool_use, record_check, record_check_log,
};
pub use stop::{StopEvent, decide_stop};

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Decision {
    /// Let the session stop, silently.
    Allow,
    /// Let the session stop and tell the user something.
    Notify(String),
    /// Keep the session going: `reason` is the model's next prompt, `message` the user's.
    Block { reason: String, message: String },
}

/// One line of the event log, without the parts only the shell knows (time, session).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LogEntry {
    pub action: Action,
    pub stage: String,
    pub iteration: u32,
    pub detail: String,
}

/// What a hook event decided: the answer, and what (if anything) to write and log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub decision: Decision,
    /// The state to write back, if anything changed.
    pub write: Option<State>,
    pub log: Option<LogEntry>,
}

/// What one iteration decided: it always moves the loop (a counter, a stage, an end), so
/// it always has a state to write and a line to log.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    pub decision: Decision,
    pub write: State,
    pub log: LogEntry,
}

impl From<Step> for Outcome {
    fn from(step: Step) -> Outcome {
        Outcome {
            decision: step.decision,
            write: Some(step.write),
            log: Some(step.log),
        }
    }
}

impl Outcome {
    pub(crate) fn silent() -> Outcome {
        Outcome {
            decision: Decision::Allow,
            write: None,
            log: None,
        }
    }
}

/// Whose a loop is, as one session (or a runner, which names none) sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Whose<'a> {
    /// Driven by `pagent loop`: its runner's. The sessions of the agents it starts are
    /// fresh every iteration, so none of them is "the" session.
    Runner,
    /// Bound to the asking session.
    This,
    /// Bound to no session yet: the first named session whose Stop sees it claims it.
    Unclaimed,
    /// Bound to another session, or to a session while the asker names none.
    Other(&'a str),
}

/// The one answer to "is this loop this session's?". A session that names none never
/// owns a claimed loop; only the Stop hook ever claims an unclaimed one.
pub fn whose_loop<'a>(state: &'a State, session: Option<&str>) -> Whose<'a> {
    if state.driver == Driver::Loop {
        return Whose::Runner;
    }
    match state.session_id.as_deref() {
        None => Whose::Unclaimed,
        Some(owner) if session == Some(owner) => Whose::This,
        Some(owner) => Whose::Other(owner),
    }
}

/// Which session a hook belongs to, as the hooks see a loop: [`belongs`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Belongs<'a> {
    /// Driven by `pagent loop`: no session's (the hooks of its agents stand aside).
    Runner,
    /// The hook's session owns the loop.
    Owner,
    /// Another session owns the loop.
    OtherSession(&'a str),
    /// No session owns the loop yet, and the hook names one: the first Stop that does
    /// claims it.
    Unclaimed,
    /// The hook names no session (a client that sent no `session_id`): it owns no loop
    /// and claims none. `owner` is the loop's session, if one claimed it.
    NoSessionId { owner: Option<&'a str> },
}

/// The one rule for which session a hook belongs to (owner, another session, unclaimed,
/// no session id; or a runner's loop): [`whose_loop`] as a hook sees it, with a hook that
/// names no session told apart. What each hook does with the answer is its policy: a Stop
/// of the owner or of an unclaimed loop continues it (claiming it); the prompt, the
/// compaction, SessionEnd and a session's notice act for the owner only; a StopFailure
/// for the owner or an unclaimed loop; an edit is checked for the owner, an unclaimed
/// loop (named or not) and a runner's loop.
pub fn belongs<'a>(state: &'a State, session: Option<&str>) -> Belongs<'a> {
    match (whose_loop(state, session), session) {
        (Whose::Runner, _) => Belongs::Runner,
        (Whose::This, _) => Belongs::Owner,
        (Whose::Other(owner), Some(_)) => Belongs::OtherSession(owner),
        (Whose::Unclaimed, Some(_)) => Belongs::Unclaimed,
        (Whose::Other(owner), None) => Belongs::NoSessionId { owner: Some(owner) },
        (Whose::Unclaimed, None) => Belongs::NoSessionId { owner: None },
    }
}

/// The texts an outcome carries besides the block reason (which the prompt module fits)
/// are built from names others chose: a stage name, a promise, a command, a session id. A
/// 130 KB `systemMessage` was seen. Each is cut to [`MESSAGE_CAP`] here, in one place.
fn bounded(mut outcome: Outcome) -> Outcome {
    cap_decision(&mut outcome.decision);
    if let Some(state) = &mut outcome.write {
        cap_state(state);
    }
    if let Some(log) = &mut outcome.log {
        cap_log(log);
    }
    outcome
}

fn bounded_step(mut step: Step) -> Step {
    cap_decision(&mut step.decision);
    cap_state(&mut step.write);
    cap_log(&mut step.log);
    step
}

fn cap(text: &mut String) {
    if text.len() > MESSAGE_CAP {
        *text = cap_message(text, MESSAGE_CAP);
    }
}

fn cap_decision(decision: &mut Decision) {
    match decision {
        Decision::Allow => {}
        Decision::Notify(message) | Decision::Block { message, .. } => cap(message),
    }
}

fn cap_state(state: &mut State) {
    for text in [&mut state.last_feedback, &mut state.end_reason]
        .into_iter()
        .flatten()
    {
        cap(text);
    }
}

fn cap_log(log: &mut LogEntry) {
    cap(&mut log.detail);
    cap(&mut log.stage);
}

#[cfg(test)]
pub(crate) mod tests;

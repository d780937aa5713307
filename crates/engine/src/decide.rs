//! The loop policy for one Stop: [`decide_stop`].
//!
//! Order matters and is part of the safety contract (DESIGN.md, "The engine"):
//! inactive or loop-driven states allow silently; another session's stop is never touched;
//! an unsealed state is never acted on (nor rewritten, which would seal it); only then is
//! the current stage's condition evaluated, and every way forward (advance, re-prompt,
//! give up, complete) is bounded by the iteration and no-progress limits.

use crate::render::{MESSAGE_CAP, cap_message};
use crate::{Evaluation, Kind, State, Status, Timestamp, World, format_duration};

/// What the binary knows about this Stop beyond the state itself.
#[derive(Debug, Clone, Copy)]
pub struct StopEvent<'a> {
    pub session_id: Option<&'a str>,
    /// Whether the state's seal verified with this user's secret for this project.
    pub seal_valid: bool,
    /// Whether the user was already told about this unsealed state.
    pub unsealed_warned: bool,
    pub now: Timestamp,
}

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
    pub action: &'static str,
    pub stage: String,
    pub iteration: u32,
    pub detail: String,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    pub decision: Decision,
    /// The state to write back, if anything changed.
    pub write: Option<State>,
    pub log: Option<LogEntry>,
}

impl Outcome {
    fn silent() -> Outcome {
        Outcome {
            decision: Decision::Allow,
            write: None,
            log: None,
        }
    }
}

/// Decides one Stop of the session `event.session_id` against `state`.
pub fn decide_stop(event: &StopEvent<'_>, state: &State, world: &mut dyn World) -> Outcome {
    bounded(decide_stop_unbounded(event, state, world))
}

/// The texts an outcome carries besides the block reason (which [`compose`] fits) are
/// built from names others chose: a stage name, a promise, a command, a session id. A
/// 130 KB `systemMessage` was seen. Each is cut to [`MESSAGE_CAP`] here, in one place.
fn bounded(mut outcome: Outcome) -> Outcome {
    let cap = |text: &mut String| {
        if text.len() > MESSAGE_CAP {
            *text = cap_message(text, MESSAGE_CAP);
        }
    };
    match &mut outcome.decision {
        Decision::Allow => {}
        Decision::Notify(message) | Decision::Block { message, .. } => cap(message),
    }
    if let Some(state) = &mut outcome.write {
        for text in [&mut state.last_feedback, &mut state.end_reason]
            .into_iter()
            .flatten()
        {
            cap(text);
        }
    }
    if let Some(log) = &mut outcome.log {
        cap(&mut log.detail);
        cap(&mut log.stage);
    }
    outcome
}

fn decide_stop_unbounded(event: &StopEvent<'_>, state: &State, world: &mut dyn World) -> Outcome {
    if !state.is_active() || state.driver == crate::Driver::Loop {
        return Outcome::silent();
    }
    let stage_name = state.current().name.clone();
    let iteration = state.iterations[state.stage];
    if let Some(owner) = state.session_id.as_deref()
        && event.session_id != Some(owner)
    {
        let detail = format!(
            "stop of session {} allowed: the loop belongs to {owner}",
            event.session_id.unwrap_or("(unknown)")
        );
        return Outcome {
            decision: Decision::Allow,
            write: None,
            log: Some(LogEntry {
                action: "other_session",
                stage: stage_name,
                iteration,
                detail,
            }),
        };
    }
    let Some(session) = event.session_id else {
        // Only a named session may claim a loop: a stop that names none (a client that
        // sent `{}`) would otherwise be blocked, and by the next nameless stop again.
        return Outcome {
            decision: Decision::Allow,
            write: None,
            log: Some(LogEntry {
                action: "other_session",
                stage: stage_name,
                iteration,
                detail:
                    "stop without a session id allowed: only a named session can claim the loop"
                        .to_owned(),
            }),
        };
    };
    if !event.seal_valid {
        let detail =
            "the state file is not sealed by this user for this project; ignored".to_owned();
        let log = Some(LogEntry {
            action: "unsealed",
            stage: stage_name,
            iteration,
            detail,
        });
        if event.unsealed_warned {
            return Outcome {
                decision: Decision::Allow,
                write: None,
                log,
            };
        }
        let message = "pagent: ignoring .claude/pagent-pipeline.json: it was not set up by you for this project \
                       (its seal does not verify), so pagent will not run its commands, keep the session going or \
                       write anything here. Delete the file, or start your own loop with /pagent:run or /pagent:ralph."
            .to_owned();
        return Outcome {
            decision: Decision::Notify(message),
            write: None,
            log,
        };
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
        let mut told = claimed.clone();
        if let Some(pause) = &mut told.paused {
            pause.told = true;
        }
        return Outcome {
            decision: Decision::Notify(message),
            write: Some(told),
            log: Some(LogEntry {
                action: "paused",
                stage: stage_name,
                iteration,
                detail: format!("stop allowed: the loop is paused because {}", pause.why),
            }),
        };
    }
    decide_iteration_unbounded(&claimed, world, event.now)
}

/// The loop policy proper, shared by the Stop hook and `pagent loop`: evaluate the
/// current stage, then advance, re-prompt or give up. The caller has already checked that
/// the state is active, that it may act on it, and that it is sealed.
pub fn decide_iteration(state: &State, world: &mut dyn World, now: Timestamp) -> Outcome {
    bounded(decide_iteration_unbounded(state, world, now))
}

fn decide_iteration_unbounded(state: &State, world: &mut dyn World, now: Timestamp) -> Outcome {
    let mut next = state.clone();
    crate::budget::tick(&mut next, now);
    let mut evaluation = state.current().exit_when.evaluate(world);
    if state.checks_gate() {
        text::gate_on_failed_checks(&mut next, &mut evaluation, world);
    }
    // Work that completes the loop completes it, budget or not; anything else stops at
    // a reached budget.
    let completes = evaluation.met && next.stage + 1 >= next.max_stages;
    if !completes && let Some(gave_up) = crate::budget::give_up_if_reached(&next, now) {
        return gave_up;
    }
    if evaluation.met {
        advance(next, &evaluation, now, world)
    } else {
        retry(next, &evaluation, now, world)
    }
}

fn advance(
    mut next: State,
    evaluation: &Evaluation,
    now: Timestamp,
    world: &mut dyn World,
) -> Outcome {
    let done = next.stage;
    let done_name = next.stages[done].name.clone();
    let iteration = next.iterations[done];
    next.last_feedback = None;
    if done + 1 >= next.max_stages {
        let elapsed = format_duration(now.since(next.started_at));
        let total = next.total_iterations();
        let reason = match next.kind {
            Kind::Ralph => format!(
                "the promise was made after {total} iteration{}",
                plural(total)
            ),
            Kind::Pipeline if next.max_stages < next.stages.len() => {
                format!(
                    "{} of {} stages done (max_stages {}) in {total} iterations",
                    next.max_stages,
                    next.stages.len(),
                    next.max_stages
                )
            }
            Kind::Pipeline => format!(
                "all {} stages done in {total} iterations",
                next.stages.len()
            ),
        };
        let message = format!("pagent: {} complete: {reason}, {elapsed}.", next.workflow);
        next.finish(Status::Complete, reason, now);
        let log = LogEntry {
            action: "complete",
            stage: done_name,
            iteration,
            detail: evaluation.summary(),
        };
        return Outcome {
            decision: Decision::Notify(message),
            write: Some(next),
            log: Some(log),
        };
    }
    next.stage = done + 1;
    next.iterations[next.stage] = 1;
    next.no_progress_count = 0;
    next.fingerprint = world.fingerprint();
    let header = format!(
        "pagent · stage {} of {}: {} · iteration 1 of {}\nStage \"{done_name}\" is complete ({}). Now the next stage:",
        next.stage + 1,
        next.max_stages,
        next.current().name,
        next.stage_limit(next.stage),
        evaluation.summary(),
    );
    let prompt = crate::stories::render_stage_prompt(&next, next.stage, world);
    let reason = text::compose(&header, &prompt);
    next.full_prompt_due = false;
    let message = format!(
        "pagent: {done_name} done → {} (stage {} of {})",
        next.current().name,
        next.stage + 1,
        next.max_stages
    );
    let log = LogEntry {
        action: "advance",
        stage: done_name,
        iteration,
        detail: format!("{} → {}", evaluation.summary(), next.current().name),
    };
    Outcome {
        decision: Decision::Block { reason, message },
        write: Some(next),
        log: Some(log),
    }
}

fn retry(
    mut next: State,
    evaluation: &Evaluation,
    now: Timestamp,
    world: &mut dyn World,
) -> Outcome {
    let index = next.stage;
    let name = next.stages[index].name.clone();
    let used = next.iterations[index];
    let limit = next.stage_limit(index);
    let summary = evaluation.summary();
    next.last_feedback = Some(summary.clone());

    let fingerprint = world.fingerprint();
    if fingerprint.is_some() && fingerprint == next.fingerprint {
        next.no_progress_count += 1;
    } else {
        next.no_progress_count = 0;
        next.fingerprint = fingerprint;
    }

    let gave_up = if next.no_progress_limit > 0 && next.no_progress_count >= next.no_progress_limit
    {
        Some(format!(
            "{} turns in a row changed no file (stage {name}: {summary})",
            next.no_progress_count
        ))
    } else if used >= limit {
        Some(format!(
            "stage {name} used all {limit} iterations without meeting its exit condition ({summary})"
        ))
    } else {
        None
    };
    if let Some(reason) = gave_up {
        let message = format!("pagent: gave up: {reason}. /pagent:status shows where it stopped.");
        next.finish(Status::GaveUp, reason.clone(), now);
        let log = LogEntry {
            action: "gave_up",
            stage: name,
            iteration: used,
            detail: reason,
        };
        return Outcome {
            decision: Decision::Notify(message),
            write: Some(next),
            log: Some(log),
        };
    }

    let iteration = used + 1;
    next.iterations[index] = iteration;
    let reason = text::reprompt(&mut next, evaluation, iteration, limit, world);
    let message = text::reprompt_message(&next, evaluation, iteration, limit);
    let log = LogEntry {
        action: "block",
        stage: name,
        iteration,
        detail: summary,
    };
    Outcome {
        decision: Decision::Block { reason, message },
        write: Some(next),
        log: Some(log),
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

mod text;

pub use text::PROMPT_FILE;

#[cfg(test)]
mod tests;

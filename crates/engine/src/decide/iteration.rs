//! [`decide_iteration`]: the loop policy proper, shared by the Stop hook and `pagent
//! loop`. Evaluate the current stage (held back by any failing check of an edited file),
//! then advance, re-prompt or give up. Every way forward is bounded: a stage has at most
//! its iteration limit, and a tree that stops changing ends the loop after
//! `no_progress_limit` turns (0 turns that check off).

use super::{Decision, LogEntry, Step, bounded_step};
use crate::prompt::{advance_prompt, reprompt, reprompt_message};
use crate::{
    Action, Evaluation, Finding, Kind, Probe, RelPath, State, Status, Timestamp, World,
    format_duration,
};

/// Decides one iteration of an active loop the caller may act on (its own, sealed).
pub fn decide_iteration(state: &State, world: &mut dyn World, now: Timestamp) -> Step {
    bounded_step(decide_unbounded(state, world, now))
}

pub(super) fn decide_unbounded(state: &State, world: &mut dyn World, now: Timestamp) -> Step {
    let mut step = decide_after_any_wait(state, world, now);
    // The user hears once that the session's wait for a usage limit is over.
    if let Some(wait) = &state.limit_wait {
        let waited = format!(
            " · waited {} for the usage limit to reset",
            format_duration(now.since(wait.since))
        );
        match &mut step.decision {
            Decision::Block { message, .. } | Decision::Notify(message) => {
                message.push_str(&waited);
            }
            Decision::Allow => {}
        }
    }
    step
}

fn decide_after_any_wait(state: &State, world: &mut dyn World, now: Timestamp) -> Step {
    // A limit the session waited out: the wait ends here, and the turn is decided as
    // any other (the turn the limit cut short had no Stop and counted nothing).
    let mut next = crate::limit::end_wait(state, now);
    // The run that got here worked: failures retried before it are over.
    next.last_failure = None;
    crate::budget::tick(&mut next, now);
    let mut evaluation = crate::stories::evaluate_stage(&mut next, world);
    if state.checks_gate() {
        gate_on_failed_checks(&mut next, &mut evaluation, world);
    }
    // Work that completes the loop completes it, budget or not; anything else stops at
    // a reached budget. So over budget the reviewer (the dearest check) runs only where
    // its verdict can complete the loop: at the last stage (and, as always, only when
    // everything else holds).
    let last_stage = next.stage + 1 >= next.max_stages;
    if last_stage || crate::budget::reached(&next, now).is_none() {
        // Last, because it is the dearest: only when everything above holds.
        crate::review::conclude(&mut next, &mut evaluation, world, now);
    }
    let completes = evaluation.met && last_stage;
    if !completes && let Some(gave_up) = crate::budget::give_up_if_reached(&next, now) {
        return gave_up;
    }
    if evaluation.met {
        advance(next, &evaluation, now, world)
    } else {
        retry(next, &evaluation, now, world)
    }
}

/// Adds a finding per edited file whose latest check failed and that still exists, and
/// forgets the files that are gone.
fn gate_on_failed_checks(next: &mut State, evaluation: &mut Evaluation, world: &mut dyn World) {
    let mut gone = Vec::new();
    for (path, failed) in &next.failing_checks {
        let present = RelPath::new(path)
            .is_ok_and(|rel| !matches!(world.count_lines(&rel, 1), Probe::Missing));
        if !present {
            gone.push(path.clone());
            continue;
        }
        evaluation.met = false;
        evaluation.findings.push(Finding {
            met: false,
            detail: format!(
                "the latest check of {path} failed ({}); fix the file, it is checked again when you edit it",
                failed.checks
            ),
            short: format!("{path}: {} failed", failed.checks),
            output_tail: Some(failed.output.clone()).filter(|o| !o.trim().is_empty()),
        });
    }
    for path in gone {
        next.failing_checks.remove(&path);
    }
}

fn advance(
    mut next: State,
    evaluation: &Evaluation,
    now: Timestamp,
    world: &mut dyn World,
) -> Step {
    let done = next.stage;
    let done_name = next.stages[done].name.clone();
    let iteration = next.iterations[done];
    next.last_feedback = None;
    if done + 1 >= next.max_stages {
        let elapsed = format_duration(now.since(next.started_at));
        let total = next.total_iterations();
        let reason = match next.kind {
            Kind::Ralph if next.current().exit_when.review().is_some() => format!(
                "the promise was made and the reviewer agreed after {total} iteration{}",
                plural(total)
            ),
            Kind::Ralph => format!(
                "the promise was made after {total} iteration{}",
                plural(total)
            ),
            // A stories loop's one stage: what completed it is its plan.
            Kind::Pipeline
                if next.stages.len() == 1 && next.current().exit_when.stories_path().is_some() =>
            {
                format!(
                    "every story is done and every check holds ({}) after {total} iteration{}",
                    evaluation.summary(),
                    plural(total)
                )
            }
            Kind::Pipeline if next.max_stages < next.stages.len() => {
                format!(
                    "{} of {} stages done (max_stages {}) in {}",
                    next.max_stages,
                    next.stages.len(),
                    next.max_stages,
                    crate::render::count(total, "iteration")
                )
            }
            Kind::Pipeline => format!(
                "all {} done in {}",
                crate::render::count(next.stages.len() as u64, "stage"),
                crate::render::count(total, "iteration")
            ),
        };
        let message = format!("pagent: {} complete: {reason}, {elapsed}.", next.workflow);
        next.finish(Status::Complete, reason, now);
        return Step {
            decision: Decision::Notify(message),
            write: next,
            log: LogEntry {
                action: Action::Complete,
                stage: done_name,
                iteration,
                detail: evaluation.summary(),
            },
        };
    }
    next.stage = done + 1;
    next.iterations[next.stage] = 1;
    next.no_progress_count = 0;
    next.fingerprint = crate::progress::mark(&next, world);
    let reason = advance_prompt(&next, &done_name, evaluation, world);
    next.story = crate::stories::story_in_prompt(&next, world);
    next.full_prompt_due = false;
    let message = format!(
        "pagent: {done_name} done → {} (stage {} of {})",
        next.current().name,
        next.stage + 1,
        next.max_stages
    );
    let log = LogEntry {
        action: Action::Advance,
        stage: done_name,
        iteration,
        detail: format!("{} → {}", evaluation.summary(), next.current().name),
    };
    Step {
        decision: Decision::Block { reason, message },
        write: next,
        log,
    }
}

fn retry(mut next: State, evaluation: &Evaluation, now: Timestamp, world: &mut dyn World) -> Step {
    let index = next.stage;
    let name = next.stages[index].name.clone();
    let used = next.iterations[index];
    let limit = next.stage_limit(index);
    let summary = evaluation.summary();
    next.last_feedback = Some(summary.clone());

    let mark = crate::progress::mark(&next, world);
    if crate::progress::changed(next.fingerprint.as_deref(), mark.as_deref()) {
        next.no_progress_count = 0;
        next.fingerprint = mark;
    } else {
        next.no_progress_count += 1;
    }

    let gave_up = if next.no_progress_limit > 0 && next.no_progress_count >= next.no_progress_limit
    {
        Some(format!(
            "{} turns in a row changed no file (stage {name}: {summary})",
            next.no_progress_count
        ))
    } else if used >= limit {
        let used = match limit {
            1 => "its one iteration".to_owned(),
            n => format!("all {n} iterations"),
        };
        Some(format!(
            "stage {name} used {used} without meeting its exit condition ({summary})"
        ))
    } else {
        None
    };
    if let Some(reason) = gave_up {
        let message = format!("pagent: gave up: {reason}. /pagent:status shows where it stopped.");
        next.finish(Status::GaveUp, reason.clone(), now);
        return Step {
            decision: Decision::Notify(message),
            write: next,
            log: LogEntry {
                action: Action::GaveUp,
                stage: name,
                iteration: used,
                detail: reason,
            },
        };
    }

    let iteration = used + 1;
    next.iterations[index] = iteration;
    let reason = reprompt(&mut next, evaluation, iteration, limit, world);
    next.story = crate::stories::story_in_prompt(&next, world);
    let message = reprompt_message(&next, evaluation, iteration, limit);
    Step {
        decision: Decision::Block { reason, message },
        write: next,
        log: LogEntry {
            action: Action::Block,
            stage: name,
            iteration,
            detail: summary,
        },
    }
}

fn plural(n: u32) -> &'static str {
    if n == 1 { "" } else { "s" }
}

//! Every text the model reads from pagent, and its caps, in one place: the stage header
//! (where the loop is), the first prompt of a stage, the re-prompt, and the user's line.
//!
//! Claude Code shows every block reason to the user as `Stop hook error: <reason>` and,
//! since 2.1.259, hands it to the model twice. So a re-prompt of the stage the model is
//! already working on is quiet: the header, what is still missing and the tail of a failed
//! check, then where the full instructions are (`pagent prompt`, `.claude/pagent/prompt.md`).
//! The full stage prompt is sent on stage entry, after the conversation was compacted
//! (`full_prompt_due`), and always to `pagent loop`, whose every iteration is a fresh
//! agent that has read nothing. A ralph task short enough to read at a glance is repeated:
//! re-reading the task is the point of a Ralph loop. Whatever is sent fits
//! [`REASON_CAP`]: [`compose`] keeps the header and cuts the prompt. A `pagent loop` run
//! the runner had to stop opens its next prompt with why ([`stopped_note`]). What an exit
//! condition still misses is worded in [`findings`]. The stage prompts themselves are
//! [`templates`] (Markdown in `crates/engine/builtin/prompts/`), and `pagent parallel --merge`'s
//! resolution prompt is filled in [`merge`].

pub mod findings;
pub mod merge;
pub mod team;
pub mod templates;

use crate::render::{REASON_CAP, cap_head};
use crate::stories::render_stage_prompt;
use crate::{Driver, Evaluation, Kind, State, World};

/// Where the binary keeps the current stage's full prompt for the model to read again.
pub const PROMPT_FILE: &str = ".claude/pagent/prompt.md";
/// A ralph task at most this long (characters) is repeated in every re-prompt.
const RALPH_TASK_INLINE: usize = 600;
/// What a cut header or prompt says.
const CUT_NOTE: &str = "cut to keep the message short";

/// The line above a stage's prompt that says where the loop is, at `iteration` of
/// `limit`: "pagent · stage 2 of 5: qa · iteration 1 of 10".
pub fn stage_header(state: &State, iteration: u32, limit: u32) -> String {
    match state.kind {
        Kind::Ralph => format!("pagent · ralph loop · iteration {iteration} of {limit}"),
        Kind::Pipeline => format!(
            "pagent · stage {} of {}: {} · iteration {iteration} of {limit}",
            state.stage + 1,
            state.max_stages,
            state.current().name
        ),
    }
}

/// The header of the state's current stage at its current iteration.
pub fn current_header(state: &State) -> String {
    stage_header(
        state,
        state.iterations[state.stage],
        state.stage_limit(state.stage),
    )
}

/// The prompt of an iteration that has none pending (a new or resumed `pagent loop`):
/// the current header and the stage's full prompt, capped like every block reason.
pub fn first_prompt(state: &State, world: &mut dyn World) -> String {
    compose(
        &current_header(state),
        &render_stage_prompt(state, state.stage, world),
    )
}

/// The block reason on entering the next stage (`next` already points at it), after
/// `done_name` was met with `evaluation`.
pub fn advance_prompt(
    next: &State,
    done_name: &str,
    evaluation: &Evaluation,
    world: &mut dyn World,
) -> String {
    let header = format!(
        "{}\nStage \"{done_name}\" is complete ({}). Now the next stage:",
        stage_header(next, 1, next.stage_limit(next.stage)),
        evaluation.summary(),
    );
    compose(&header, &render_stage_prompt(next, next.stage, world))
}

/// The block reason of a re-prompt (and clears `full_prompt_due` once it was honoured).
pub fn reprompt(
    next: &mut State,
    evaluation: &Evaluation,
    iteration: u32,
    limit: u32,
    world: &mut dyn World,
) -> String {
    let header = retry_header(next, evaluation, iteration, limit);
    let prompt = render_stage_prompt(next, next.stage, world);
    // A `{{story}}` prompt names a different story as the stories pass: always new.
    let changes = next.kind == Kind::Pipeline && next.current().prompt.contains("{{story}}");
    let full = next.driver == Driver::Loop
        || next.full_prompt_due
        || changes
        || (next.kind == Kind::Ralph && prompt.chars().count() <= RALPH_TASK_INLINE);
    next.full_prompt_due = false;
    if full {
        let label = match next.kind {
            Kind::Ralph => "The task:",
            Kind::Pipeline => "The stage's instructions, again:",
        };
        return compose(&format!("{header}\n{label}"), &prompt);
    }
    let what = match next.kind {
        Kind::Ralph => {
            "The task did not change since you read it: `pagent prompt` prints it, and it is"
        }
        Kind::Pipeline => {
            "The stage's instructions did not change since you read them: `pagent prompt` prints them, and they are"
        }
    };
    cap_head(
        &format!("{header}\n{what} in {PROMPT_FILE}."),
        REASON_CAP,
        CUT_NOTE,
    )
}

/// The one line the user reads for a re-prompt (the hook's `systemMessage`).
pub fn reprompt_message(
    state: &State,
    evaluation: &Evaluation,
    iteration: u32,
    limit: u32,
) -> String {
    let missing: Vec<&str> = evaluation
        .missing()
        .iter()
        .map(|f| f.detail.as_str())
        .collect();
    let missing = missing.join("; ");
    match state.kind {
        Kind::Ralph => format!("pagent: Ralph loop, iteration {iteration} of {limit}: {missing}"),
        Kind::Pipeline => format!(
            "pagent: stage {} not done, iteration {iteration} of {limit}: {missing}",
            state.current().name
        ),
    }
}

fn retry_header(state: &State, evaluation: &Evaluation, iteration: u32, limit: u32) -> String {
    let mut header = stage_header(state, iteration, limit);
    header.push('\n');
    if state.kind == Kind::Pipeline {
        header.push_str("The stage's exit condition does not hold yet. Still missing:\n");
    }
    let missing = evaluation.missing();
    let promise = state.current().exit_when.promise();
    // A ralph loop's own condition is the promise, its first finding; what else keeps it
    // going (a review, a failed check) follows as a list, after a sentence that says why.
    let (promise_finding, rest) = match (state.kind, promise) {
        (Kind::Ralph, Some(promise)) => (
            evaluation.findings.first().map(|f| (f.met, promise)),
            evaluation.findings.get(1..).unwrap_or_default(),
        ),
        _ => (None, &evaluation.findings[..]),
    };
    let others_missing = rest.iter().any(|f| !f.met);
    match promise_finding {
        Some((false, promise)) => {
            header.push_str(&format!(
                "Your last message did not make the promise. Keep working on the task. When it is truly complete, \
                 and only then, end your final message with a line that holds nothing but <promise>{promise}</promise>.\n"
            ));
            if others_missing {
                header.push_str("Also still missing:\n");
            }
        }
        Some((true, _)) if others_missing => {
            header.push_str("You made the promise, but the loop cannot end yet. Still missing:\n");
        }
        _ => {}
    }
    for finding in rest.iter().filter(|f| !f.met) {
        header.push_str(&format!("- {}\n", finding.detail));
    }
    for finding in missing {
        if let Some(tail) = &finding.output_tail {
            header.push_str(&format!(
                "\nEnd of the output of {}:\n```\n{}\n```\n",
                finding.short,
                tail.trim_end()
            ));
        }
    }
    header
}

/// Header, blank line, prompt, in at most [`REASON_CAP`] characters: the header keeps at
/// most half, the prompt is cut to what is left (less room for its marker).
pub fn compose(header: &str, prompt: &str) -> String {
    let header = cap_head(header, REASON_CAP / 2, CUT_NOTE);
    let budget = REASON_CAP.saturating_sub(header.chars().count() + 2);
    let prompt = cap_head(
        prompt,
        budget.saturating_sub(120),
        "prompt cut to fit; `pagent prompt` prints all of it",
    );
    format!("{header}\n\n{prompt}")
}

#[cfg(test)]
mod tests;

/// How the runner stopped an agent's run before it ended by itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StoppedRun {
    /// The whole run passed the iteration timeout (seconds).
    TimedOut { limit_secs: u64 },
    /// The run printed nothing for the watchdog's limit (seconds).
    Stalled { limit_secs: u64 },
}

/// The sentence a stopped run's next prompt opens with (and its log line carries).
pub fn stopped_note(stopped: StoppedRun) -> String {
    match stopped {
        StoppedRun::TimedOut { limit_secs } => format!(
            "Your previous run was stopped after {} (the iteration timeout).",
            crate::format_duration(limit_secs)
        ),
        StoppedRun::Stalled { limit_secs } => format!(
            "Your previous run was stopped: it printed nothing for {} (the watchdog).",
            crate::format_duration(limit_secs)
        ),
    }
}

/// The next prompt after a stopped run: the note, then the re-prompt.
pub fn after_stopped(note: &str, reprompt: &str) -> String {
    format!("{note}\n\n{reprompt}")
}

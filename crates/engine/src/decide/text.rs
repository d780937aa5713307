//! What a re-prompt says, and the backpressure gate that can hold a stage back.
//!
//! Claude Code shows every block reason to the user as `Stop hook error: <reason>` and,
//! since 2.1.259, hands it to the model twice. So a re-prompt of the stage the model is
//! already working on is quiet: the header (where the loop is), what is still missing and
//! the tail of a failed check, then where the full instructions are (`pagent prompt`,
//! `.claude/pagent/prompt.md`). The full stage prompt is sent on stage entry, after the
//! conversation was compacted (`full_prompt_due`), and always to `pagent loop`, whose
//! every iteration is a fresh agent that has read nothing. A ralph task short enough to
//! read at a glance is repeated: re-reading the task is the point of a Ralph loop.

use crate::render::{REASON_CAP, cap_head};
use crate::{Driver, Evaluation, Finding, Kind, Probe, RelPath, State, World};

/// Where the binary keeps the current stage's full prompt for the model to read again.
pub const PROMPT_FILE: &str = ".claude/pagent/prompt.md";
/// A ralph task at most this long (characters) is repeated in every re-prompt.
const RALPH_TASK_INLINE: usize = 600;

/// Adds a finding per edited file whose latest check failed and that still exists, and
/// forgets the files that are gone.
pub(super) fn gate_on_failed_checks(
    next: &mut State,
    evaluation: &mut Evaluation,
    world: &mut dyn World,
) {
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

/// The block reason of a re-prompt (and clears `full_prompt_due` once it was honoured).
pub(super) fn reprompt(
    next: &mut State,
    evaluation: &Evaluation,
    iteration: u32,
    limit: u32,
    world: &mut dyn World,
) -> String {
    let header = retry_header(next, evaluation, iteration, limit);
    let prompt = crate::stories::render_stage_prompt(next, next.stage, world);
    // A `{{story}}` prompt names a different story as the stories pass: always new.
    let changes = next.kind == Kind::Pipeline && next.current().prompt.contains("{{story}}");
    let full = next.driver == Driver::Loop
        || next.full_prompt_due
        || changes
        || (next.kind == Kind::Ralph && prompt.chars().count() <= RALPH_TASK_INLINE);
    next.full_prompt_due = false;
    let what = match next.kind {
        Kind::Ralph => {
            "The task did not change since you read it: `pagent prompt` prints it, and it is"
        }
        Kind::Pipeline => {
            "The stage's instructions did not change since you read them: `pagent prompt` prints them, and they are"
        }
    };
    if full {
        let label = match next.kind {
            Kind::Ralph => "The task:",
            Kind::Pipeline => "The stage's instructions, again:",
        };
        compose(&format!("{header}\n{label}"), &prompt)
    } else {
        cap_head(
            &format!("{header}\n{what} in {PROMPT_FILE}."),
            REASON_CAP,
            "cut to keep the message short",
        )
    }
}

/// The one line the user reads for a re-prompt (the hook's `systemMessage`).
pub(super) fn reprompt_message(
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
    let mut header = match state.kind {
        Kind::Ralph => format!("pagent · ralph loop · iteration {iteration} of {limit}\n"),
        Kind::Pipeline => format!(
            "pagent · stage {} of {}: {} · iteration {iteration} of {limit}\nThe stage's exit condition does not hold yet. Still missing:\n",
            state.stage + 1,
            state.max_stages,
            state.current().name
        ),
    };
    let missing = evaluation.missing();
    let promise = state.current().exit_when.promise();
    for (index, finding) in evaluation.findings.iter().enumerate() {
        if finding.met {
            continue;
        }
        match (state.kind, promise) {
            // A ralph loop's own condition is the promise: its first finding.
            (Kind::Ralph, Some(promise)) if index == 0 => header.push_str(&format!(
                "Your last message did not make the promise. Keep working on the task. When it is truly complete, \
                 and only then, end your final message with a line that holds nothing but <promise>{promise}</promise>.\n"
            )),
            _ => header.push_str(&format!("- {}\n", finding.detail)),
        }
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

/// Header, blank line, prompt; the prompt is shortened if the whole would pass the cap.
pub(super) fn compose(header: &str, prompt: &str) -> String {
    let header = cap_head(header, REASON_CAP / 2, "cut to keep the message short");
    let budget = REASON_CAP.saturating_sub(header.chars().count() + 2);
    let prompt = cap_head(
        prompt,
        budget.saturating_sub(120),
        "prompt cut to fit; `pagent prompt` prints all of it",
    );
    format!("{header}\n\n{prompt}")
}

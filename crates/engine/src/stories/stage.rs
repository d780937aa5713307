//! A stories stage in the loop: the `{{story}}` its prompt names, the finding its
//! `stories_pass` condition gives, and the claim that ticks a story.
//!
//! Each iteration works on one story, the one `{{story}}` named (kept in the state as
//! `story`). The agent does not tick it: it ends its final message with
//! `<promise>STORY DONE</promise>` when it believes the story is done. That claim alone
//! changes nothing: pagent ticks the story in the file (`mark`) only when every other
//! part of the stage's condition holds (the plan's validation commands, the `--check`s,
//! no failed check of an edited file), and says why not when they do not. The promise
//! names no story, so a model cannot tick another one than it was given; and the done
//! state is always the file's, read again at every decision: a story the agent or the
//! user ticks or unticks by hand counts as they left it. The loop completes when every
//! required story is done and the checks hold (never on the promise alone).

use super::{Format, StoryPlan};
use crate::{Condition, Evaluation, Finding, Kind, Probe, RelPath, State, World, contains_promise};

/// A stories condition's plan file and its format.
type Source<'a> = (&'a RelPath, Option<Format>);

/// What the agent says, on a line of its own, when its story is done.
pub const STORY_PROMISE: &str = "STORY DONE";

impl Condition {
    /// The plan file of a `stories_pass` condition (or of the first one inside all/any).
    pub fn stories_path(&self) -> Option<&RelPath> {
        self.stories_source().map(|(path, _)| path)
    }

    /// The plan file and its format, anywhere in the condition.
    pub fn stories_source(&self) -> Option<Source<'_>> {
        match self {
            Condition::StoriesPass { path, format } => Some((path, *format)),
            Condition::All(items) | Condition::Any(items) => {
                items.iter().find_map(Condition::stories_source)
            }
            _ => None,
        }
    }

    /// The condition split into its top-level `stories_pass` and the rest, when it has
    /// one there (the whole condition, or an item of its top-level `all`).
    fn split_stories(&self) -> Option<(Source<'_>, Option<Condition>)> {
        match self {
            Condition::StoriesPass { path, format } => Some(((path, *format), None)),
            Condition::All(items) => {
                let source = items.iter().find_map(|c| match c {
                    Condition::StoriesPass { path, format } => Some((path, *format)),
                    _ => None,
                })?;
                let rest: Vec<Condition> = items
                    .iter()
                    .filter(|c| !matches!(c, Condition::StoriesPass { .. }))
                    .cloned()
                    .collect();
                Some((source, (!rest.is_empty()).then_some(Condition::All(rest))))
            }
            _ => None,
        }
    }
}

/// The format to read `path` as: the one named, else prd.json for a `.json` file, else
/// the one its content shows.
fn format_for(path: &RelPath, format: Option<Format>) -> Option<Format> {
    format.or_else(|| path.as_str().ends_with(".json").then_some(Format::PrdJson))
}

/// What a plan is called in messages.
fn noun(format: Option<Format>) -> &'static str {
    if format == Some(Format::PrdJson) {
        "PRD"
    } else {
        "plan"
    }
}

/// The plan at `path`, read by the world's reader: `Err` when the file cannot be read,
/// `Ok(Err(why))` when it is not a plan.
fn read_plan(
    path: &RelPath,
    format: Option<Format>,
    world: &mut dyn World,
) -> Result<Result<Box<dyn StoryPlan>, String>, Probe> {
    let text = world.read_text(path)?;
    Ok(world.plans().read(&text, format_for(path, format)))
}

/// The `stories_pass` finding: (met, sentence for the model, short form).
pub(crate) fn stories_finding(
    path: &RelPath,
    format: Option<Format>,
    world: &mut dyn World,
) -> (bool, String, String) {
    match read_plan(path, format, world) {
        Ok(Ok(plan)) => plan.progress(path.as_str()),
        Ok(Err(why)) => (
            false,
            format!(
                "{path} is not a valid {}: {why}",
                noun(format_for(path, format))
            ),
            format!("{path} invalid"),
        ),
        Err(Probe::Missing) => (
            false,
            format!("{path} does not exist"),
            format!("{path} missing"),
        ),
        Err(_) => (
            false,
            format!("{path} cannot be read"),
            format!("{path} unreadable"),
        ),
    }
}

/// Which stories of the current stage's plan are done, as one line (`5:US-01=1;...`);
/// `None` when the stage works through no plan or it cannot be read. Part of the
/// progress mark (`progress.rs`): a story that changed state is progress wherever its
/// plan lives.
pub(crate) fn story_states(state: &State, world: &mut dyn World) -> Option<String> {
    let (path, format) = state.current().exit_when.stories_source()?;
    let plan = read_plan(path, format, world).ok()?.ok()?;
    let mut line = String::new();
    for (id, done) in plan.story_states() {
        // Each id with its length: no id can pass for two.
        line.push_str(&format!("{}:{}={};", id.len(), id, u8::from(done)));
    }
    Some(line)
}

/// The text `{{story}}` stands for, and the id of the story it names.
fn story_text(state: &State, index: usize, world: &mut dyn World) -> (String, Option<String>) {
    let Some((path, format)) = state.stages[index].exit_when.stories_source() else {
        return (
            "(this stage has no stories_pass condition, so there is no story to name)".to_owned(),
            None,
        );
    };
    match read_plan(path, format, world) {
        Ok(Ok(plan)) => match plan.next_story() {
            Some((id, text)) => (text, Some(id.to_owned())),
            None if plan.is_complete() => {
                let verb = if plan.format() == Format::PrdJson {
                    "passes"
                } else {
                    "is done"
                };
                (format!("(every story in {path} {verb})"), None)
            }
            None => {
                let (_, detail, _) = plan.progress(path.as_str());
                (format!("(no story is ready: {detail})"), None)
            }
        },
        Ok(Err(why)) => (
            format!(
                "({path} is not a valid {}: {why}; fix it first)",
                noun(format_for(path, format))
            ),
            None,
        ),
        Err(_) => (format!("({path} cannot be read; create it first)"), None),
    }
}

/// Stage `index`'s prompt with `{{story}}` replaced (in workflow prompts only, never in a
/// ralph task) by the next story of the stage's `stories_pass` plan (or a note when none
/// is left or the plan cannot be read).
pub fn render_stage_prompt(state: &State, index: usize, world: &mut dyn World) -> String {
    let stage = &state.stages[index];
    // A ralph loop's prompt is the user's task: placeholders belong to workflows only.
    if state.kind == Kind::Ralph || !stage.prompt.contains("{{story}}") {
        return stage.prompt.clone();
    }
    stage
        .prompt
        .replace("{{story}}", &story_text(state, index, world).0)
}

/// The id of the story the current stage's prompt names now (`None` when it names none):
/// the story a `STORY DONE` promise will claim.
pub fn story_in_prompt(state: &State, world: &mut dyn World) -> Option<String> {
    if state.kind == Kind::Ralph || !state.current().prompt.contains("{{story}}") {
        return None;
    }
    story_text(state, state.stage, world).1
}

/// The current stage's evaluation, a claimed story ticked first when the rest holds.
pub(crate) fn evaluate_stage(next: &mut State, world: &mut dyn World) -> Evaluation {
    let condition = next.current().exit_when.clone();
    let Some(((path, format), rest)) = condition.split_stories() else {
        return condition.evaluate(world);
    };
    let claimed = match &next.story {
        Some(id)
            if world
                .last_assistant_message()
                .is_some_and(|m| contains_promise(&m, STORY_PROMISE)) =>
        {
            id.clone()
        }
        _ => return condition.evaluate(world),
    };
    let rest = match &rest {
        Some(rest) => rest.evaluate(world),
        None => Evaluation {
            met: true,
            findings: Vec::new(),
            review_at: None,
        },
    };
    let gate_clear = !next.checks_gate() || next.failing_checks.is_empty();
    let rest_holds = gate_clear
        && rest
            .findings
            .iter()
            .enumerate()
            .all(|(i, f)| f.met || Some(i) == rest.review_at);
    let note = if rest_holds {
        tick(path, format, &claimed, world).err().map(|why| {
            format!("you said story {claimed} is done, but pagent could not mark it done in {path}: {why}")
        })
    } else {
        Some(format!(
            "you said story {claimed} is done, but it stays open until the checks hold (see below)"
        ))
    };
    let (met, detail, short) = stories_finding(path, format, world);
    let mut findings = vec![Finding {
        met,
        detail,
        short,
        output_tail: None,
    }];
    findings.extend(note.map(|detail| Finding {
        met: false,
        detail,
        short: format!("{claimed} claimed, not marked"),
        output_tail: None,
    }));
    let shift = findings.len();
    let all_met = findings.iter().all(|f| f.met) && rest.met;
    findings.extend(rest.findings);
    Evaluation {
        met: all_met,
        findings,
        review_at: rest.review_at.map(|i| i + shift),
    }
}

/// Marks story `id` done in the plan at `path`, through the world.
fn tick(
    path: &RelPath,
    format: Option<Format>,
    id: &str,
    world: &mut dyn World,
) -> Result<(), String> {
    let text = world
        .read_text(path)
        .map_err(|_| "the file cannot be read".to_owned())?;
    // `None`: done already (by the agent or the user), or gone from the plan.
    match world
        .plans()
        .mark_done(&text, format_for(path, format), id)?
    {
        Some(new) => world.replace_text(path, &text, &new),
        None => Ok(()),
    }
}

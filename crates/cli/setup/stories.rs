//! A new stories loop's state: one stage over a plan file, one story per iteration, for
//! the Stop hook (`pagent run --stories`, `/pagent:run --stories`) and for `pagent loop
//! --stories` / `--issues` alike.
//!
//! The plan is read here once to refuse what cannot be worked (not a plan, nothing left,
//! a dependency cycle); from then on the engine reads it again at every decision. Its
//! stage is met when every required story is done and every check passes: the plan's
//! own validation commands, which run only with the user's consent (the plan is a
//! project file like a workflow: `pagent trust PLAN` or `--trust`), and the `--check`
//! commands the user typed, which need none.

use std::path::{Path, PathBuf};

use anyhow::Context;
use pagent_engine::{Budget, Driver, SetupOptions, State, Workflow};
use pagent_stories::{Format, MAX_PLAN_BYTES, Plan};
use serde_json::{Value, json};

use super::{Notes, consented_config};
use crate::cli::env::Env;
use crate::io::now;
use crate::store::consent::{self, plan_source};
use crate::store::project::Project;
use crate::store::user::UserDir;

/// A check of a stories loop may take this long (a test suite, inside the Stop hook's
/// ten minutes).
const CHECK_TIMEOUT_SECS: u64 = 300;

/// What the user asked for: a plan, how to read it, and the loop's limits.
#[derive(Debug, Clone)]
pub struct StoriesSpec {
    pub file: PathBuf,
    pub format: Option<Format>,
    /// `--check` commands: the user's own words.
    pub checks: Vec<String>,
    pub max_iterations: Option<u32>,
    pub no_progress_limit: Option<u32>,
    pub budget: Budget,
    pub trust: bool,
    pub driver: Driver,
    /// A `review` condition the user asked for on the command line.
    pub review: Option<pagent_engine::Condition>,
}

/// Reads the plan at `rel` through the project's door.
pub fn read_plan(project: &Project, rel: &Path, format: Option<Format>) -> anyhow::Result<Plan> {
    let bytes = project
        .dir()
        .read(rel, MAX_PLAN_BYTES as u64)
        .with_context(|| format!("cannot read the plan {}", rel.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("the plan {} is not UTF-8 text", rel.display()))?;
    let format = format
        .or_else(|| (rel.extension().is_some_and(|e| e == "json")).then_some(Format::PrdJson));
    Plan::read(&text, format).map_err(|why| {
        anyhow::anyhow!(
            "{} is not a plan pagent can work through: {why}",
            rel.display()
        )
    })
}

/// The one stage of a stories loop: every story of the plan at `rel` passes, and every
/// check the plan names and `--check` adds.
fn stories_workflow(plan: &Plan, spec: &StoriesSpec, rel: &str) -> anyhow::Result<Workflow> {
    let stories = json!({"stories_pass": rel, "format": plan.format.name()});
    let checks: Vec<Value> = plan
        .checks
        .iter()
        .chain(&spec.checks)
        .map(|line| json!({"custom": line, "timeout": CHECK_TIMEOUT_SECS}))
        .collect();
    let exit_when = if checks.is_empty() {
        stories
    } else {
        json!({"all": std::iter::once(stories).chain(checks).collect::<Vec<_>>()})
    };
    Workflow::from_json(
        &json!({"name": "stories", "stages": [{"name": "stories", "prompt": "-", "exit_when": exit_when}]}),
        "stories",
    )
    .map_err(|e| anyhow::anyhow!("--check: {e}"))
}

/// A stories loop's options: an iteration per story and a margin, its plan file, who
/// drives it.
fn stories_options(
    spec: &StoriesSpec,
    env: &Env,
    remaining: u32,
    rel: &str,
    backpressure: Option<pagent_engine::backpressure::BackpressureConfig>,
) -> SetupOptions {
    SetupOptions {
        // Each story should take one iteration; the margin covers retries of hard ones.
        max_iterations: Some(
            spec.max_iterations
                .unwrap_or(remaining.saturating_add((remaining / 2).max(3))),
        ),
        // A story's work often ends in the plan file alone: the fingerprint still sees it.
        no_progress_limit: Some(spec.no_progress_limit.unwrap_or(3)),
        session_id: match spec.driver {
            Driver::Hook => env.session_id.clone(),
            Driver::Loop => None,
        },
        prd_file: Some(rel.to_owned()),
        prd_path: Some(rel.to_owned()),
        driver: spec.driver,
        backpressure,
        budget: spec.budget,
        ..SetupOptions::default()
    }
}

/// A new stories state, validated, not yet written; and what set-up has to say.
pub fn stories(project: &Project, env: &Env, spec: &StoriesSpec) -> anyhow::Result<(State, Notes)> {
    let cwd = env
        .current_dir
        .clone()
        .unwrap_or_else(|| project.root.clone());
    let rel_path = consent::rel_in_project(project, &cwd, &spec.file).with_context(|| {
        format!(
            "the plan {} must be inside the project",
            spec.file.display()
        )
    })?;
    let plan = read_plan(project, &rel_path, spec.format)?;
    let rel = rel_path.to_string_lossy().into_owned();
    let remaining = plan.remaining();
    anyhow::ensure!(
        remaining > 0,
        "every story in {rel} is already done: nothing to do"
    );
    let Some(first) = plan.next_story() else {
        let (_, why, _) = plan.progress(&rel);
        anyhow::bail!("no story of {rel} can start: {why}");
    };
    let mut notes = Notes::default();
    let backpressure = consented_config(
        project,
        &UserDir::of(env),
        plan_source(&rel_path, &plan),
        spec.trust,
        &mut notes,
    )?;
    notes.used.push(format!(
        "{rel}, {} ({} of {} stories done)",
        plan.format.describe(),
        plan.done_count(),
        plan.required_count()
    ));
    let workflow = stories_workflow(&plan, spec, &rel)?;
    let remaining = u32::try_from(remaining).unwrap_or(u32::MAX);
    let options = stories_options(spec, env, remaining, &rel, backpressure);
    let prompt =
        pagent_engine::render_template(pagent_engine::prompt::templates::STORIES, Some(&rel));
    let mut state = State::new_pipeline(&workflow, vec![prompt], options, None, now());
    state.fingerprint = crate::world::progress_mark(project, &state);
    state.story = Some(first.id.clone());
    if let Some(review) = &spec.review {
        let stage = &mut state.stages[0];
        stage.exit_when = stage
            .exit_when
            .clone()
            .with_review(review.clone())
            .map_err(|why| anyhow::anyhow!("--review: {why}"))?;
    }
    if plan.checks.is_empty() && spec.checks.is_empty() {
        notes.lines.push(format!(
            "{rel} names no validation commands and no --check was given: a story counts as done on the agent's word alone"
        ));
    }
    super::note_reviewer_costs(&state, &mut notes);
    Ok((state, notes))
}

//! `pagent loop --prd prd.json`: a one-stage workflow over a PRD's user stories, one
//! story per iteration until every story passes.
//!
//! The engine knows the PRD format and the `stories_pass` condition; this is the binary's
//! side: reading the PRD to build the state, and after each iteration appending a line to
//! the progress.md beside it, where the agent keeps its own notes too.

use std::path::Path;

use anyhow::Context;
use pagent_engine::stories::Prd;
use pagent_engine::{Driver, SetupOptions, State, Workflow};
use serde_json::json;

use crate::cli::env::Env;
use crate::io::now;
use crate::runner::progress::Progress;
use crate::store::project::Project;
use crate::{store::consent, world::fingerprint};

/// PRDs larger than this are refused.
const MAX_PRD_BYTES: u64 = 4 * 1024 * 1024;

const STORIES_PROMPT: &str = include_str!("../../../plugin/prompts/stories.md");

/// A one-stage workflow over a PRD's stories: the next story each iteration.
pub(super) fn stories_state(
    project: &Project,
    env: &Env,
    prd: &Path,
    max_iterations: Option<u32>,
    budget: pagent_engine::Budget,
    trust: bool,
    progress: &mut Progress,
) -> anyhow::Result<State> {
    let cwd = env
        .current_dir
        .clone()
        .unwrap_or_else(|| project.root.clone());
    let path = if prd.is_absolute() {
        prd.to_path_buf()
    } else {
        cwd.join(prd)
    };
    let rel_path = consent::rel_in_project(project, &cwd, &path)
        .with_context(|| format!("the PRD {} must be inside the project", path.display()))?;
    let bytes = project
        .dir()
        .read(&rel_path, MAX_PRD_BYTES)
        .with_context(|| format!("cannot read the PRD {}", path.display()))?;
    let text = String::from_utf8(bytes)
        .map_err(|_| anyhow::anyhow!("the PRD {} is not UTF-8 text", path.display()))?;
    let parsed = Prd::parse(&text).map_err(|why| {
        anyhow::anyhow!("{} is not a PRD with user stories: {why}", path.display())
    })?;
    let rel = rel_path.to_string_lossy().into_owned();
    let remaining = u32::try_from(parsed.remaining()).unwrap_or(u32::MAX);
    anyhow::ensure!(
        remaining > 0,
        "every story in {rel} already passes: nothing to do"
    );
    let mut notes = crate::store::setup::Notes::default();
    let backpressure = crate::store::setup::consented_config(
        project,
        env.config_dir.as_deref(),
        None,
        trust,
        &mut notes,
    )?;
    for line in notes.lines() {
        progress.warn(&line);
    }
    let workflow = Workflow::from_json(
        &json!({"name": "stories", "stages": [{"name": "stories", "prompt": "-", "exit_when": {"stories_pass": rel}}]}),
        "stories",
    )?;
    let options = SetupOptions {
        // Each story should take one iteration; the margin covers retries of hard ones.
        max_iterations: Some(max_iterations.unwrap_or(remaining + (remaining / 2).max(3))),
        // A story's work often ends in prd.json alone: the fingerprint still sees it.
        no_progress_limit: Some(3),
        prd_file: Some(rel.clone()),
        prd_path: Some(rel.clone()),
        driver: Driver::Loop,
        backpressure,
        budget,
        ..SetupOptions::default()
    };
    let prompt = pagent_engine::render_template(STORIES_PROMPT, Some(&rel));
    Ok(State::new_pipeline(
        &workflow,
        vec![prompt],
        options,
        fingerprint::fingerprint(project),
        now(),
    ))
}

/// Appends a line to progress.md beside a stories PRD (the agent appends its own notes).
pub(super) fn note_stories(
    project: &Project,
    state: &State,
    iteration: u32,
    progress: &mut Progress,
) {
    let Some(path) = state.current().exit_when.stories_path() else {
        return;
    };
    let prd_rel = Path::new(path.as_str());
    let Ok(bytes) = project.dir().read(prd_rel, MAX_PRD_BYTES) else {
        return;
    };
    let Ok(text) = String::from_utf8(bytes) else {
        return;
    };
    let Ok(prd) = Prd::parse(&text) else { return };
    let next = prd.next_story().map_or_else(
        || "none left".to_owned(),
        |s| format!("{}: {}", s.id, s.title),
    );
    let line = format!(
        "- {} iteration {iteration}: {} of {} stories pass; next: {next}\n",
        now(),
        prd.passing(),
        prd.user_stories.len()
    );
    let file = prd_rel.with_file_name("progress.md");
    let header = if project.dir().kind(&file).ok().flatten().is_some() {
        ""
    } else {
        "# Progress\n\nAppend-only: pagent adds a line per iteration, the agent adds its notes.\n\n"
    };
    if let Err(err) = project
        .dir()
        .append(&file, format!("{header}{line}").as_bytes())
    {
        progress.warn(&format!("cannot append to {}: {err}", file.display()));
    }
}

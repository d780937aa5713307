//! Building a new loop's state from what the user asked for, validated and not yet
//! written: a pipeline over a PRD (`pagent run`, `pagent loop run`) or a Ralph loop over a
//! task (`pagent ralph`, `pagent loop ralph`, `pagent parallel`'s tasks).

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use pagent_engine::{Condition, Driver, SetupOptions, State};

use super::{Notes, consented_config};
use crate::cli::args::{RalphArgs, ReviewArgs, RunArgs};
use crate::cli::env::Env;
use crate::io::now;
use crate::store::project::Project;
use crate::store::user::UserDir;
use crate::store::{consent, workflows};
use pagent_door::files;

/// PRDs larger than this are refused: the model has to read them.
const MAX_PRD_BYTES: u64 = 4 * 1024 * 1024;

/// A new pipeline state from `args`, validated, not yet written; and what set-up has to
/// say about the project files it used.
pub fn pipeline(
    project: &Project,
    env: &Env,
    args: &RunArgs,
    driver: Driver,
) -> anyhow::Result<(State, Notes)> {
    let cwd = env
        .current_dir
        .clone()
        .unwrap_or_else(|| project.root.clone());
    let Some(prd) = args.prd.as_deref() else {
        bail!("name the PRD file, e.g. `pagent run prd.md`")
    };
    let (prd_file, prd_path) = validate_prd(project, &cwd, prd)?;
    let loaded = workflows::load_workflow(project, args.workflow.as_deref(), &cwd)?;
    workflows::check_paths_stay_inside(project, &loaded.workflow)?;
    let (prompts, prompt_files) = workflows::render_prompts(project, &loaded, Some(&prd_path))?;
    let mut notes = Notes {
        source: loaded.source.clone(),
        used: Vec::new(),
        lines: loaded.notices.clone(),
    };
    if !matches!(loaded.origin, workflows::Origin::BuiltIn) {
        notes.used.push(format!("workflow {}", loaded.source));
    }
    notes
        .used
        .extend(prompt_files.into_iter().map(|f| format!("prompt {f}")));
    let backpressure = consented_config(
        project,
        &UserDir::of(env),
        consent::workflow_source(&loaded),
        args.trust,
        &mut notes,
    )?;
    let options = SetupOptions {
        max_stages: args.max_stages.map(|n| n as usize),
        max_iterations: args.max_iterations,
        no_progress_limit: args.no_progress_limit,
        session_id: hook_session(env, driver),
        prd_file: Some(prd_file),
        prd_path: Some(prd_path),
        driver,
        backpressure,
        budget: args.budget.budget(),
    };
    let mut state = State::new_pipeline(&loaded.workflow, prompts, options, None, now());
    state.fingerprint = crate::world::progress_mark(project, &state);
    if let Some(review) = review_condition(&args.review)? {
        // The built-in pipeline's verifier, else the workflow's last stage.
        let index = state
            .stages
            .iter()
            .position(|s| s.name == "verifier")
            .unwrap_or(state.stages.len() - 1);
        let stage = &mut state.stages[index];
        stage.exit_when = stage
            .exit_when
            .clone()
            .with_review(review)
            .map_err(|why| anyhow::anyhow!("--review: stage {}: {why}", stage.name))?;
    }
    super::note_reviewer_costs(&state, &mut notes);
    Ok((state, notes))
}

/// What `pagent run --stories FILE` asks for, or `None` for a pipeline (where the plan
/// flags make no sense).
pub fn stories_spec_of(
    args: &RunArgs,
    driver: Driver,
) -> anyhow::Result<Option<super::stories::StoriesSpec>> {
    let Some(file) = &args.stories else {
        anyhow::ensure!(
            args.plan.format.is_none() && args.plan.checks.is_empty(),
            "--format and --check go with --stories"
        );
        return Ok(None);
    };
    Ok(Some(super::stories::StoriesSpec {
        file: file.clone(),
        format: args.plan.format,
        checks: args.plan.checks.clone(),
        max_iterations: args.max_iterations,
        no_progress_limit: args.no_progress_limit,
        budget: args.budget.budget(),
        trust: args.trust,
        driver,
        review: review_condition(&args.review)?,
    }))
}

/// A new ralph state for `task`, validated, not yet written.
pub fn ralph(
    project: &Project,
    env: &Env,
    args: &RalphArgs,
    task: String,
    driver: Driver,
) -> anyhow::Result<(State, Notes)> {
    let promise = args.promise.trim().to_owned();
    // Validate the promise exactly as a workflow's would be.
    Condition::from_json(
        &serde_json::json!({ "promise_in_output": promise }),
        "--promise",
    )
    .map_err(|e| anyhow::anyhow!("--promise: {}", e.reason))?;
    let mut notes = Notes::default();
    let backpressure = consented_config(project, &UserDir::of(env), None, args.trust, &mut notes)?;
    let options = SetupOptions {
        max_iterations: args.max_iterations,
        no_progress_limit: args.no_progress_limit,
        session_id: hook_session(env, driver),
        backpressure,
        driver,
        budget: args.budget.budget(),
        ..SetupOptions::default()
    };
    let mut state = State::new_ralph(task, promise, options, None, now());
    state.fingerprint = crate::world::progress_mark(project, &state);
    if let Some(review) = review_condition(&args.review)? {
        let stage = &mut state.stages[0];
        stage.exit_when = stage
            .exit_when
            .clone()
            .with_review(review)
            .map_err(|why| anyhow::anyhow!("--review: {why}"))?;
    }
    super::note_reviewer_costs(&state, &mut notes);
    Ok((state, notes))
}

/// The `review` condition the flags ask for, validated as a workflow's would be. The
/// user typed it, so it needs no trust.
fn review_condition(args: &ReviewArgs) -> anyhow::Result<Option<Condition>> {
    let Some(criteria) = &args.review else {
        return Ok(None);
    };
    let mut value = serde_json::json!({ "review": criteria });
    if let Some(line) = &args.reviewer_command {
        value["reviewer_command"] = line.clone().into();
    }
    if let Some(agent) = args.reviewer {
        value["reviewer"] = agent.name().into();
    }
    if let Some(secs) = args.review_timeout {
        value["timeout"] = secs.into();
    }
    let condition = Condition::from_json(&value, "review").map_err(|e| {
        let flag = match e.field.as_str() {
            "review.timeout" => "--review-timeout",
            "review.reviewer_command" => "--reviewer-command",
            _ => "--review",
        };
        anyhow::anyhow!("{flag}: {}", e.reason)
    })?;
    Ok(Some(condition))
}

/// Checks the PRD is a non-empty text file; returns (as given, path for prompts).
fn validate_prd(project: &Project, cwd: &Path, prd: &Path) -> anyhow::Result<(String, String)> {
    let candidates: Vec<PathBuf> = if prd.is_absolute() {
        vec![prd.to_path_buf()]
    } else {
        vec![cwd.join(prd), project.root.join(prd)]
    };
    let Some(path) = candidates.iter().find(|p| files::exists(p)) else {
        bail!(
            "the PRD {} does not exist (looked in {})",
            prd.display(),
            cwd.display()
        );
    };
    // Inside the project the PRD is read through the door (a planted link out is refused);
    // a file elsewhere is one the user named themselves.
    let bytes = match consent::rel_in_project(project, cwd, path) {
        Ok(rel) => project.dir().read(&rel, MAX_PRD_BYTES),
        Err(_) => files::read_outside(path, MAX_PRD_BYTES),
    }
    .context("cannot read the PRD")?;
    anyhow::ensure!(
        !bytes.is_empty(),
        "the PRD {} is empty: write the requirements first",
        path.display()
    );
    let text = std::str::from_utf8(&bytes)
        .map_err(|_| anyhow::anyhow!("the PRD {} is not UTF-8 text", path.display()))?;
    anyhow::ensure!(
        !text.contains('\0'),
        "the PRD {} looks binary (it contains NUL bytes), not text",
        path.display()
    );
    anyhow::ensure!(
        !text.trim().is_empty(),
        "the PRD {} holds only whitespace: write the requirements first",
        path.display()
    );
    let real =
        files::canonical(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    let for_prompts = real
        .strip_prefix(&project.root)
        .map_or_else(|_| real.display().to_string(), |p| p.display().to_string());
    Ok((prd.display().to_string(), for_prompts))
}

/// The session a hook-driven loop belongs to (Claude Code's, from the environment); a
/// loop `pagent loop` drives has none until its first agent names one.
fn hook_session(env: &Env, driver: Driver) -> Option<String> {
    match driver {
        Driver::Hook => env.session_id.clone(),
        Driver::Loop => None,
    }
}

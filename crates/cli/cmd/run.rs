//! `pagent run PRD`: start a pipeline. Its stdout is what the model reads after
//! `/pagent:run`: a short summary, then the first stage's prompt.

#![allow(clippy::print_stdout)]

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};
use pagent_engine::{Driver, SetupOptions, State};

use crate::args::{Global, RunArgs};
use crate::cmd::{now, read_stdin_text};
use crate::env::Env;
use crate::exit::ExitStatus;
use crate::project::Project;
use crate::store::door;
use crate::{consent, fingerprint, setup, stdin_args, workflows};

/// PRDs larger than this are refused: the model has to read them.
const MAX_PRD_BYTES: u64 = 4 * 1024 * 1024;

pub fn run(global: &Global, env: &Env, args: RunArgs) -> anyhow::Result<ExitStatus> {
    let slash = args.stdin_args;
    let args = if slash { args_from_stdin()? } else { args };
    let project = Project::resolve(global, env, None)?;
    let (state, setup_notes) = build_state(&project, env, &args, Driver::Hook)?;
    let install = if slash {
        setup::install_state_from_slash
    } else {
        setup::install_state
    };
    let state = install(
        &project,
        env.config_dir.as_deref(),
        &state,
        args.force,
        "run",
    )?;
    let prd_path = state.prd_path.clone().unwrap_or_default();
    let loaded_source = setup_notes.source.clone();
    let names: Vec<&str> = state.stages[..state.max_stages]
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    println!(
        "pagent: started the {} pipeline ({}) for {prd_path}: {} (up to {} iterations per stage{}). {}",
        state.workflow,
        loaded_source,
        names.join(" → "),
        state.max_iterations,
        setup::no_progress_words(&state),
        setup::HOW_TO_STOP
    );
    println!(
        "Work on one stage at a time. When you stop, pagent checks the stage's exit condition and either gives you the next \
         stage or tells you what is still missing."
    );
    setup_notes.print();
    println!();
    println!("{}", setup::header(&state));
    println!();
    println!("{}", state.current().prompt.trim_end());
    Ok(ExitStatus::Success)
}

/// A new pipeline state from `args`, validated, not yet written; and what set-up has to
/// say about the project files it used.
pub fn build_state(
    project: &Project,
    env: &Env,
    args: &RunArgs,
    driver: Driver,
) -> anyhow::Result<(State, setup::Notes)> {
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
    let mut notes = setup::Notes {
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
    let backpressure = setup::consented_config(
        project,
        env.config_dir.as_deref(),
        consent::workflow_source(&loaded),
        args.trust,
        &mut notes,
    )?;
    let options = SetupOptions {
        max_stages: args.max_stages.map(|n| n as usize),
        max_iterations: args.max_iterations,
        no_progress_limit: args.no_progress_limit,
        session_id: if driver == Driver::Hook {
            env.session_id.clone()
        } else {
            None
        },
        prd_file: Some(prd_file),
        prd_path: Some(prd_path),
        driver,
        backpressure,
    };
    let state = State::new_pipeline(
        &loaded.workflow,
        prompts,
        options,
        fingerprint::fingerprint(project),
        now(),
    );
    Ok((state, notes))
}

fn args_from_stdin() -> anyhow::Result<RunArgs> {
    let text = read_stdin_text()?;
    anyhow::ensure!(
        !text.trim().is_empty(),
        "name the PRD file, e.g. `/pagent:run prd.md` or `pagent run prd.md`"
    );
    let args: RunArgs = stdin_args::parse_words("/pagent:run", stdin_args::values(&text))?;
    anyhow::ensure!(!args.stdin_args, "--stdin-args cannot be given on stdin");
    Ok(args)
}

/// Checks the PRD is a non-empty text file; returns (as given, path for prompts).
fn validate_prd(project: &Project, cwd: &Path, prd: &Path) -> anyhow::Result<(String, String)> {
    let candidates: Vec<PathBuf> = if prd.is_absolute() {
        vec![prd.to_path_buf()]
    } else {
        vec![cwd.join(prd), project.root.join(prd)]
    };
    let Some(path) = candidates.iter().find(|p| door::exists(p)) else {
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
        Err(_) => door::read_outside(path, MAX_PRD_BYTES),
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
        door::canonical(path).with_context(|| format!("cannot resolve {}", path.display()))?;
    let for_prompts = real
        .strip_prefix(&project.root)
        .map_or_else(|_| real.display().to_string(), |p| p.display().to_string());
    Ok((prd.display().to_string(), for_prompts))
}

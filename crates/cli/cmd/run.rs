//! `pagent run PRD`: start a pipeline; `pagent run --stories FILE`: start a stories loop
//! over a plan, one story at a time. Its stdout is what the model reads after
//! `/pagent:run`: a short summary, then the first prompt.

use pagent_engine::{Action, Driver};

use crate::cli::args::{Global, RunArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::io::Io;
use crate::store::project::Project;
use crate::world::FsWorld;
use crate::{cli::stdin_args, store::setup};

pub fn run(global: &Global, env: &Env, args: RunArgs, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let slash = args.stdin_args;
    let args = if slash {
        args_from_stdin(io.stdin)?
    } else {
        args
    };
    let project = Project::resolve(global, env, None)?;
    if let Some(spec) = setup::build::stories_spec_of(&args, Driver::Hook)? {
        let (state, notes) = setup::stories::stories(&project, env, &spec)?;
        return start_stories(&project, env, state, &notes, args.force, slash, io);
    }
    let (state, setup_notes) = setup::build::pipeline(&project, env, &args, Driver::Hook)?;
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
        Action::Run,
        io.stderr,
    )?;
    let prd_path = state.prd_path.clone().unwrap_or_default();
    let loaded_source = setup_notes.source.clone();
    let names: Vec<&str> = state.stages[..state.max_stages]
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    writeln!(
        io.stdout,
        "pagent: started the {} pipeline ({}) for {prd_path}: {} (up to {} per stage{}). {}",
        state.workflow,
        loaded_source,
        names.join(" → "),
        pagent_engine::count(state.max_iterations, "iteration"),
        setup::no_progress_words(&state),
        setup::HOW_TO_STOP
    )?;
    writeln!(
        io.stdout,
        "Work on one stage at a time. When you stop, pagent checks the stage's exit condition and either gives you the next \
         stage or tells you what is still missing."
    )?;
    setup_notes.print(io.stdout)?;
    writeln!(io.stdout)?;
    writeln!(
        io.stdout,
        "{}",
        pagent_engine::prompt::current_header(&state)
    )?;
    writeln!(io.stdout)?;
    writeln!(io.stdout, "{}", state.current().prompt.trim_end())?;
    Ok(ExitStatus::Success)
}

/// Installs a stories loop's state and prints its start line and first story's prompt.
fn start_stories(
    project: &Project,
    env: &Env,
    state: pagent_engine::State,
    notes: &setup::Notes,
    force: bool,
    slash: bool,
    io: &mut Io,
) -> anyhow::Result<ExitStatus> {
    let install = if slash {
        setup::install_state_from_slash
    } else {
        setup::install_state
    };
    let state = install(
        project,
        env.config_dir.as_deref(),
        &state,
        force,
        Action::Stories,
        io.stderr,
    )?;
    writeln!(
        io.stdout,
        "pagent: started the stories loop for {}: one story at a time (up to {}{}). {}",
        state.prd_path.as_deref().unwrap_or_default(),
        pagent_engine::count(state.max_iterations, "iteration"),
        setup::no_progress_words(&state),
        setup::HOW_TO_STOP
    )?;
    writeln!(
        io.stdout,
        "Work on the one story below. When you stop, pagent runs the checks: when they pass it marks the story done and gives you the next one; \
         when they fail, the same story again with what failed."
    )?;
    notes.print(io.stdout)?;
    writeln!(io.stdout)?;
    writeln!(
        io.stdout,
        "{}",
        pagent_engine::prompt::current_header(&state)
    )?;
    writeln!(io.stdout)?;
    let mut world = FsWorld::read_only(project);
    let prompt = pagent_engine::stories::render_stage_prompt(&state, state.stage, &mut world);
    writeln!(io.stdout, "{}", prompt.trim_end())?;
    Ok(ExitStatus::Success)
}

fn args_from_stdin(stdin: &mut dyn std::io::Read) -> anyhow::Result<RunArgs> {
    let text = crate::io::read_stdin_text(stdin)?;
    anyhow::ensure!(
        !text.trim().is_empty(),
        "name the PRD file, e.g. `/pagent:run prd.md`, or a plan: `/pagent:run --stories tasks.md`"
    );
    let args: RunArgs = stdin_args::parse_words("/pagent:run", stdin_args::values(&text))?;
    anyhow::ensure!(!args.stdin_args, "--stdin-args cannot be given on stdin");
    Ok(args)
}

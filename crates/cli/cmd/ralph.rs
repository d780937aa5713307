//! `pagent ralph TASK`: start a Ralph loop, one task re-prompted until the model writes
//! `<promise>TEXT</promise>`. The task comes from the arguments, from stdin, or (for the
//! slash command) from stdin with flags mixed in (`--stdin-args`); it is stored byte for
//! byte, whatever quotes, `$()`, backticks or newlines it holds.

use pagent_engine::{Action, Driver};

use crate::cli::args::{Global, RalphArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::task;
use crate::io::Io;
use crate::store::project::Project;
use crate::store::setup;

pub fn run(global: &Global, env: &Env, args: RalphArgs, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let slash = args.stdin_args;
    let (args, task) = task::resolve(args, io.stdin, io.stdin_is_terminal, "pagent ralph")?;
    let project = Project::resolve(global, env, None)?;
    let (state, notes) = setup::build::ralph(&project, env, &args, task, Driver::Hook)?;
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
        Action::Ralph,
        io.stderr,
    )?;

    let promise = state.current().exit_when.promise().unwrap_or("DONE");
    writeln!(
        io.stdout,
        "pagent: started a Ralph loop: up to {}{}. {}",
        pagent_engine::count(state.max_iterations, "iteration"),
        setup::no_progress_words(&state),
        setup::HOW_TO_STOP
    )?;
    writeln!(
        io.stdout,
        "Work on the task below. Each time you stop, pagent gives you the task again until your final message ends \
         with a line that holds nothing but <promise>{promise}</promise>. Write it only when the task is truly complete, \
         never just to leave the loop."
    )?;
    notes.print(io.stdout)?;
    writeln!(io.stdout)?;
    writeln!(
        io.stdout,
        "{}",
        pagent_engine::prompt::current_header(&state)
    )?;
    writeln!(io.stdout)?;
    writeln!(io.stdout, "{}", state.current().prompt)?;
    Ok(ExitStatus::Success)
}

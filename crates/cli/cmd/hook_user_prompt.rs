//! `pagent hook user-prompt-submit`: the user always wins. A message typed in the loop's
//! own session pauses the loop (see `pagent_engine::pause`); the next stop is allowed
//! with one line saying so, and `/pagent:resume` goes on.
//!
//! This hook runs on every prompt of every session, so with no state file it returns
//! before reading stdin (`hook_fast_path`). It never blocks the prompt: it prints nothing,
//! never exits 2, and an error only reaches stderr (exit 1, a non-blocking error). It
//! writes only the user's own, sealed state, compare-and-swap.

use pagent_engine::Action;
use pagent_engine::pause::decide_prompt;

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::{Io, now, read_hook_input};
use crate::session::{self, Hook};
use crate::store::eventlog::Event;
use crate::store::project::{self, Project};

pub fn run(global: &Global, env: &Env, io: &mut Io) -> ExitStatus {
    let root = project::root_from_flag_or_env(global.project.as_deref(), env);
    if session::hook_stands_aside(
        Hook::UserPrompt,
        env.driver,
        root.as_deref(),
        env.config_dir.as_deref(),
    ) {
        return ExitStatus::Success;
    }
    match pause_if_typed(global, env, io) {
        Ok(()) => ExitStatus::Success,
        Err(err) => {
            ui::report(
                io.stderr,
                &err.context("the UserPromptSubmit hook failed; the loop was not paused"),
            );
            ExitStatus::Failure
        }
    }
}

fn pause_if_typed(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<()> {
    let input = read_hook_input(io.stdin)?;
    let project = Project::resolve(global.project.as_deref(), env, input.cwd.as_deref())?;
    let session = input.session_id.clone().or_else(|| env.session_id.clone());
    let prompt = input.prompt.clone().unwrap_or_default();
    let now = now();
    let written = session::change_own_loop(
        &project,
        env.config_dir.as_deref(),
        |state| decide_prompt(state, session.as_deref(), &prompt, now),
        io.stderr,
    )?;
    if let Some(state) = written {
        let detail = "paused: the user wrote a message in the loop's session".to_owned();
        session::log(
            &project,
            &Event::at(&state, Action::Pause, detail, now, session.as_deref()),
            io.stderr,
        );
    }
    Ok(())
}

//! `pagent hook user-prompt-submit`: the user always wins. A message typed in the loop's
//! own session pauses the loop (see `pagent_engine::pause`); the next stop is allowed
//! with one line saying so, and `/pagent:resume` goes on. pagent's own commands and the
//! prompts Claude Code writes itself (a background task's notification, the note that a
//! usage limit reset) leave the loop alone: the UserPromptExpansion hook answers pagent's
//! commands, and Claude Code's own prompts carry the loop's work on.
//!
//! It is also where the session hears of what the user did to its loop from a terminal
//! (`pagent cancel`), if no Stop told it first: one `systemMessage`, shown above the
//! prompt's answer, never sent to the model.
//!
//! This hook runs on every prompt of every session, so with no state file it returns
//! before reading stdin (`hook_fast_path`). It never blocks the prompt, never exits 2,
//! and an error only reaches stderr (exit 1, a non-blocking error). It writes only the
//! user's own, sealed state, compare-and-swap.

use pagent_engine::Action;
use pagent_engine::pause::decide_prompt;
use pagent_protocol::HookOutput;

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::{Io, now, read_hook_input};
use crate::session::{self, Hook};
use crate::store;
use crate::store::eventlog::Event;
use crate::store::project::{self, Project};

pub fn run(global: &Global, env: &Env, io: &mut Io) -> ExitStatus {
    let root = project::root_from_flag_or_env(global, env);
    if session::hook_stands_aside(
        Hook::UserPrompt,
        env.driver,
        root.as_deref(),
        env.config_dir.as_deref(),
    ) {
        return ExitStatus::Success;
    }
    match pause_if_typed(global, env, io) {
        Ok(None) => ExitStatus::Success,
        Ok(Some(notice)) => {
            let output = HookOutput {
                system_message: Some(notice),
                ..HookOutput::default()
            };
            let _ = writeln!(
                io.stdout,
                "{}",
                serde_json::to_string(&output).unwrap_or_default()
            );
            ExitStatus::Success
        }
        Err(err) => {
            ui::report(
                io.stderr,
                &err.context("the UserPromptSubmit hook failed; the loop was not paused"),
            );
            ExitStatus::Failure
        }
    }
}

/// Pauses the loop if the user wrote in its session; returns the notice waiting for this
/// session, if any.
fn pause_if_typed(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<Option<String>> {
    let input = read_hook_input(io.stdin)?;
    let project = Project::resolve(global, env, input.cwd.as_deref())?;
    let session = input.session_id.clone().or_else(|| env.session_id.clone());
    let prompt = input.prompt.clone().unwrap_or_default();
    let now = now();
    let notice = match store::read_state(&project) {
        Ok(Some(state)) if state.session_notice.is_some() => session::tell_session(
            &project,
            env.config_dir.as_deref(),
            &state,
            session.as_deref(),
            io.stderr,
        )?,
        _ => None,
    };
    let written = store::update_own_loop(
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
    Ok(notice)
}

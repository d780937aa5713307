//! The UserPromptSubmit hook's use case (`pagent hook user-prompt-submit`): the user always
//! wins. A message typed in the loop's own session pauses the loop (see
//! `pagent_engine::pause`); the next stop is allowed with one line saying so, and
//! `/pagent:resume` goes on. pagent's own commands and the prompts Claude Code writes
//! itself (a background task's notification, the note that a usage limit reset) leave the
//! loop alone: the UserPromptExpansion hook answers pagent's commands, and Claude Code's
//! own prompts carry the loop's work on.
//!
//! It is also where the session hears of what the user did to its loop from a terminal
//! (`pagent cancel`), if no Stop told it first: one `systemMessage`, shown above the
//! prompt's answer, never sent to the model; unless the prompt sets a new loop up, whose
//! start line would otherwise sit above the old loop's "was cancelled" (Claude Code
//! 2.1.330 runs this hook before the set-up).
//!
//! This hook runs on every prompt of every session, so with no state file it returns
//! before reading stdin (`hook_fast_path`). It never blocks the prompt, never exits 2,
//! and an error only reaches stderr (exit 1, a non-blocking error). It writes only the
//! user's own, sealed state, compare-and-swap.

use pagent_engine::Action;
use pagent_engine::pause::{decide_prompt, session_back};
use pagent_protocol::HookOutput;

use super::frame::HookCall;
use super::words;
use crate::cli::ui;
use crate::io::now;
use crate::session;
use crate::slash::Command;
use crate::store;
use crate::store::eventlog::Event;

/// The UserPromptSubmit hook's body: the notice waiting for this session, if any.
pub fn prompt(call: &mut HookCall) -> anyhow::Result<HookOutput> {
    Ok(HookOutput {
        system_message: pause_if_typed(call)?,
        ..HookOutput::default()
    })
}

/// Whether `prompt` is one of pagent's commands that set a loop up.
fn starts_a_loop(prompt: &str) -> bool {
    let word = prompt.split_whitespace().next().unwrap_or("");
    word.strip_prefix('/')
        .and_then(Command::named)
        .is_some_and(|command| matches!(command, Command::Ralph | Command::Run | Command::Parallel))
}

/// Pauses the loop if the user wrote in its session; returns the notice waiting for this
/// session, if any.
fn pause_if_typed(call: &mut HookCall) -> anyhow::Result<Option<String>> {
    let (input, env) = (&call.input, call.env);
    let project = call.project()?;
    let session = call.session();
    let prompt = input.prompt.clone().unwrap_or_default();
    let now = now();
    let notice = match store::read_state(&project) {
        Ok(Some(state)) if state.session_notice.is_some() => {
            session::tell_session(&project, env, &state, session.as_deref(), &mut |m: &str| {
                ui::warn(call.stderr, m)
            })?
        }
        _ => None,
    };
    // A new loop's set-up clears the old loop's notice unsaid: the user ended that loop
    // themselves, and the new start line is what they need to read now.
    let notice = notice.filter(|_| !starts_a_loop(&prompt));
    let paused_now = std::cell::Cell::new(false);
    let written = session::change_own_loop(
        &project,
        env,
        |state| {
            let paused = decide_prompt(state, session.as_deref(), &prompt, now);
            paused_now.set(paused.is_some());
            // A session quit before and resumed since (`claude --resume`) is back.
            paused.or_else(|| session_back(state, session.as_deref(), now))
        },
        &mut |m: &str| ui::warn(call.stderr, m),
    )?;
    if let Some(state) = written.filter(|_| paused_now.get()) {
        let detail = words::paused_by_prompt();
        session::log(
            &project,
            &Event::at(&state, Action::Pause, detail, now, session.as_deref()),
            &mut |m: &str| ui::warn(call.stderr, m),
        );
    }
    Ok(notice)
}

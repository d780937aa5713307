//! The UserPromptExpansion hook's use case (`pagent hook user-prompt-expansion`): pagent
//! answers its own slash commands on screen (see `slash/mod.rs`), before Claude Code
//! expands them.
//!
//! hooks.json's matcher calls this only for pagent's command names; any other command, a
//! missing name or an unreadable input prints nothing, which lets the command expand as
//! usual: the command's `!` line then does the work itself. Never exits 2 (that would
//! block the prompt with the hook's command line shown as the reason); an error is a line
//! on stderr and exit 1, which Claude Code reports and goes on from.

use pagent_engine::pause::session_back;
use pagent_protocol::{Decision, HookOutput};

use super::frame::HookCall;
use crate::cli::ui;
use crate::io::now;
use crate::session;
use crate::slash::Command;
use crate::slash::answer::{Answer, Asked, answer};

/// The UserPromptExpansion hook's body: pagent's answer to one of its own commands.
pub fn output(call: &mut HookCall) -> anyhow::Result<HookOutput> {
    let input = &call.input;
    let Some(name) = input.command_name.as_deref() else {
        return Ok(HookOutput::default());
    };
    let Some(command) = Command::named(name) else {
        return Ok(HookOutput::default());
    };
    let project = call.project()?;
    // A session quit before and resumed since (`claude --resume`) is back: 2.1.197 runs
    // this hook before UserPromptSubmit, which would say so too late for the answer.
    // A failure here changes no answer: the command's own hooks say the rest.
    let session = call.session();
    let back = session::change_own_loop(
        &project,
        call.env,
        |state| session_back(state, session.as_deref(), now()),
        &mut |m: &str| ui::warn(call.stderr, m),
    );
    if let Err(err) = back {
        ui::warn(call.stderr, &format!("{err:#}"));
    }
    // The loop belongs to the session that typed the command, in the folder it works in.
    let mut env = call.env.clone();
    if let Some(session) = &session {
        env.session_id = Some(session.clone());
    }
    if let Some(cwd) = &input.cwd {
        env.current_dir = Some(cwd.clone());
    }
    let asked = Asked {
        command,
        name,
        args: input.command_args.as_deref().unwrap_or(""),
        prompt: input.prompt.as_deref().unwrap_or(""),
        session: session.as_deref(),
        transcript: input.transcript_path.as_deref(),
    };
    Ok(match answer(&project, &env, &asked) {
        Answer::Show(text) => HookOutput {
            decision: Some(Decision::Block),
            reason: Some(ui::printable(&text, true).into_owned()),
            ..HookOutput::default()
        },
        Answer::Pass(line) => HookOutput {
            system_message: line.map(|l| ui::printable(&l, true).into_owned()),
            ..HookOutput::default()
        },
    })
}

//! `pagent hook user-prompt-expansion`: pagent answers its own slash commands on screen
//! (see `slash/mod.rs`), before Claude Code expands them.
//!
//! hooks.json's matcher calls this only for pagent's command names; any other command, a
//! missing name or an unreadable input prints nothing, which lets the command expand as
//! usual: the command's `!` line then does the work itself. Never exits 2 (that would
//! block the prompt with the hook's command line shown as the reason); an error is a line
//! on stderr and exit 1, which Claude Code reports and goes on from.

use pagent_protocol::{Decision, HookOutput};

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::{Io, read_hook_input};
use crate::slash::Command;
use crate::slash::answer::{Answer, Asked, answer};
use crate::store::project::Project;

pub fn run(global: &Global, env: &Env, io: &mut Io) -> ExitStatus {
    match output(global, env, io) {
        Ok(output) => {
            if !output.is_empty() {
                let _ = writeln!(
                    io.stdout,
                    "{}",
                    serde_json::to_string(&output).unwrap_or_default()
                );
            }
            ExitStatus::Success
        }
        Err(err) => {
            ui::report(
                io.stderr,
                &err.context("the UserPromptExpansion hook failed; the command runs as usual"),
            );
            ExitStatus::Failure
        }
    }
}

fn output(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<HookOutput> {
    let input = read_hook_input(io.stdin)?;
    let Some(name) = input.command_name.as_deref() else {
        return Ok(HookOutput::default());
    };
    let Some(command) = Command::named(name) else {
        return Ok(HookOutput::default());
    };
    let project = Project::resolve(global, env, input.cwd.as_deref())?;
    // The loop belongs to the session that typed the command, in the folder it works in.
    let mut env = env.clone();
    if let Some(session) = &input.session_id {
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
        session: input.session_id.as_deref(),
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

//! `pagent hook <event>`: the entry points Claude Code's hooks call (the plugin's
//! `hooks/hooks.json`). Each is one call: the event's use case (`hooks/`) inside the
//! hooks' frame, which stands aside, reads the input, prints the output and fails open.

use std::time::Instant;

use pagent_protocol::HookEvent;

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::hooks::frame::run_hook;
use crate::hooks::{
    compact, expansion, post_tool_use, session_end, stop, stop_failure, user_prompt,
};
use crate::io::Io;

/// Runs the hook for `event` (one of [`HookEvent::subcommands`]).
pub fn run(event: HookEvent, global: &Global, env: &Env, io: &mut Io) -> ExitStatus {
    let started = Instant::now();
    let flag = global.project.as_deref();
    match event {
        HookEvent::Stop => run_hook(event, flag, env, io, |call| stop::decide(call, started)),
        HookEvent::StopFailure => run_hook(event, flag, env, io, stop_failure::decide),
        HookEvent::PostToolUse => run_hook(event, flag, env, io, post_tool_use::check),
        HookEvent::UserPromptSubmit => run_hook(event, flag, env, io, user_prompt::prompt),
        HookEvent::UserPromptExpansion => run_hook(event, flag, env, io, expansion::output),
        HookEvent::PreCompact | HookEvent::SessionStart => {
            run_hook(event, flag, env, io, compact::mark)
        }
        HookEvent::SessionEnd => run_hook(event, flag, env, io, session_end::mark_ended),
    }
}

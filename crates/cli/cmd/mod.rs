//! Dispatch: one file per subcommand, all reached through [`run`].
//!
//! `run` owns the error policy. Usage errors print clap's message and exit 1 (never 2);
//! help and version exit 0; a subcommand's error is reported once, at the top. The hook
//! has its own, stricter policy (fail open) in `hook_stop.rs` and the other `hook_*` files.

use std::ffi::OsString;
use std::io::Read;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use pagent_engine::Timestamp;

use clap::Parser;
use clap::error::ErrorKind;

use crate::args::{Cli, Command, HookCommand};
use crate::env::Env;
use crate::exit::ExitStatus;
use crate::ui;

mod cancel;
mod hook_compact;
mod hook_post_tool_use;
mod hook_stop;
mod hook_user_prompt;
mod install;
mod log;
mod loop_cmd;
mod parallel;
mod prompt;
pub mod ralph;
mod resume;
pub mod run;
mod status;
mod trust;

/// The wall clock, as the engine's timestamp. The only place the binary reads it for state.
pub fn now() -> Timestamp {
    Timestamp(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
}

/// Most bytes of text accepted on stdin for a task or slash-command arguments.
const MAX_STDIN_TEXT: u64 = 1024 * 1024;

/// Reads stdin as UTF-8 text (a task, or slash-command arguments).
pub fn read_stdin_text() -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_STDIN_TEXT + 1)
        .read_to_end(&mut bytes)
        .context("cannot read stdin")?;
    anyhow::ensure!(
        bytes.len() as u64 <= MAX_STDIN_TEXT,
        "the text on stdin is larger than 1 MiB"
    );
    String::from_utf8(bytes).context("the text on stdin is not UTF-8")
}

/// The hooks' common case, decided before anything else is parsed: Claude Code names the
/// project in `CLAUDE_PROJECT_DIR` and there is no state file, so there is nothing to do.
/// This runs on every Stop and every tool call of every session; it reads two or three
/// environment variables and checks one or two paths. `None` means "take the full path".
pub fn hook_fast_path() -> Option<ExitStatus> {
    let mut args = std::env::args_os().skip(1);
    let (Some(hook), Some(event), None) = (args.next(), args.next(), args.next()) else {
        return None;
    };
    if hook != "hook" {
        return None;
    }
    let post_tool_use = match event.to_str() {
        Some("stop" | "user-prompt-submit" | "compact") => false,
        Some("post-tool-use") => true,
        _ => return None,
    };
    let driver = std::env::var_os(crate::env::PAGENT_DRIVER);
    if !post_tool_use && driver.as_deref() == Some(std::ffi::OsStr::new("loop")) {
        return Some(ExitStatus::Success);
    }
    let root = std::env::var_os(crate::env::CLAUDE_PROJECT_DIR).filter(|r| !r.is_empty())?;
    if crate::store::door::exists_no_follow(
        &std::path::Path::new(&root).join(crate::project::STATE_FILE),
    ) {
        return None;
    }
    if post_tool_use {
        // The user's own config may turn checks on outside loops.
        let env = crate::env::Env::capture_config_dir();
        if crate::config::user_config_path(env.as_deref())
            .is_none_or(|p| crate::store::door::exists_no_follow(&p))
        {
            return None;
        }
    }
    Some(ExitStatus::Success)
}

/// Hook input larger than this is refused (and the stop allowed).
const MAX_HOOK_INPUT: u64 = 64 * 1024 * 1024;

/// Reads and parses the JSON Claude Code sends a hook on stdin.
pub fn read_hook_input() -> anyhow::Result<pagent_protocol::HookInput> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .take(MAX_HOOK_INPUT + 1)
        .read_to_end(&mut bytes)
        .context("cannot read the hook input on stdin")?;
    anyhow::ensure!(
        bytes.len() as u64 <= MAX_HOOK_INPUT,
        "the hook input on stdin is larger than {} MiB",
        MAX_HOOK_INPUT >> 20
    );
    anyhow::ensure!(
        !bytes.iter().all(u8::is_ascii_whitespace),
        "the hook input on stdin is empty (expected Claude Code's hook JSON)"
    );
    pagent_protocol::HookInput::from_json(&bytes)
        .context("the hook input on stdin is not Claude Code's hook JSON")
}

pub fn run(args: Vec<OsString>, env: &Env) -> ExitStatus {
    crate::store::door::ignore_sigxfsz();
    let cli = match Cli::try_parse_from(args) {
        Ok(cli) => cli,
        Err(err) => {
            // clap prints help/version to stdout and errors to stderr.
            let _ = err.print();
            return match err.kind() {
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => ExitStatus::Success,
                _ => ExitStatus::Failure,
            };
        }
    };
    let result = match cli.command {
        Command::Hook(HookCommand::Stop) => return hook_stop::run(&cli.global, env),
        Command::Hook(HookCommand::PostToolUse) => {
            return hook_post_tool_use::run(&cli.global, env);
        }
        Command::Hook(HookCommand::UserPromptSubmit) => {
            return hook_user_prompt::run(&cli.global, env);
        }
        Command::Hook(HookCommand::Compact) => return hook_compact::run(&cli.global, env),
        Command::Resume => resume::run(&cli.global, env),
        Command::Prompt => prompt::run(&cli.global, env),
        Command::Run(args) => {
            let slash = args.stdin_args;
            from_slash(slash, run::run(&cli.global, env, args))
        }
        Command::Ralph(args) => {
            let slash = args.stdin_args;
            from_slash(slash, ralph::run(&cli.global, env, args))
        }
        Command::Status(args) => status::run(&cli.global, env, &args),
        Command::Cancel => cancel::run(&cli.global, env),
        Command::Log(args) => log::run(&cli.global, env, &args),
        Command::Loop(args) => loop_cmd::run(&cli.global, env, args),
        Command::Parallel(args) => {
            from_slash(args.stdin_args, parallel::run(&cli.global, env, &args))
        }
        Command::Trust(args) => trust::run(&cli.global, env, &args),
        Command::Install(args) => install::install(env, &args),
        Command::Uninstall(args) => install::uninstall(env, &args),
    };
    match result {
        Ok(status) => status,
        Err(err) => {
            ui::report(&err);
            ExitStatus::Failure
        }
    }
}

/// A slash command's set-up error, as text on stdout with exit 0. Claude Code shows a `!`
/// line that exits non-zero as `Shell command failed for pattern "<the whole block>"`,
/// burying pagent's sentence; with exit 0 the text reaches the model, which the command
/// tells to relay it.
#[allow(clippy::print_stdout)]
fn from_slash(slash: bool, result: anyhow::Result<ExitStatus>) -> anyhow::Result<ExitStatus> {
    match result {
        Err(err) if slash => {
            println!("pagent: error: {err}");
            for cause in err.chain().skip(1) {
                println!("  caused by: {cause}");
            }
            println!("Nothing was started.");
            Ok(ExitStatus::Success)
        }
        other => other,
    }
}

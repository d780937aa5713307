//! Dispatch: one file per subcommand in `cmd/`, all reached through [`run`].
//!
//! `run` owns the error policy. Usage errors print clap's message and exit 1 (never 2);
//! help and version exit 0; a subcommand's error is reported once, at the top. The hooks
//! have their own, stricter policy (fail open) in `cmd/hook_*.rs`.

use std::ffi::OsString;

use clap::Parser;
use clap::error::ErrorKind;

use crate::cli::args::{Cli, Command, HookCommand};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::cmd::{
    cancel, hook_compact, hook_post_tool_use, hook_stop, hook_user_prompt, install, log, loop_cmd,
    parallel, prompt, ralph, resume, run, status, trust,
};

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
        Command::Hook(HookCommand::Notify(args)) => return crate::notify::run_helper(&args),
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

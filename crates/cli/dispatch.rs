//! Dispatch: one file per subcommand in `cmd/`, all reached through [`run`].
//!
//! `run` owns the error policy. Usage errors print clap's message and exit 1 (never 2);
//! help and version exit 0; a subcommand's error is reported once, at the top. The hooks
//! have their own, stricter policy (fail open) in `hooks/frame.rs`. The hooks' fast path
//! ([`hook_fast_path`]) is here too: `main` asks it before anything is parsed.

use clap::Parser;
use clap::error::ErrorKind;
use std::ffi::OsString;
use std::io::Write;

use crate::cli::args::{Cli, Command, Global, HookCommand};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::terminal::Edge;
use crate::cli::ui;
use crate::cmd::{
    cancel, dashboard, hook, install, log, loop_cmd, parallel, pause, prompt, ralph, resume, run,
    status, team, trust,
};
use crate::hooks::frame::hook_stands_aside;
use crate::io::Io;
use pagent_protocol::HookEvent;

/// Runs one pagent command: `args` as the process got them (the program name first),
/// `env` as [`Env::capture`] read it, the streams in `io`. Tests call this in-process.
pub fn run(args: Vec<OsString>, env: &Env, io: &mut Io) -> ExitStatus {
    pagent_door::files::ignore_sigxfsz();
    let stdout_is_terminal = io.stdout_is_terminal;
    let stdin_is_terminal = io.stdin_is_terminal;
    let stdin = &mut *io.stdin;
    // Help, version and usage errors are clap's own text, coloured by clap: written
    // before the edge. Everything after passes through it (`cli::terminal`).
    let cli = match parse(
        args,
        env,
        stdout_is_terminal,
        &mut *io.stdout,
        &mut *io.stderr,
    ) {
        Ok(cli) => cli,
        Err(status) => return status,
    };
    let mut stdout = Edge::new(&mut *io.stdout);
    let mut stderr = Edge::new(&mut *io.stderr);
    let mut io = Io {
        stdin,
        stdout: &mut stdout,
        stderr: &mut stderr,
        stdout_is_terminal,
        stdin_is_terminal,
    };
    let status = dispatch(cli, env, &mut io);
    let _ = io.stdout.flush();
    let _ = io.stderr.flush();
    status
}

/// The arguments, parsed; or clap's help, version or usage error printed and the status.
fn parse(
    args: Vec<OsString>,
    env: &Env,
    stdout_is_terminal: bool,
    stdout: &mut dyn std::io::Write,
    stderr: &mut dyn std::io::Write,
) -> Result<Cli, ExitStatus> {
    if let Some(cli) = hook_without_clap(&args) {
        return Ok(cli);
    }
    match Cli::try_parse_from(args) {
        Ok(cli) => Ok(cli),
        Err(err) => {
            // Help and version go to stdout, usage errors to stderr (as clap's own print).
            let help = matches!(
                err.kind(),
                ErrorKind::DisplayHelp | ErrorKind::DisplayVersion
            );
            let text = if stdout_is_terminal && help && !env.no_color {
                err.render().ansi().to_string()
            } else {
                err.render().to_string()
            };
            if help {
                let _ = stdout.write_all(text.as_bytes());
                Err(ExitStatus::Success)
            } else {
                // A usage error may quote what was typed: through the edge too. It is
                // pagent's, as every other error line is (`pagent: error: ...`).
                let text = match text.strip_prefix("error:") {
                    Some(rest) => format!("pagent: error:{rest}"),
                    None => text,
                };
                let _ = Edge::new(stderr).write_all(text.as_bytes());
                Err(ExitStatus::Failure)
            }
        }
    }
}

/// `pagent hook EVENT` and nothing else, as every hook Claude Code runs is called: the
/// command clap would parse, without building clap's whole command line first (a tenth
/// of an active loop's Stop). Anything more (`--project`, `--help`) goes to clap.
fn hook_without_clap(args: &[OsString]) -> Option<Cli> {
    let [_, hook, subcommand] = args else {
        return None;
    };
    let event = fast_path_event(hook, subcommand)?;
    Some(Cli {
        global: Global::default(),
        command: Command::Hook(HookCommand::Event(event)),
    })
}

/// Runs the parsed command with the streams behind the edge.
fn dispatch(cli: Cli, env: &Env, io: &mut Io) -> ExitStatus {
    let result = match cli.command {
        Command::Hook(HookCommand::Event(event)) => {
            return hook::run(event, &cli.global, env, io);
        }
        Command::Hook(HookCommand::Notify(args)) => {
            return crate::cmd::hook_notify::run(&args, env, io.stderr);
        }
        Command::Pause => pause::run(&cli.global, env, io),
        Command::Resume => resume::run(&cli.global, env, io),
        Command::Prompt => prompt::run(&cli.global, env, io),
        Command::Run(args) => {
            let slash = args.stdin_args;
            let result = run::run(&cli.global, env, args, io);
            from_slash(slash, result, io)
        }
        Command::Ralph(args) => {
            let slash = args.stdin_args;
            let result = ralph::run(&cli.global, env, args, io);
            from_slash(slash, result, io)
        }
        Command::Status(args) => status::run(&cli.global, env, &args, io),
        Command::Cancel => cancel::run(&cli.global, env, io),
        Command::Log(args) => log::run(&cli.global, env, &args, io),
        Command::Loop(args) => loop_cmd::run(&cli.global, env, *args, io),
        Command::Parallel(args) => {
            let result = parallel::run(&cli.global, env, &args, io);
            from_slash(args.stdin_args, result, io)
        }
        Command::Team(args) => team::run(&cli.global, env, args, io),
        Command::Dashboard(args) => dashboard::run(env, &args, io),
        Command::Trust(args) => trust::run(&cli.global, env, &args, io),
        Command::Install(args) => install::install(env, &args, io),
        Command::Uninstall(args) => install::uninstall(env, &args, io),
    };
    match result {
        Ok(status) => status,
        Err(err) => {
            ui::report(io.stderr, &err);
            ExitStatus::Failure
        }
    }
}

/// A slash command's set-up error, as text on stdout with exit 0. Claude Code shows a `!`
/// line that exits non-zero as `Shell command failed for pattern "<the whole block>"`,
/// burying pagent's sentence; with exit 0 the text reaches the model, which the command
/// tells to relay it.
fn from_slash(
    slash: bool,
    result: anyhow::Result<ExitStatus>,
    io: &mut Io,
) -> anyhow::Result<ExitStatus> {
    match result {
        Err(err) if slash => {
            writeln!(io.stdout, "pagent: error: {err}")?;
            for cause in err.chain().skip(1) {
                writeln!(io.stdout, "  caused by: {cause}")?;
            }
            writeln!(io.stdout, "Nothing was started.")?;
            Ok(ExitStatus::Success)
        }
        other => other,
    }
}

/// The hooks' common case, decided before anything else is parsed: Claude Code names the
/// project in `CLAUDE_PROJECT_DIR` and there is no state file, so there is nothing to do.
/// This runs on every Stop and every tool call of every session; it reads two or three
/// environment variables and checks one or two paths. `None` means "take the full path".
/// The binary `pagent install` staged in the launcher's place keeps the launcher's first
/// rule: a `PAGENT_BIN` (a test's wrapper, a custom build) runs instead, with the same
/// arguments, streams and environment (its PATH cleaned, as for every child), marked as
/// seen so that it never hands over again. Its exit code, never 2 (a signal: 0, which
/// allows the stop); `None` when there is nothing to hand over to, or it cannot start.
pub fn hand_over_to_pagent_bin() -> Option<u8> {
    use pagent_door::process::{Launch, Program, SearchPath};
    let stand_in = crate::cli::env::staged_hook_stand_in()?;
    let launch = Launch::new(
        Program::at(stand_in.bin),
        &stand_in.cwd,
        &SearchPath::new(stand_in.path.as_deref(), &[]),
    )
    .args(std::env::args_os().skip(1))
    .env(crate::cli::env::PAGENT_LAUNCHER_SEEN, stand_in.started_as)
    .in_callers_group();
    match launch.status() {
        Ok(Some(2)) => Some(1),
        Ok(Some(code)) => Some(u8::try_from(code).unwrap_or(1)),
        Ok(None) => Some(0),
        Err(_) => None,
    }
}

pub fn hook_fast_path() -> Option<ExitStatus> {
    let mut args = std::env::args_os().skip(1);
    let (Some(hook), Some(event), None) = (args.next(), args.next(), args.next()) else {
        return None;
    };
    let hook = fast_path_event(&hook, &event)?;
    let root = Env::capture_project_dir();
    // The config folder matters only to PostToolUse without a state file.
    let config_dir = (hook == HookEvent::PostToolUse)
        .then(Env::capture_config_dir)
        .flatten();
    hook_stands_aside(
        hook,
        Env::capture_driver(),
        root.as_deref(),
        &crate::store::user::UserDir::at(config_dir.as_deref()),
    )
    .then_some(ExitStatus::Success)
}

/// The hook event of `pagent hook <subcommand>` as the fast path reads it: from the same
/// table as clap's hook commands ([`HookEvent::from_subcommand`]), never a list of its own.
fn fast_path_event(hook: &std::ffi::OsStr, subcommand: &std::ffi::OsStr) -> Option<HookEvent> {
    if hook != "hook" {
        return None;
    }
    HookEvent::from_subcommand(subcommand.to_str()?)
}

#[cfg(test)]
mod tests {
    use std::ffi::OsStr;

    use clap::{CommandFactory, Parser};

    use super::*;

    #[test]
    fn issue_31_every_hook_event_has_a_subcommand_and_a_fast_path_entry_from_one_table() {
        for event in HookEvent::ALL {
            let sub = event.subcommand();
            // clap's hook command for it parses back to the event it is named for...
            let cli = Cli::try_parse_from(["pagent", "hook", sub]).unwrap();
            let Command::Hook(HookCommand::Event(parsed)) = cli.command else {
                panic!("pagent hook {sub} is not a hook event: {:?}", cli.command);
            };
            assert_eq!(parsed.subcommand(), sub);
            // ...and so does the fast path, before clap.
            let fast = fast_path_event(OsStr::new("hook"), OsStr::new(sub));
            assert_eq!(fast, Some(parsed), "{sub}");
        }
        // And clap has no hook command the table lacks, but the notifier helper.
        let cli = Cli::command();
        let hook = cli.find_subcommand("hook").unwrap();
        let others: Vec<&str> = hook
            .get_subcommands()
            .map(clap::Command::get_name)
            .filter(|name| HookEvent::from_subcommand(name).is_none())
            .collect();
        assert_eq!(others, ["notify"]);
        assert_eq!(
            fast_path_event(OsStr::new("hook"), OsStr::new("notify")),
            None
        );
        assert_eq!(fast_path_event(OsStr::new("run"), OsStr::new("stop")), None);
    }

    #[test]
    fn issue_33_a_hook_parsed_without_clap_is_what_clap_parses() {
        let args = |words: &[&str]| -> Vec<OsString> { words.iter().map(OsString::from).collect() };
        for event in HookEvent::ALL {
            let words = ["pagent", "hook", event.subcommand()];
            let fast = hook_without_clap(&args(&words)).expect("a hook event");
            let clap = Cli::try_parse_from(words).unwrap();
            assert_eq!(format!("{fast:?}"), format!("{clap:?}"), "{words:?}");
        }
        // Anything more, or anything else, is clap's to parse (and to refuse).
        for words in [
            &["pagent", "hook", "stop", "--project", "x"][..],
            &["pagent", "--project", "x", "hook", "stop"],
            &["pagent", "hook", "stop", "--help"],
            &["pagent", "hook", "notify"],
            &["pagent", "hook"],
            &["pagent", "status", "stop"],
        ] {
            assert!(hook_without_clap(&args(words)).is_none(), "{words:?}");
        }
    }
}

//! `pagent ralph TASK`: start a Ralph loop, one task re-prompted until the model writes
//! `<promise>TEXT</promise>`. The task comes from the arguments, from stdin, or (for the
//! slash command's `!` line) from stdin with flags mixed in (`--stdin-args`); it is stored
//! byte for byte, whatever quotes, `$()`, backticks or newlines it holds.
//!
//! After `/ralph`, pagent's UserPromptExpansion hook has usually set the loop up already
//! and shown the user its start line: the `!` line then only hands the model its task
//! (`slash::start::take_handoff`). The set-up and its words are `slash::start`'s.

use crate::cli::args::{Global, RalphArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::stdin_args::Parsed;
use crate::cli::task;
use crate::io::{Io, read_stdin_text};
use crate::slash::start::{self, Origin};
use crate::slash::{Command, answer::error_text, ralph_slash};
use crate::store::project::Project;

pub fn run(global: &Global, env: &Env, args: RalphArgs, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let project = Project::resolve(global.project.as_deref(), env, None)?;
    if args.stdin_args {
        return from_slash(&project, env, io);
    }
    let (args, task) = task::resolve(args, io.stdin, io.stdin_is_terminal, "pagent ralph")?;
    let started = start::ralph(&project, env, &args, task, &Origin::default())?;
    writeln!(io.stdout, "{}", started.shown())?;
    writeln!(io.stdout, "{}", start::for_model(&project, &started.state))?;
    Ok(ExitStatus::Success)
}

/// The `!` line of `/ralph`: the model's part when the hook set the loop up, else the
/// set-up itself; help and errors as text on stdout (exit 0), for the model to pass on.
fn from_slash(project: &Project, env: &Env, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let text = read_stdin_text(io.stdin)?;
    if let Some(for_model) = start::take_handoff(project, env, &text)? {
        writeln!(io.stdout, "{for_model}")?;
        return Ok(ExitStatus::Success);
    }
    let result =
        start::parse_ralph(ralph_slash("/pagent:ralph"), &text).and_then(|parsed| match parsed {
            Parsed::Help(help) => Ok(format!("{help}\n\nNothing was started.")),
            Parsed::Args((args, task)) => {
                let origin = Origin {
                    slash: true,
                    ..Origin::default()
                };
                let started = start::ralph(project, env, &args, task, &origin)?;
                Ok(start::unannounced(project, &started))
            }
        });
    let out = result.unwrap_or_else(|err| error_text(Command::Ralph, &err));
    writeln!(io.stdout, "{out}")?;
    Ok(ExitStatus::Success)
}

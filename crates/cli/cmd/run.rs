//! `pagent run PRD`: start a pipeline; `pagent run --stories FILE`: start a stories loop
//! over a plan, one story at a time. Its stdout is what the model reads after
//! `/pagent:run` when no UserPromptExpansion hook set the loop up first: a short summary,
//! then the first prompt. The set-up and its words are `slash::start`'s.

use crate::cli::args::{Global, RunArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::stdin_args::Parsed;
use crate::io::{Io, read_stdin_text};
use crate::slash::start::{self, Origin};
use crate::slash::{Command, answer::error_text, run_slash};
use crate::store::project::Project;

pub fn run(global: &Global, env: &Env, args: RunArgs, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let project = Project::resolve(global.project.as_deref(), env, None)?;
    if args.stdin_args {
        return from_slash(&project, env, io);
    }
    let started = start::run(&project, env, &args, &Origin::default())?;
    writeln!(io.stdout, "{}", started.shown())?;
    writeln!(io.stdout, "{}", start::for_model(&project, &started.state))?;
    Ok(ExitStatus::Success)
}

/// The `!` line of `/pagent:run`, as for `/ralph` (see `cmd/ralph.rs`).
fn from_slash(project: &Project, env: &Env, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let text = read_stdin_text(io.stdin)?;
    if let Some(for_model) = start::take_handoff(project, env, &text)? {
        writeln!(io.stdout, "{for_model}")?;
        return Ok(ExitStatus::Success);
    }
    let result =
        start::parse_run(run_slash("/pagent:run"), &text).and_then(|parsed| match parsed {
            Parsed::Help(help) => Ok(format!("{help}\n\nNothing was started.")),
            Parsed::Args(args) => {
                let origin = Origin {
                    slash: true,
                    ..Origin::default()
                };
                let started = start::run(project, env, &args, &origin)?;
                Ok(start::unannounced(project, &started))
            }
        });
    let out = result.unwrap_or_else(|err| error_text(Command::Run, &err));
    writeln!(io.stdout, "{out}")?;
    Ok(ExitStatus::Success)
}

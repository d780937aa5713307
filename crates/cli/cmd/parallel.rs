//! `pagent parallel TASKS_FILE -j N`: reads the tasks, prints the plan for `--dry-run`,
//! and hands the rest to [`crate::runner::parallel`].

use std::io::Write;
use std::path::Path;

use anyhow::{Context, bail};

use crate::cli::args::{Global, ParallelArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::io::Io;
use crate::runner::parallel::{Task, agent_cli, read_tasks, run_tasks};
use crate::runner::signals;
use crate::store::project::Project;

pub fn run(
    global: &Global,
    env: &Env,
    args: &ParallelArgs,
    io: &mut Io,
) -> anyhow::Result<ExitStatus> {
    let parsed;
    let args = if args.stdin_args {
        match args_from_stdin(args.dry_run, io.stdin)? {
            crate::cli::stdin_args::Parsed::Args(args) => parsed = args,
            crate::cli::stdin_args::Parsed::Help(help) => {
                writeln!(io.stdout, "{help}\n\nNothing was started.")?;
                return Ok(ExitStatus::Success);
            }
        }
        &parsed
    } else {
        args
    };
    signals::install();
    let project = Project::resolve(global, env, None)?;
    crate::store::git::discover(&project.root)
        .context("pagent parallel needs a git repository (each task gets a worktree)")?;
    let Some(tasks_file) = &args.tasks else {
        bail!("name the tasks file, e.g. `pagent parallel tasks.txt -j 3`")
    };
    let cwd = env
        .current_dir
        .clone()
        .unwrap_or_else(|| project.root.clone());
    let tasks = read_tasks(&cwd.join(tasks_file))?;
    let exe = env
        .pagent_exe()
        .context("cannot find the pagent binary itself")?;
    if args.dry_run {
        print_plan(
            &exe,
            &project,
            args,
            &cwd.join(tasks_file),
            &tasks,
            io.stdout,
        )?;
        return Ok(ExitStatus::Success);
    }
    run_tasks(env, &project, args, tasks, &exe, io)
}

/// The slash command's arguments, parsed without a shell; or its help.
fn args_from_stdin(
    dry_run: bool,
    stdin: &mut dyn std::io::Read,
) -> anyhow::Result<crate::cli::stdin_args::Parsed<ParallelArgs>> {
    let text = crate::io::read_stdin_text(stdin)?;
    anyhow::ensure!(
        !text.trim().is_empty(),
        "name the tasks file, e.g. `/pagent:parallel tasks.txt -j 3`"
    );
    let slash = crate::slash::parallel_slash("/pagent:parallel");
    let mut args: ParallelArgs =
        match crate::cli::stdin_args::parse_words(slash, crate::cli::stdin_args::values(&text))? {
            crate::cli::stdin_args::Parsed::Args(args) => args,
            help => return Ok(help),
        };
    anyhow::ensure!(!args.stdin_args, "--stdin-args cannot be given on stdin");
    args.dry_run |= dry_run;
    Ok(crate::cli::stdin_args::Parsed::Args(args))
}

/// What would run, and the exact command line to run it (for /pagent:parallel).
fn print_plan(
    exe: &Path,
    project: &Project,
    args: &ParallelArgs,
    file: &Path,
    tasks: &[Task],
    out: &mut dyn Write,
) -> std::io::Result<()> {
    writeln!(
        out,
        "pagent parallel: {} task(s) from {}, {} at a time:",
        tasks.len(),
        file.display(),
        args.jobs
    )?;
    for task in tasks {
        let max = task.max_iterations.unwrap_or(args.max_iterations);
        writeln!(
            out,
            "  {}  (branch pagent/{}, up to {max} iterations): {}",
            task.name,
            task.name,
            task.task.lines().next().unwrap_or("")
        )?;
    }
    let mut argv = vec![
        exe.display().to_string(),
        "--project".into(),
        project.root.display().to_string(),
        "parallel".into(),
        file.display().to_string(),
    ];
    argv.extend([
        "-j".into(),
        args.jobs.to_string(),
        "--max-iterations".into(),
        args.max_iterations.to_string(),
        "--json".into(),
    ]);
    if args.checkpoint {
        argv.push("--checkpoint".into());
    }
    if args.trust {
        argv.push("--trust".into());
    }
    argv.extend(crate::runner::parallel::budget_cli(&args.budget));
    argv.extend(agent_cli(&args.agent));
    writeln!(
        out,
        "run: {}",
        argv.iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// `a b` → `'a b'`; plain words stay as they are.
fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+".contains(c))
    {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

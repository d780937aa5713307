//! `pagent parallel TASKS_FILE -j N`: reads the tasks, prints the plan for `--dry-run`,
//! and hands the rest to [`crate::runner::parallel`].

use std::io::Write;
use std::path::Path;

use anyhow::{Context, bail};

use crate::cli::args::{Global, ParallelArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::io::Io;
use crate::runner::parallel::run_tasks;
use crate::setup::plan::agent_cli;
use crate::setup::tasks::{Task, read_tasks_and_bytes};
use crate::store::consent;
use crate::store::project::Project;
use crate::store::user::UserDir;
use pagent_door::process::signals;

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
    let project = Project::resolve(global.project.as_deref(), env, None)?;
    crate::store::git::discover(&project.root)
        .context("pagent parallel needs a git repository (each task gets a worktree)")?;
    let Some(tasks_file) = &args.tasks else {
        bail!("name the tasks file, e.g. `pagent parallel tasks.txt -j 3`")
    };
    anyhow::ensure!(
        args.merge || args.merge_only || (args.into.is_none() && args.check.is_none()),
        "--into and --check go with --merge or --merge-only"
    );
    let cwd = env
        .current_dir
        .clone()
        .unwrap_or_else(|| project.root.clone());
    let (tasks, bytes) = read_tasks_and_bytes(&cwd.join(tasks_file), &project.root, args.format)?;
    if !args.dry_run {
        consent_to_checks(env, &project, &cwd.join(tasks_file), &bytes, args.trust, io)?;
    }
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
    let tuning = crate::setup::plan::user_tuning(env)?;
    let plan = crate::setup::plan::ParallelPlan::from_args(args, &tuning);
    run_tasks(env, &project, &plan, tasks, &exe, io)
}

/// The tasks' own `check` commands run only once trusted when the tasks file is one of
/// the project's (a cloned repository's file is not the user's word); a file elsewhere
/// is one the user named themselves.
fn consent_to_checks(
    env: &Env,
    project: &Project,
    file: &Path,
    bytes: &[u8],
    trust: bool,
    io: &mut Io,
) -> anyhow::Result<()> {
    let Ok(rel) = consent::rel_in_project(project, &project.root, file) else {
        return Ok(());
    };
    let Some(source) = consent::tasks_source(&rel, bytes) else {
        return Ok(());
    };
    for line in consent::require(
        project,
        &UserDir::of(env),
        &[source],
        trust,
        &crate::io::now().to_string(),
    )? {
        let _ = writeln!(io.stderr, "pagent: {line}");
    }
    Ok(())
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
        "pagent parallel: {} from {}, {} at a time:",
        pagent_engine::count(tasks.len() as u64, "task"),
        file.display(),
        args.jobs
    )?;
    for task in tasks {
        let max = task.max_iterations.unwrap_or(args.max_iterations);
        let after = if task.after.is_empty() {
            String::new()
        } else {
            format!(", after {}", task.after.join(", "))
        };
        writeln!(
            out,
            "  {}  (branch pagent/{}, up to {}{after}): {}",
            task.name,
            task.name,
            pagent_engine::count(max, "iteration"),
            task.task.lines().next().unwrap_or("")
        )?;
    }
    writeln!(
        out,
        "Each task's work is {} on its branch; its worktree is {}/{}/NAME.",
        if args.no_checkpoint {
            "left uncommitted (--no-checkpoint)"
        } else {
            "committed after every iteration"
        },
        crate::store::git::discover(&project.root)
            .and_then(|r| crate::store::git::work_tree(&r))
            .unwrap_or_else(|| project.root.clone())
            .display(),
        crate::store::project::WORKTREES_DIR
    )?;
    if args.merge || args.merge_only {
        writeln!(
            out,
            "Then each completed branch is merged into {}, one at a time; conflicts go to a resolution loop of the same agent.",
            args.into
                .as_deref()
                .unwrap_or("the branch checked out here")
        )?;
    }
    let argv = run_argv(exe, project, args, file);
    writeln!(
        out,
        "run: {}",
        argv.iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    )
}

/// The command line that runs the plan as shown, with `--json` (for /pagent:parallel).
fn run_argv(exe: &Path, project: &Project, args: &ParallelArgs, file: &Path) -> Vec<String> {
    let mut argv = vec![
        exe.display().to_string(),
        "--project".into(),
        project.root.display().to_string(),
        "parallel".into(),
        file.display().to_string(),
    ];
    if let Some(format) = args.format {
        argv.extend(["--format".into(), format.name().into()]);
    }
    argv.extend([
        "-j".into(),
        args.jobs.to_string(),
        "--max-iterations".into(),
        args.max_iterations.to_string(),
        "--json".into(),
    ]);
    for (on, flag) in [
        (args.no_checkpoint, "--no-checkpoint"),
        (args.force, "--force"),
        (args.merge, "--merge"),
        (args.merge_only, "--merge-only"),
        (args.trust, "--trust"),
    ] {
        if on {
            argv.push(flag.into());
        }
    }
    for (value, flag) in [(&args.into, "--into"), (&args.check, "--check")] {
        if let Some(value) = value {
            argv.extend([flag.to_owned(), value.clone()]);
        }
    }
    argv.extend(crate::setup::plan::budget_cli(&args.budget.budget()));
    argv.extend(agent_cli(&args.agent));
    argv
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

//! `pagent loop`: the external loop runner (see [`crate::runner`]). This file sets up the
//! progress display and reports how the loop ended.

use crate::cli::args::{Global, LoopArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::screen::Size;
use crate::cli::ui::Style;
use crate::io::Io;
use crate::runner::progress::{Mode, Progress};
use crate::runner::{KeptFailing, drive};
use crate::setup::child_plan::ChildPlan;
use crate::setup::plan::{LoopPlan, user_tuning};
use crate::store::project::Project;
use pagent_door::process::signals;

pub fn run(global: &Global, env: &Env, args: LoopArgs, io: &mut Io) -> anyhow::Result<ExitStatus> {
    signals::install();
    let mut progress = Progress::new(
        Mode::choose(args.quiet, args.json, io.stdout_is_terminal),
        Style::for_stdout(env.no_color, io.stdout_is_terminal),
        io.stdout,
        io.stderr,
    )
    .with_fallback_size(Size::from_env(env));
    // Every way the loop ends says so in the event stream: an error too (retries used up,
    // an unwritable state, a bad workflow), which the top level then reports as usual.
    let result = plan_of(global, env, args).and_then(|plan| {
        drive(
            global.project.as_deref(),
            env,
            plan,
            &mut progress,
            io.stdin,
            io.stdin_is_terminal,
        )
    });
    if let Err(err) = &result {
        let class = err.downcast_ref::<KeptFailing>().map(|e| e.class);
        progress.failed(&format!("{err:#}"), class);
    }
    result
}

/// The loop's plan: from the flags, or for a `pagent parallel` child from the plan file
/// its parent wrote (`--child-plan`), which a start on the command line cannot join.
fn plan_of(global: &Global, env: &Env, args: LoopArgs) -> anyhow::Result<LoopPlan> {
    let (Some(file), Some(sha256)) = (&args.child_plan, &args.child_plan_sha256) else {
        return Ok(LoopPlan::from_args(args, &user_tuning(env)?));
    };
    anyhow::ensure!(
        args.start.is_none(),
        "--child-plan holds the loop's start: none may follow it"
    );
    let project = Project::resolve(global.project.as_deref(), env, None)?;
    let plan = ChildPlan::read(&project, file, sha256)?;
    Ok(LoopPlan::from_child(plan, args.worktree))
}

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
use crate::setup::plan::LoopPlan;
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
    let result = drive(
        global.project.as_deref(),
        env,
        LoopPlan::from_args(args),
        &mut progress,
        io.stdin,
        io.stdin_is_terminal,
    );
    if let Err(err) = &result {
        let class = err.downcast_ref::<KeptFailing>().map(|e| e.class);
        progress.failed(&format!("{err:#}"), class);
    }
    result
}

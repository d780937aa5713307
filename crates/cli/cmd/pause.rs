//! `pagent pause`: pause the active loop from a terminal, whoever drives it. A loop in a
//! Claude Code session lets its session stop without counting an iteration; a `pagent
//! loop` finishes the iteration it is in and waits. `pagent resume` continues it. The
//! pause itself is [`control::pause`], which the dashboard's button calls too.

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::Io;
use crate::session::control;
use crate::store::nearest::project_of_loop;

/// What the Stop hook's notice and `pagent status` say the loop is paused because of.
pub const WHY: &str = "you paused it (`pagent pause`)";

pub fn run(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let project = project_of_loop(global.project.as_deref(), env, &mut |m: &str| {
        let _ = writeln!(io.stderr, "pagent: {m}");
    })?;
    let done = control::pause(&project, env, WHY, &mut |m: &str| ui::warn(io.stderr, m))?;
    writeln!(io.stdout, "{}", done.message(&project.root))?;
    Ok(ExitStatus::Success)
}

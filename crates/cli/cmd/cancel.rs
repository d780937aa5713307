//! `pagent cancel`: end the active loop. The state is kept (status `cancelled`) so
//! `pagent status` and `pagent log` can still tell what happened; the next Stop is
//! allowed. Cancelling is always possible: it works on a loop of any session, and sets a
//! corrupt file aside, because it can only make pagent do less. A state that is not the
//! user's own is left alone: pagent ignores it anyway, and writes nothing for a stranger.
//!
//! The cancel itself is [`control::cancel`], which the dashboard's button calls too:
//! compare-and-swap over the state it was decided on, so it never overwrites an update it
//! did not see, and a hook or runner that decided meanwhile finds its state changed and
//! lets the stop (or the runner) go.

use pagent_engine::notice::By;

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::Io;
use crate::session::control;
use crate::store::nearest::project_of_loop;

/// Who asks: the Claude Code session this runs in (its `!` line, or a command its model
/// ran), else a terminal.
fn by(env: &Env) -> By<'_> {
    env.session_id.as_deref().map_or(By::Terminal, By::Session)
}

pub fn run(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let project = project_of_loop(global.project.as_deref(), env, &mut |m: &str| {
        let _ = writeln!(io.stderr, "pagent: {m}");
    })?;
    let done = control::cancel(&project, env, by(env), &mut |m: &str| {
        ui::warn(io.stderr, m)
    })?;
    writeln!(io.stdout, "{}", done.message(&project.root))?;
    Ok(ExitStatus::Success)
}

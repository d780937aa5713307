//! `pagent resume` (and `/pagent:resume`): continue a loop that is paused, because the
//! user wrote a message in its session or paused it (`pagent pause`, the dashboard).
//! Prints where the loop is and its full current prompt, which the slash command hands
//! the model so it picks the work up at once. Resuming from another Claude Code session
//! is refused: that session's stops are not the loop's. The resume itself is
//! [`control::resume`], which the dashboard's button calls too.

use anyhow::bail;
use pagent_engine::notice::By;

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::Io;
use crate::session::control::{self, Resumed};
use crate::store::nearest::project_of_loop;
use crate::world::driven::Driven;

pub fn run(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let project = project_of_loop(global.project.as_deref(), env, &mut |m: &str| {
        let _ = writeln!(io.stderr, "pagent: {m}");
    })?;
    // Who asks: the Claude Code session this runs in (the `!` line), else a terminal.
    let by = env.session_id.as_deref().map_or(By::Terminal, By::Session);
    let done = control::resume(&project, env, by, &mut |m: &str| ui::warn(io.stderr, m))?;
    let resumed = match &done {
        // Only a session's model is handed the prompt: a runner hands its own agents theirs.
        Resumed::Done {
            state,
            driven: Driven::Session,
            ..
        } => state,
        Resumed::Done { .. } | Resumed::NoActiveLoop | Resumed::SessionGone { .. } => {
            writeln!(io.stdout, "{}", done.message())?;
            return Ok(ExitStatus::Success);
        }
        Resumed::OtherSession { .. } | Resumed::NotYours => bail!("{}", done.message()),
    };
    writeln!(io.stdout, "{}", done.message())?;
    writeln!(io.stdout)?;
    writeln!(
        io.stdout,
        "{}",
        pagent_engine::prompt::current_header(resumed)
    )?;
    writeln!(io.stdout)?;
    writeln!(io.stdout, "{}", resumed.current().prompt.trim_end())?;
    Ok(ExitStatus::Success)
}

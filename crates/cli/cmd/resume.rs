//! `pagent resume` (and `/pagent:resume`): continue a loop that is paused, because the
//! user wrote a message in its session or paused it (`pagent pause`, the dashboard).
//! Prints where the loop is and its full current prompt, which the slash command hands
//! the model so it picks the work up at once. Resuming from another Claude Code session
//! is refused: that session's stops are not the loop's. The resume itself is
//! [`control::resume`], which the dashboard's button calls too.

use anyhow::bail;

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::Io;
use crate::session::control::{self, Resumed};
use crate::store::nearest::project_of_loop;

pub fn run(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let project = project_of_loop(global.project.as_deref(), env, &mut |m: &str| {
        let _ = writeln!(io.stderr, "pagent: {m}");
    })?;
    let done = control::resume(&project, env, env.session_id.as_deref(), &mut |m: &str| {
        ui::warn(io.stderr, m)
    })?;
    let resumed = match &done {
        Resumed::Done { state, .. } => state,
        Resumed::NoActiveLoop => {
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

//! `pagent prompt`: the current stage's full instructions (a ralph loop's task), as the
//! model read them on stage entry. Quiet re-prompts point here instead of repeating them.

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::io::Io;
use crate::store::nearest::project_of_loop;
use crate::{cli::ui, store};

pub fn run(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let project = project_of_loop(global.project.as_deref(), env, &mut |m: &str| {
        let _ = writeln!(io.stderr, "pagent: {m}");
    })?;
    let Some(state) = store::read_state(&project)? else {
        writeln!(io.stdout, "pagent: no loop in this project.")?;
        return Ok(ExitStatus::Success);
    };
    writeln!(
        io.stdout,
        "{}",
        ui::printable(&pagent_engine::prompt::current_header(&state), false)
    )?;
    writeln!(io.stdout)?;
    writeln!(
        io.stdout,
        "{}",
        ui::printable(state.current().prompt.trim_end(), true)
    )?;
    Ok(ExitStatus::Success)
}

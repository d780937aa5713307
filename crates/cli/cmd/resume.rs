//! `pagent resume` (and `/pagent:resume`): continue a loop that is paused because the user
//! wrote a message in its session. Prints where the loop is and its full current prompt,
//! which the slash command hands the model so it picks the work up at once. Resuming
//! from another Claude Code session is refused: that session's stops are not the loop's.

use anyhow::bail;
use pagent_engine::pause::resume;
use pagent_engine::{Action, Whose, whose_loop};

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::io::{Io, now};
use crate::session;
use crate::store;
use crate::store::eventlog::Event;
use crate::store::project::Project;

pub fn run(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let project = Project::resolve(global, env, None)?;
    let config_dir = env.config_dir.as_deref();
    let Some(state) = store::read_state(&project)?.filter(|s| s.is_active()) else {
        writeln!(
            io.stdout,
            "pagent: no active loop to resume in this project."
        )?;
        return Ok(ExitStatus::Success);
    };
    // From a terminal (no session) the user may resume any of their loops; from a Claude
    // Code session, only that session's.
    let here = env.session_id.as_deref();
    if let (Whose::Other(owner), Some(_)) = (whose_loop(&state, here), here) {
        bail!(
            "the active {} loop belongs to another Claude Code session ({owner}); resume it there, \
             or end it with `pagent cancel`",
            state.workflow
        );
    }
    let was_paused = state.paused.is_some();
    let now = now();
    let Some(resumed) =
        store::update_own_loop(&project, config_dir, |s| Some(resume(s, now)), io.stderr)?
    else {
        bail!("the loop state is not yours (see `pagent status`), so it cannot be resumed");
    };
    let detail = "resumed by the user".to_owned();
    session::log(
        &project,
        &Event::at(&resumed, Action::Resume, detail, now, here),
        io.stderr,
    );
    let what = match resumed.kind {
        pagent_engine::Kind::Ralph => "the Ralph loop".to_owned(),
        pagent_engine::Kind::Pipeline => format!(
            "the {} pipeline at stage {}",
            resumed.workflow,
            resumed.current().name
        ),
    };
    if was_paused {
        writeln!(
            io.stdout,
            "pagent: resumed {what}. To stop it: Esc, then /pagent:cancel."
        )?;
    } else {
        writeln!(
            io.stdout,
            "pagent: {what} was not paused; it goes on. To stop it: Esc, then /pagent:cancel."
        )?;
    }
    writeln!(io.stdout)?;
    writeln!(
        io.stdout,
        "{}",
        pagent_engine::prompt::current_header(&resumed)
    )?;
    writeln!(io.stdout)?;
    writeln!(io.stdout, "{}", resumed.current().prompt.trim_end())?;
    Ok(ExitStatus::Success)
}

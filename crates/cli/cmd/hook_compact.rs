//! `pagent hook compact`: PreCompact, and SessionStart after a compaction. Re-prompts of
//! a stage are quiet (header, what is missing, where the full prompt is) because the model
//! read the stage prompt when the stage began; once the conversation is compacted that
//! text may be gone, so the next re-prompt carries it in full again.
//!
//! Like the other hooks: no state file, no work; never blocks, never exits 2; writes only
//! the user's own loop of this session, compare-and-swap.

use pagent_engine::{Whose, whose_loop};

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::{Io, read_hook_input};
use crate::session::{self, Hook};
use crate::store::project::{self, Project};

pub fn run(global: &Global, env: &Env, io: &mut Io) -> ExitStatus {
    let root = project::root_from_flag_or_env(global.project.as_deref(), env);
    if session::hook_stands_aside(
        Hook::Compact,
        env.driver,
        root.as_deref(),
        env.config_dir.as_deref(),
    ) {
        return ExitStatus::Success;
    }
    match mark(global, env, io) {
        Ok(()) => ExitStatus::Success,
        Err(err) => {
            ui::report(io.stderr, &err.context("the compaction hook failed"));
            ExitStatus::Failure
        }
    }
}

fn mark(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<()> {
    let input = read_hook_input(io.stdin)?;
    // SessionStart fires for startup, resume and clear too: only a compaction matters.
    if input.hook_event_name.as_deref() == Some("SessionStart")
        && input.source.as_deref() != Some("compact")
    {
        return Ok(());
    }
    let project = Project::resolve(global.project.as_deref(), env, input.cwd.as_deref())?;
    let session = input.session_id.clone().or_else(|| env.session_id.clone());
    session::change_own_loop(
        &project,
        env.config_dir.as_deref(),
        |state| {
            // Only the session's own loop: `pagent loop` sends every agent the full prompt.
            let mine = whose_loop(state, session.as_deref()) == Whose::This;
            (mine && !state.full_prompt_due).then(|| {
                let mut next = state.clone();
                next.full_prompt_due = true;
                next
            })
        },
        io.stderr,
    )?;
    Ok(())
}

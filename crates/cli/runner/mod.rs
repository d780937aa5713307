//! `pagent loop`: the external loop runner. A fresh agent process per iteration, the
//! same engine deciding between iterations as the Stop hook does inside a session.
//!
//! ```text
//! set up or resume the state (driver: loop)
//! repeat:
//!     run the agent with the pending prompt     (retry crashes and API errors, bounded)
//!     decide_iteration(state, its final message)
//!     save the state and the next prompt, log, checkpoint
//! until complete (exit 0), gave up (exit 3), or interrupted (exit 130)
//! ```
//!
//! Everything needed to resume lives in the state file, written after every iteration:
//! after a crash or Ctrl-C, `pagent loop` picks up at the same stage, iteration and
//! prompt.
//!
//! The loop is one value, [`run::Runner`], in four steps: `prepare` (the project, the
//! agent, the state set up or taken over), `iterate` (one run of the agent and the
//! engine's decision on it), the interruptions (Ctrl-C, a pause, a loop ended
//! elsewhere) and `finish`.
//!
//! Beside this file: `prepare` finds the agent and sets up or takes over the state;
//! `retry` runs the agent for one iteration, again after a crash or an API error with a
//! growing delay; `limit` waits out the agent's usage limit and runs the same iteration
//! again; `finish` saves the state at Ctrl-C and pushes a completed loop's work; `watch` notices a loop ended elsewhere; `stories` is the runner's side of
//! `--stories` and `--issues` (the progress.md line and the issue comments after each
//! iteration, the pull request's `Closes #N`), `github` the one place `gh` starts.
//! Each decision is applied like the Stop hook's (`session::apply`).

mod codex_walls;
mod finish;
mod github;
mod limit;
mod logs;
pub mod loop_event;
mod opencode_walls;
pub mod parallel;
mod pause;
mod prepare;
pub mod progress;
pub mod repo_git;
mod retry;
mod run;
mod sandbox;
pub mod status_line;
mod stories;
pub mod team;
mod usage;
mod watch;
pub mod worktree;

use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::runner::progress::Progress;
use crate::setup::plan::LoopPlan;

pub use retry::KeptFailing;
use run::{Next, Runner};

/// Sets up or resumes the loop, then runs it to the end.
pub fn drive(
    project_flag: Option<&std::path::Path>,
    env: &Env,
    args: LoopPlan,
    progress: &mut Progress,
    stdin: &mut dyn std::io::Read,
    stdin_is_terminal: bool,
) -> anyhow::Result<ExitStatus> {
    let (mut runner, mut state) = Runner::prepare(
        project_flag,
        env,
        args,
        progress,
        (stdin, stdin_is_terminal),
    )?;
    loop {
        state = match runner.iterate(state)? {
            Next::Again(next) => next,
            Next::Ended(last) => return Ok(runner.finish(&last)),
            Next::Exit(status) => return Ok(status),
        };
    }
}

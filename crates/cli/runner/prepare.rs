//! Before the first iteration: the agent to run, and the state to drive, new (set up and
//! installed like any loop) or resumed (taken over from a crash, Ctrl-C or the Stop hook),
//! with the runner lock that keeps a second runner off it.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use pagent_engine::{Action, Driver, State};

use super::repo_git;
use super::stories::stories_spec;
use crate::agent::{AgentSpec, Options};
use crate::cli::env::Env;
use crate::cli::hint::Hinted;
use crate::cli::ui;
use crate::io::now;
use crate::runner::progress::Progress;
use crate::session;
use crate::setup;
use crate::setup::plan::LoopPlan;
use crate::store;
use crate::store::eventlog::Event;
use crate::store::project::{Project, RUNNER_LOCK};
use crate::store::user::UserDir;
use pagent_door::files;
use pagent_door::process::{Program, SearchPath};

/// The agent to run, its program found now so a typo fails before any state is written:
/// the one the user named (`--agent-bin`), else on the cleaned `PATH`.
pub(super) fn agent_spec(
    args: &Options,
    env: &Env,
    search: &SearchPath,
) -> anyhow::Result<AgentSpec> {
    if let Some(line) = &args.command {
        return Ok(AgentSpec::Command {
            line: line.clone(),
            contain: None,
        });
    }
    let (kind, name) = (args.agent, args.agent.name());
    let program = match &args.agent_bin {
        Some(path) => Program::named_by_user(path, env.current_dir.as_deref()),
        None => Program::named(name, search)
            .ok()
            .with_context(|| format!("{name} is not on PATH: install it, or name the program with --agent-bin (or use --command)"))?,
    };
    Ok(AgentSpec::Known {
        kind,
        program,
        permission_mode: args.permission_mode.clone(),
        extra_args: args.agent_args.clone(),
        contain: None,
    })
}

/// A new state from the subcommand, --stories or --issues, or the active one to resume;
/// and the runner lock, held while this runner drives the state so that a second one
/// cannot.
pub(super) fn prepare_state(
    project: &Project,
    env: &Env,
    args: &LoopPlan,
    search: &SearchPath,
    progress: &mut Progress,
    (stdin, stdin_is_terminal): (&mut dyn std::io::Read, bool),
) -> anyhow::Result<(State, bool, files::Lock)> {
    let (state, force, action) = match &args.start {
        Some(start) => setup::plan::new_loop_state(
            project,
            env,
            start,
            args.budget,
            (stdin, stdin_is_terminal),
            &mut |line| progress.note(line),
        )?,
        None => match store::read_state(project)? {
            Some(state) if state.is_active() => {
                let runner = runner_lock(project, STATUS_PROBE)?;
                let contained = args.agent.sandbox;
                refuse_uncontained_reviewer(&state, contained)?;
                let (state, resumed) = resume(project, env, search, (state, contained), progress)?;
                return Ok((state, resumed, runner));
            }
            _ => match stories_spec(project, env, args, search, progress)? {
                Some(spec) => {
                    let (state, notes) = setup::stories::stories(project, env, &spec)?;
                    notes.lines().iter().for_each(|l| progress.note(l));
                    (state, false, Action::Stories)
                }
                None => bail!(nothing_to_resume(project)),
            },
        },
    };
    refuse_uncontained_reviewer(&state, args.agent.sandbox)?;
    // Before any agent of this loop runs: what its git processes are compared with.
    let mut state = state;
    state.git_config = repo_git::record(&project.root, env, search);
    state.contained = args.agent.sandbox;
    // Without --force, set-up refuses while a loop is active; with it, the runner driving
    // the old loop notices the new one within a moment and lets go of the runner lock.
    let installed = setup::install_state(
        project,
        &UserDir::of(env),
        &state,
        force,
        action,
        &mut |m: &str| ui::warn(progress.stderr(), m),
    )?;
    if let Some(line) = &installed.replaced {
        progress.note(line);
    }
    let state = installed.state;
    let runner = runner_lock(project, RUNNER_HANDOVER)?;
    Ok((state, false, runner))
}

/// A contained loop refuses a reviewer it cannot contain (Codex, OpenCode) before it
/// starts, rather than stop at its first review.
fn refuse_uncontained_reviewer(state: &State, contained: bool) -> anyhow::Result<()> {
    match crate::agent::review::uncontained_reviewer(state) {
        Some(kind) if contained => bail!(crate::cli::sandbox::uncontained_reviewer(kind)),
        _ => Ok(()),
    }
}

/// `pagent loop` with nothing to start and no active loop to resume, checked before
/// anything else (the agent, trust) so that this is what the user hears.
pub(super) fn refuse_nothing_to_resume(project: &Project, args: &LoopPlan) -> anyhow::Result<()> {
    let starts = args.start.is_some() || args.stories.is_some() || args.issues.is_some();
    if starts || store::read_state(project)?.is_some_and(|s| s.is_active()) {
        return Ok(());
    }
    bail!(nothing_to_resume(project))
}

fn nothing_to_resume(project: &Project) -> String {
    format!(
        "no active loop in {} to resume: start one with `pagent loop ralph TASK`, `pagent loop run PRD`, `pagent loop --stories tasks.md` or `pagent loop --issues label:ready`",
        project.root.display()
    )
}

/// How long a resuming runner waits for the runner lock: `pagent status` takes it shared
/// for an instant to tell a running loop from an interrupted one.
const STATUS_PROBE: Duration = Duration::from_millis(500);
/// How long a new runner waits for a replaced one to stop.
const RUNNER_HANDOVER: Duration = Duration::from_secs(10);

fn runner_lock(project: &Project, wait: Duration) -> anyhow::Result<files::Lock> {
    project
        .dir()
        .lock(Path::new(RUNNER_LOCK), wait)
        .map_err(|err| match err {
            files::DoorError::Busy(..) => anyhow::Error::new(
                Hinted::new(format!(
                    "another `pagent loop` is driving this loop in {}",
                    project.root.display()
                ))
                .hint("stop it first (Ctrl-C, or `pagent cancel`)"),
            ),
            other => anyhow::Error::new(other).context("cannot take the runner lock"),
        })
}

/// Takes over the active loop (from a crash, Ctrl-C, or the Stop hook). A loop that has
/// no record of the repository's git configuration (one the Stop hook drove, or set up
/// by an older pagent) records it now; whether its agent runs contained is this runner's
/// (`--sandbox` or not), said again.
fn resume(
    project: &Project,
    env: &Env,
    search: &SearchPath,
    (state, contained): (State, bool),
    progress: &mut Progress,
) -> anyhow::Result<(State, bool)> {
    let user_dir = &UserDir::of(env);
    anyhow::ensure!(
        store::ownership(project, user_dir, &state) == store::Ownership::Own,
        "the active loop in {} was not set up by you for this project (its seal does not verify, or it is an older copy); pagent will not run it",
        project.root.display()
    );
    let recorded = match state.git_config {
        Some(_) => None,
        None => repo_git::record(&project.root, env, search),
    };
    if state.driver == Driver::Loop && recorded.is_none() && state.contained == contained {
        return Ok((state, true));
    }
    let mut next = state.clone();
    next.driver = Driver::Loop;
    next.git_config = recorded.or(next.git_config);
    next.contained = contained;
    let outcome = pagent_engine::Outcome {
        decision: pagent_engine::Decision::Allow,
        write: Some(next),
        log: None,
    };
    let record = |entry| Event::of(entry, now(), None);
    match session::apply(project, env, &state, &outcome, record, &mut |m: &str| {
        ui::warn(progress.stderr(), m)
    })? {
        Some(written) => Ok((written, true)),
        None => bail!(
            Hinted::new("the loop's state changed while taking it over")
                .hint("run `pagent loop` again")
        ),
    }
}

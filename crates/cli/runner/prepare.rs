//! Before the first iteration: the agent to run, and the state to drive, new (set up and
//! installed like any loop) or resumed (taken over from a crash, Ctrl-C or the Stop hook),
//! with the runner lock that keeps a second runner off it.

use std::path::Path;
use std::time::Duration;

use anyhow::{Context, bail};
use pagent_engine::{Action, Driver, State};

use super::stories::stories_spec;
use crate::cli::args::{AgentArgs, AgentName, BudgetArgs, LoopArgs, LoopStart};
use crate::cli::env::Env;
use crate::process::{Program, SearchPath};
use crate::runner::agent::AgentSpec;
use crate::runner::progress::Progress;
use crate::store::project::{Project, RUNNER_LOCK};
use crate::store::{self, Applied, door, setup};

/// The agent to run, its program found now so a typo fails before any state is written:
/// the one the user named (`--agent-bin`), else on the cleaned `PATH`.
pub(super) fn agent_spec(
    args: &AgentArgs,
    env: &Env,
    search: &SearchPath,
) -> anyhow::Result<AgentSpec> {
    if let Some(line) = &args.command {
        return Ok(AgentSpec::Command { line: line.clone() });
    }
    let (kind, name) = match args.agent {
        AgentName::Claude => (pagent_protocol::stream::AgentKind::Claude, "claude"),
        AgentName::Codex => (pagent_protocol::stream::AgentKind::Codex, "codex"),
        AgentName::Opencode => (pagent_protocol::stream::AgentKind::Opencode, "opencode"),
    };
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
    })
}

/// A new state from the subcommand, --stories or --issues, or the active one to resume;
/// and the runner lock, held while this runner drives the state so that a second one
/// cannot.
pub(super) fn prepare_state(
    project: &Project,
    env: &Env,
    args: &LoopArgs,
    secret: &[u8],
    search: &SearchPath,
    progress: &mut Progress,
    (stdin, stdin_is_terminal): (&mut dyn std::io::Read, bool),
) -> anyhow::Result<(State, bool, door::Lock)> {
    let (state, force, action) = match &args.start {
        Some(LoopStart::Ralph(ralph_args)) => {
            let (mut ralph_args, task) = crate::cli::task::resolve(
                ralph_args.clone(),
                stdin,
                stdin_is_terminal,
                "pagent loop ralph",
            )?;
            ralph_args.budget = merged_budget(args.budget, ralph_args.budget);
            let (state, notes) =
                setup::build::ralph(project, env, &ralph_args, task, Driver::Loop)?;
            notes.lines().iter().for_each(|l| progress.note(l));
            (state, ralph_args.force, Action::Ralph)
        }
        Some(LoopStart::Run(run_args)) => {
            let mut run_args = run_args.clone();
            run_args.budget = merged_budget(args.budget, run_args.budget);
            let (state, notes, action) =
                match setup::build::stories_spec_of(&run_args, Driver::Loop)? {
                    Some(spec) => {
                        let (state, notes) = setup::stories::stories(project, env, &spec)?;
                        (state, notes, Action::Stories)
                    }
                    None => {
                        let (state, notes) =
                            setup::build::pipeline(project, env, &run_args, Driver::Loop)?;
                        (state, notes, Action::Run)
                    }
                };
            notes.lines().iter().for_each(|l| progress.note(l));
            (state, run_args.force, action)
        }
        None => match store::read_state(project)? {
            Some(state) if state.is_active() => {
                let runner = runner_lock(project, STATUS_PROBE)?;
                let (state, resumed) = resume(project, env, state, secret, progress)?;
                return Ok((state, resumed, runner));
            }
            _ => match stories_spec(project, args, search, progress)? {
                Some(spec) => {
                    let (state, notes) = setup::stories::stories(project, env, &spec)?;
                    notes.lines().iter().for_each(|l| progress.note(l));
                    (state, false, Action::Stories)
                }
                None => bail!(nothing_to_resume(project)),
            },
        },
    };
    // Without --force, set-up refuses while a loop is active; with it, the runner driving
    // the old loop notices the new one within a moment and lets go of the runner lock.
    let installed = setup::install_state(
        project,
        env.config_dir.as_deref(),
        &state,
        force,
        action,
        progress.stderr(),
    )?;
    if let Some(line) = &installed.replaced {
        progress.note(line);
    }
    let state = installed.state;
    let runner = runner_lock(project, RUNNER_HANDOVER)?;
    Ok((state, false, runner))
}

/// `pagent loop` with nothing to start and no active loop to resume, checked before
/// anything else (the agent, trust) so that this is what the user hears.
pub(super) fn refuse_nothing_to_resume(project: &Project, args: &LoopArgs) -> anyhow::Result<()> {
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

/// `pagent loop --max-tokens N ralph ...` and `pagent loop ralph --max-tokens N ...` both
/// work; a limit given after the subcommand wins.
fn merged_budget(outer: BudgetArgs, inner: BudgetArgs) -> BudgetArgs {
    BudgetArgs {
        max_duration: inner.max_duration.or(outer.max_duration),
        max_tokens: inner.max_tokens.or(outer.max_tokens),
        max_cost: inner.max_cost.or(outer.max_cost),
    }
}

/// How long a resuming runner waits for the runner lock: `pagent status` takes it shared
/// for an instant to tell a running loop from an interrupted one.
const STATUS_PROBE: Duration = Duration::from_millis(500);
/// How long a new runner waits for a replaced one to stop.
const RUNNER_HANDOVER: Duration = Duration::from_secs(10);

fn runner_lock(project: &Project, wait: Duration) -> anyhow::Result<door::Lock> {
    project
        .dir()
        .lock(Path::new(RUNNER_LOCK), wait)
        .map_err(|err| match err {
            door::DoorError::Busy(..) => anyhow::anyhow!(
                "another `pagent loop` is driving this loop in {}; stop it first (Ctrl-C, or `pagent cancel`)",
                project.root.display()
            ),
            other => anyhow::Error::new(other).context("cannot take the runner lock"),
        })
}

/// Takes over the active loop (from a crash, Ctrl-C, or the Stop hook).
fn resume(
    project: &Project,
    env: &Env,
    state: State,
    secret: &[u8],
    progress: &mut Progress,
) -> anyhow::Result<(State, bool)> {
    let config_dir = env.config_dir.as_deref();
    anyhow::ensure!(
        store::ownership(project, config_dir, &state) == store::Ownership::Own,
        "the active loop in {} was not set up by you for this project (its seal does not verify, or it is an older copy); pagent will not run it",
        project.root.display()
    );
    if state.driver == Driver::Loop {
        return Ok((state, true));
    }
    let mut next = state.clone();
    next.driver = Driver::Loop;
    match store::apply_if_unchanged(
        project,
        config_dir,
        &state,
        &next,
        secret,
        progress.stderr(),
    )? {
        Applied::Written(written) => Ok((*written, true)),
        Applied::Changed => {
            bail!("the loop's state changed while taking it over; run `pagent loop` again")
        }
    }
}

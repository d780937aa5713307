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
//! Beside this file: `prepare` finds the agent and sets up or takes over the state;
//! `retry` runs the agent for one iteration, again after a crash or an API error with a
//! growing delay; `limit` waits out the agent's usage limit and runs the same iteration
//! again; `finish` saves the state at Ctrl-C and pushes a completed loop's work; `watch` notices a loop ended elsewhere; `stories` is the runner's side of
//! `--stories` and `--issues` (the progress.md line and the issue comments after each
//! iteration, the pull request's `Closes #N`), `github` the one place `gh` starts.
//! Each decision is applied like the Stop hook's (`session::apply`).

mod finish;
mod github;
mod limit;
pub mod loop_event;
pub mod parallel;
mod pause;
mod prepare;
pub mod progress;
pub mod repo_git;
mod retry;
mod sandbox;
pub mod status_line;
mod stories;
mod usage;
mod watch;
pub mod worktree;

use pagent_engine::prompt::{StoppedRun, after_stopped, first_prompt, stopped_note};
use pagent_engine::{Decision, Status, decide_iteration};

use crate::agent::{AgentSpec, End, Limits, review};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::now;
use crate::runner::loop_event::Ending;
use crate::runner::progress::Progress;
use crate::setup;
use crate::setup::plan::LoopPlan;
use crate::store::consent;
use crate::store::eventlog::Event;
use crate::store::project::Project;
use crate::store::register::Origin;
use crate::store::secret;
use crate::store::user::{NoticeKey, UserDir};
use crate::world::FsWorld;
use pagent_door::process::SearchPath;

use pause::{Waited, apply_over_pause, wait_if_paused};
use prepare::{agent_spec, prepare_state};
use repo_git::{RepoGit, When};
pub use retry::KeptFailing;
use retry::{Attempt, Runs, run_with_retries};
use stories::note_stories;
use watch::{Watch, ended_elsewhere, stopped_elsewhere};

/// Sets up or resumes the loop, then runs it to the end.
pub fn drive(
    project_flag: Option<&std::path::Path>,
    env: &Env,
    args: LoopPlan,
    progress: &mut Progress,
    stdin: &mut dyn std::io::Read,
    stdin_is_terminal: bool,
) -> anyhow::Result<ExitStatus> {
    let base = Project::resolve(project_flag, env, None)?;
    let base_root = base.root.clone();
    let tree = args
        .worktree
        .as_deref()
        .map(|name| worktree::open_or_create(&base.root, name))
        .transpose()?;
    let project = match &tree {
        Some(tree) => Project::at(&tree.path)?,
        None => base,
    };
    // Programs are found, and children look them up, outside the project and the
    // repository a worktree belongs to.
    let search = SearchPath::new(env.path.as_deref(), &[&base_root, &project.root]);
    if let (Some(tree), Some(setup_line)) = (&tree, &args.setup)
        && tree.created
    {
        worktree::run_setup(&project.root, setup_line, &search)?;
    }
    prepare::refuse_nothing_to_resume(&project, &args)?;
    let agent = agent_spec(&args.agent, env, &search)?;
    let git_dir = base_root.join(".git");
    let writable: &[&std::path::Path] = match &tree {
        Some(_) => &[&project.root, &git_dir],
        None => &[&project.root],
    };
    let agent = sandbox::contain(agent, &args.agent, env, writable, &search)?;
    let user_dir = &UserDir::of(env);
    // The agent reads the project's own configuration: what can run commands needs trust
    // before the first worker starts, like a workflow's commands.
    if let AgentSpec::Known { kind, .. } = &agent {
        let sources = crate::store::agent_config::sources(&project, *kind);
        for line in consent::require(
            &project,
            user_dir,
            &sources,
            args.trusts(),
            &now().to_string(),
        )? {
            progress.note(&format!("pagent loop: {line}"));
        }
    }
    // The seal's secret exists before anything is set up or taken over; the writes read
    // it themselves.
    secret::read_or_create_secret(user_dir)?;
    let (mut state, resumed, _runner) = prepare_state(
        &project,
        env,
        &args,
        &search,
        progress,
        (stdin, stdin_is_terminal),
    )?;
    // Set up here, taken over from the Stop hook or resumed: the register says who drives.
    let origin = if env.parallel {
        Origin::Parallel
    } else {
        Origin::Loop
    };
    setup::register_loop(&project, user_dir, &state, origin, &mut |m: &str| {
        ui::warn(progress.stderr(), m)
    });
    progress.started(
        &state,
        &agent.label(),
        &project.root.display().to_string(),
        resumed,
    );
    if agent.containment().is_some() {
        progress.note(&format!("pagent loop: {}", crate::cli::sandbox::started()));
    }
    // Which account pays, said before anything is spent.
    if let AgentSpec::Known { kind, .. } = &agent {
        progress.note(&format!(
            "pagent loop: {}",
            crate::cli::costs::loop_agent(*kind)
        ));
    }
    let base_limits = Limits {
        iteration_timeout: args.agent.iteration_timeout,
        idle_timeout: args.agent.idle_timeout,
    };
    let run_id = crate::store::runs::run_id(&state);
    // Usage limits this iteration met (each one's run keeps its own log file).
    let mut limited = 0;
    // A limit no wait ends, when one ended the loop.
    let mut ended_by = None;

    loop {
        if let Some(ended) = ended_elsewhere(&project, &state) {
            return Ok(stopped_elsewhere(&state, &ended, progress));
        }
        state = match wait_if_paused(&project, state.clone(), progress) {
            Waited::Go(now) => *now,
            Waited::Ended(why) => return Ok(stopped_elsewhere(&state, &why, progress)),
            Waited::Interrupted => {
                progress.finished(
                    &state,
                    Ending::Interrupted,
                    &format!(
                        "stopped by a signal while paused; the state is saved{}",
                        finish::resume_words(&project, env)
                    ),
                );
                return Ok(ExitStatus::Interrupted);
            }
        };
        // A wait a Ctrl-C or a crash interrupted goes on where it was, under its label.
        if state.limit_wait.is_some() {
            progress.label_for(&state);
            match limit::wait(&project, env, state.clone(), true, progress)? {
                limit::Waited::Go(next) => state = *next,
                limit::Waited::Ended(why) => return Ok(stopped_elsewhere(&state, &why, progress)),
                limit::Waited::Interrupted => {
                    return Ok(finish::interrupted_waiting(&project, env, &state, progress));
                }
                limit::Waited::GaveUp(next) => {
                    state = *next;
                    break;
                }
            }
            continue;
        }
        let limits = usage::within_time_budget(base_limits, &state, now());
        let mut watch = Watch::new(&project, &state.loop_id);
        let stage = state.current().name.clone();
        let iteration = state.iterations[state.stage];
        // The plan as it was before this iteration: which stories it finishes.
        let plan_before = stories::current_plan(&project, &state).map(|(_, plan)| plan);
        let prompt = state
            .pending_prompt
            .clone()
            .unwrap_or_else(|| first_prompt(&state, &mut FsWorld::read_only(&project)));
        let runs = Runs {
            agent: &agent,
            search: &search,
            options: &args.agent,
            project: &project,
            env,
            limits,
            run_id: &run_id,
        };
        let attempt = run_with_retries(&runs, &mut state, &prompt, progress, limited, &mut || {
            watch.still_ours()
        })?;
        let run = match attempt {
            Attempt::Ran(run) => *run,
            Attempt::Limited { hit, spent } => {
                limited += 1;
                match limit::wait_out(&runs, &state, &hit, &spent, &prompt, progress)? {
                    limit::Waited::Go(next) => state = *next,
                    limit::Waited::Ended(why) => {
                        return Ok(stopped_elsewhere(&state, &why, progress));
                    }
                    limit::Waited::Interrupted => {
                        return Ok(finish::interrupted_waiting(&project, env, &state, progress));
                    }
                    limit::Waited::GaveUp(next) => {
                        state = *next;
                        ended_by = Some(pagent_engine::failure::FailureClass::Stop);
                        break;
                    }
                }
                continue;
            }
            Attempt::Interrupted => {
                return finish::interrupted(&project, env, &state, prompt, progress);
            }
        };
        limited = 0;

        let mut world = FsWorld::for_hook(&project, &state, run.final_message(), None)
            .with_path(env.path.clone())
            .with_review(review_setup(&agent, env));
        // Decided on the state with this run's usage added; applied over the state read.
        let metered = usage::metered(&state, &run.usage, &args.agent, user_dir);
        let mut step = decide_iteration(&metered, &mut world, now());
        // A reviewer that ran is paid for like the agent: its usage counts too.
        step.write = crate::world::usage::add_records(
            &step.write,
            &world.take_review_usage(),
            None,
            user_dir,
        );
        if let Some((key, notice)) = world.take_notice()
            && !user_dir.notice_given(&project.root, &NoticeKey::new(&key))
        {
            let _ = user_dir.remember_notice(&project.root, &NoticeKey::new(&key));
            progress.note(&notice);
        }
        let stopped = match run.end {
            End::TimedOut => Some(StoppedRun::TimedOut {
                limit_secs: limits.iteration_timeout.as_secs(),
            }),
            End::Stalled => Some(StoppedRun::Stalled {
                limit_secs: limits.idle_timeout.as_secs(),
            }),
            _ => None,
        }
        .map(stopped_note);
        step.write.pending_prompt = match &step.decision {
            Decision::Block { reason, .. } => Some(match &stopped {
                Some(note) => after_stopped(note, reason),
                None => reason.clone(),
            }),
            _ => None,
        };
        if let Some(note) = &stopped {
            step.log.detail = format!("{} ({note})", step.log.detail);
        }
        // The line is the iteration's: the stage and iteration the agent worked on.
        step.log.stage.clone_from(&stage);
        step.log.iteration = iteration;
        let action = step.log.action;
        let detail = step.log.detail.clone();
        let logged = |entry| Event::of(entry, now(), None).took(run.elapsed);
        // `pagent cancel` may have ended the loop while the agent ran: that wins.
        let outcome = step.into();
        let stderr = progress.stderr();
        let Some(next) =
            apply_over_pause(&project, env, &state, outcome, logged, &mut |m: &str| {
                ui::warn(stderr, m)
            })?
        else {
            let ended = ended_elsewhere(&project, &state)
                .unwrap_or_else(|| "the state changed meanwhile".to_owned());
            return Ok(stopped_elsewhere(&state, &ended, progress));
        };
        if let Some(verdict) = review::new_verdict(&state, &next) {
            progress.note(&format!("review: {}", verdict.summary));
        }
        let git = RepoGit {
            root: &project.root,
            env,
            search: &search,
            when: When::After(vec![next.git_config.as_ref()]),
        };
        note_stories(
            &project,
            &next,
            iteration,
            plan_before.as_ref(),
            args.comment_progress.then_some(&git),
            progress,
        );
        if args.checkpoint {
            match worktree::checkpoint(
                &project.root,
                &format!(
                    "pagent: {stage}, iteration {iteration} ({})",
                    action.words()
                ),
            ) {
                Ok(Some(id)) => progress.note(&format!("checkpoint {}", &id[..id.len().min(10)])),
                Ok(None) => {}
                Err(err) => progress.note(&format!("checkpoint failed: {err:#}")),
            }
        }
        progress.iteration_finished(&stage, iteration, action, &detail, run.elapsed, &next.usage);
        state = next;
        if !state.is_active() {
            break;
        }
    }

    let reason = state.end_reason.clone().unwrap_or_default();
    match state.status {
        Status::Complete => {
            progress.finished(&state, Ending::Complete, &reason);
            let branch = tree.as_ref().map(|t| t.branch.clone());
            Ok(finish::after_completion(
                &project, env, branch, &args, &state, progress,
            ))
        }
        _ => {
            progress.finished_by(&state, Ending::GaveUp, &reason, ended_by);
            Ok(ExitStatus::GaveUp)
        }
    }
}

/// How this runner starts a reviewer: the program the user named for reviewers, else the
/// loop's own agent program when the review asks for the same agent, else `PATH`. No
/// deadline: each iteration is its own process, not inside a hook's time limit.
fn review_setup(agent: &AgentSpec, env: &Env) -> review::ReviewSetup {
    review::ReviewSetup {
        config_dir: env.config_dir.clone(),
        path: env.path.clone(),
        program: env.reviewer_bin.clone(),
        own_agent: match agent {
            AgentSpec::Known { kind, program, .. } => Some((*kind, program.clone())),
            AgentSpec::Command { .. } => None,
        },
        deadline: None,
    }
}

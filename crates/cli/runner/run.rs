//! One `pagent loop` as a value: [`Runner::prepare`] opens the project (a worktree if
//! asked), finds the agent, asks for the trust its configuration needs and sets up or
//! takes over the state; [`Runner::iterate`] runs one iteration (or waits out a pause
//! or a usage limit) and says what comes next; [`Runner::finish`] says how the loop
//! ended and pushes a completed loop's work.

use pagent_engine::failure::FailureClass;
use pagent_engine::prompt::{StoppedRun, after_stopped, first_prompt, stopped_note};
use pagent_engine::{Action, Decision, State, Status, Step, decide_iteration};
use pagent_stories::Plan;

use crate::agent::{AgentRun, AgentSpec, End, Limits, review};
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
use pagent_door::files;
use pagent_door::process::SearchPath;

use super::pause::{Waited, apply_over_pause, wait_if_paused};
use super::prepare::{self, agent_spec, prepare_state};
use super::repo_git::{RepoGit, When};
use super::retry::{Attempt, Runs, run_with_retries};
use super::stories::{self, note_stories};
use super::watch::{Watch, ended_elsewhere, stopped_elsewhere};
use super::worktree::{self, Worktree};
use super::{finish, limit, usage};

/// One loop, set up: what each of its iterations runs with, and what it carries from
/// one iteration to the next.
pub(super) struct Runner<'a, 'p> {
    env: &'a Env,
    args: LoopPlan,
    progress: &'a mut Progress<'p>,
    /// The worktree the loop runs in, if it runs in one.
    tree: Option<Worktree>,
    project: Project,
    search: SearchPath,
    agent: AgentSpec,
    /// What a contained loop's reviewer runs inside.
    review_sandbox: Option<review::ReviewSandbox>,
    user_dir: UserDir,
    base_limits: Limits,
    run_id: String,
    /// Usage limits this iteration met (each one's run keeps its own log file).
    limited: u32,
    /// A limit no wait ends, when one ended the loop.
    ended_by: Option<FailureClass>,
    /// The project's run logs, kept under their cap before each run.
    log_cap: super::logs::LogCap,
    /// The runner's lock on the project, held until the loop ends.
    _lock: files::Lock,
}

/// What an iteration leads to.
pub(super) enum Next {
    /// Another iteration, from this state.
    Again(State),
    /// The loop ended (complete, or gave up) in this state.
    Ended(State),
    /// The run stops here with this status: interrupted, or ended elsewhere.
    Exit(ExitStatus),
}

/// The iteration the agent works on: its stage and number, and the plan as it was
/// before it (which stories it finishes).
struct Iteration {
    stage: String,
    number: u32,
    plan_before: Option<Plan>,
}

impl<'a, 'p> Runner<'a, 'p> {
    /// Opens the project, finds the agent and sets up, resumes or takes over the state.
    pub(super) fn prepare(
        project_flag: Option<&std::path::Path>,
        env: &'a Env,
        args: LoopPlan,
        progress: &'a mut Progress<'p>,
        stdin: (&mut dyn std::io::Read, bool),
    ) -> anyhow::Result<(Runner<'a, 'p>, State)> {
        stories::refuse_what_the_start_ignores(&args)?;
        let (tree, project, search, base_root) = open_project(project_flag, env, &args)?;
        prepare::refuse_nothing_to_resume(&project, &args)?;
        let agent = agent_spec(&args.agent, env, &search)?;
        // A worktree's commits are written in the repository's own git folder.
        let git_dir = base_root.join(".git");
        let writable: &[&std::path::Path] = match &tree {
            Some(_) => &[&project.root, &git_dir],
            None => &[&project.root],
        };
        let agent = super::sandbox::contain(agent, &args.agent, env, writable, &search)?;
        let review_sandbox = super::sandbox::reviewer(&agent, env, writable);
        let user_dir = UserDir::of(env);
        trust_agent_config(&project, &user_dir, &agent, &args, progress)?;
        // The seal's secret exists before anything is set up or taken over; the writes
        // read it themselves.
        secret::read_or_create_secret(&user_dir)?;
        let (state, resumed, lock) = prepare_state(&project, env, &args, &search, progress, stdin)?;
        // Set up here, taken over from the Stop hook or resumed: the register says who
        // drives.
        let origin = if env.parallel {
            Origin::Parallel
        } else {
            Origin::Loop
        };
        setup::register_loop(&project, &user_dir, &state, origin, &mut |m: &str| {
            ui::warn(progress.stderr(), m)
        });
        let root = project.root.display().to_string();
        progress.started(&state, &agent.label(), &root, resumed);
        if let Some(sandbox) = agent.sandbox() {
            let (walls, hosts) = match sandbox {
                crate::agent::Sandbox::Walls(walls) => (true, walls.hosts()),
                _ => (false, args.agent.allow_hosts.clone()),
            };
            let checks = sandbox.check_walls().is_some();
            let said = crate::cli::sandbox::started(walls, checks, &hosts);
            progress.note(&format!("pagent loop: {said}"));
        }
        // Which account pays, said before anything is spent.
        if let AgentSpec::Known { kind, .. } = &agent {
            progress.note(&format!(
                "pagent loop: {}",
                crate::cli::costs::loop_agent(*kind)
            ));
        }
        let log_cap = super::logs::LogCap::new(crate::store::config::logs_cap(&user_dir));
        let runner = Runner {
            env,
            base_limits: Limits {
                iteration_timeout: args.agent.iteration_timeout,
                idle_timeout: args.agent.idle_timeout,
            },
            args,
            progress,
            tree,
            project,
            search,
            agent,
            review_sandbox,
            user_dir,
            run_id: crate::store::runs::run_id(&state),
            limited: 0,
            ended_by: None,
            log_cap,
            _lock: lock,
        };
        Ok((runner, state))
    }

    /// One step of the loop from `state`: a loop ended elsewhere, a pause, a usage limit
    /// waited out, or one iteration of the agent and the engine's decision on it.
    pub(super) fn iterate(&mut self, state: State) -> anyhow::Result<Next> {
        if let Some(ended) = ended_elsewhere(&self.project, &state) {
            return Ok(Next::Exit(stopped_elsewhere(&state, &ended, self.progress)));
        }
        let state = match wait_if_paused(&self.project, state.clone(), self.progress) {
            Waited::Go(now) => *now,
            Waited::Ended(why) => {
                return Ok(Next::Exit(stopped_elsewhere(&state, &why, self.progress)));
            }
            Waited::Interrupted => return Ok(Next::Exit(self.interrupted_while_paused(&state))),
        };
        // A wait a Ctrl-C or a crash interrupted goes on where it was, under its label.
        if state.limit_wait.is_some() {
            self.progress.label_for(&state);
            let waited = limit::wait(&self.project, self.env, state.clone(), true, self.progress)?;
            return Ok(self.after_limit_wait(&state, waited));
        }
        self.run_iteration(state)
    }

    /// The loop ended in `state`: complete (its work pushed if asked) or gave up.
    pub(super) fn finish(&mut self, state: &State) -> ExitStatus {
        let reason = state.end_reason.clone().unwrap_or_default();
        match state.status {
            Status::Complete => {
                self.progress.finished(state, Ending::Complete, &reason);
                let branch = self.tree.as_ref().map(|t| t.branch.clone());
                finish::after_completion(
                    &self.project,
                    self.env,
                    branch,
                    &self.args,
                    state,
                    self.progress,
                )
            }
            _ => {
                self.progress
                    .finished_by(state, Ending::GaveUp, &reason, self.ended_by);
                ExitStatus::GaveUp
            }
        }
    }

    /// A signal arrived while the loop was paused: the state is saved as it is.
    fn interrupted_while_paused(&mut self, state: &State) -> ExitStatus {
        self.progress.finished(
            state,
            Ending::Interrupted,
            &format!(
                "stopped by a signal while paused; the state is saved{}",
                finish::resume_words(&self.project, self.env)
            ),
        );
        ExitStatus::Interrupted
    }

    /// What a wait for a usage limit to end leads to.
    fn after_limit_wait(&mut self, state: &State, waited: limit::Waited) -> Next {
        match waited {
            limit::Waited::Go(next) => Next::Again(*next),
            limit::Waited::Ended(why) => Next::Exit(stopped_elsewhere(state, &why, self.progress)),
            limit::Waited::Interrupted => Next::Exit(finish::interrupted_waiting(
                &self.project,
                self.env,
                state,
                self.progress,
            )),
            limit::Waited::GaveUp(next) => Next::Ended(*next),
        }
    }

    /// Runs the agent on the pending prompt (again after a crash or an API error, after
    /// a usage limit's wait), then decides on what it did.
    fn run_iteration(&mut self, mut state: State) -> anyhow::Result<Next> {
        let limits = usage::within_time_budget(self.base_limits, &state, now());
        let mut watch = Watch::new(&self.project, &state.loop_id);
        let iteration = Iteration {
            stage: state.current().name.clone(),
            number: state.iterations[state.stage],
            plan_before: stories::current_plan(&self.project, &state).map(|(_, plan)| plan),
        };
        let prompt = state
            .pending_prompt
            .clone()
            .unwrap_or_else(|| first_prompt(&state, &mut FsWorld::read_only(&self.project)));
        self.log_cap.keep(&self.project, &state, self.progress);
        let runs = Runs {
            agent: &self.agent,
            search: &self.search,
            options: &self.args.agent,
            project: &self.project,
            env: self.env,
            limits,
            run_id: &self.run_id,
        };
        let attempt = run_with_retries(
            &runs,
            &mut state,
            &prompt,
            self.progress,
            self.limited,
            &mut || watch.still_ours(),
        )?;
        let run = match attempt {
            Attempt::Ran(run) => *run,
            Attempt::Limited { hit, spent } => {
                self.limited += 1;
                let waited = limit::wait_out(&runs, &state, &hit, &spent, &prompt, self.progress)?;
                if matches!(waited, limit::Waited::GaveUp(_)) {
                    self.ended_by = Some(FailureClass::Stop);
                }
                return Ok(self.after_limit_wait(&state, waited));
            }
            Attempt::Interrupted => {
                let status =
                    finish::interrupted(&self.project, self.env, &state, prompt, self.progress)?;
                return Ok(Next::Exit(status));
            }
        };
        self.limited = 0;
        self.conclude(&state, &run, limits, &iteration)
    }

    /// The engine decides on the run, and the decision is applied over the state as it
    /// is now (`pagent cancel` may have ended the loop while the agent ran: that wins).
    fn conclude(
        &mut self,
        state: &State,
        run: &AgentRun,
        limits: Limits,
        iteration: &Iteration,
    ) -> anyhow::Result<Next> {
        let mut step = self.decide(state, run);
        note_stopped(&mut step, &run.end, limits);
        // The line is the iteration's: the stage and iteration the agent worked on.
        step.log.stage.clone_from(&iteration.stage);
        step.log.iteration = iteration.number;
        let action = step.log.action;
        let detail = step.log.detail.clone();
        let logged = |entry| Event::of(entry, now(), None).took(run.elapsed);
        let outcome = step.into();
        let stderr = self.progress.stderr();
        let Some(next) = apply_over_pause(
            &self.project,
            self.env,
            state,
            outcome,
            logged,
            &mut |m: &str| ui::warn(stderr, m),
        )?
        else {
            let ended = ended_elsewhere(&self.project, state)
                .unwrap_or_else(|| "the state changed meanwhile".to_owned());
            return Ok(Next::Exit(stopped_elsewhere(state, &ended, self.progress)));
        };
        self.after_iteration(state, &next, iteration, action);
        self.progress.iteration_finished(
            &iteration.stage,
            iteration.number,
            action,
            &detail,
            run.elapsed,
            &next.usage,
        );
        Ok(if next.is_active() {
            Next::Again(next)
        } else {
            Next::Ended(next)
        })
    }

    /// The engine's step on the run: decided on the state with the run's usage added
    /// (and a reviewer's, paid for like the agent), its one-time notice told.
    fn decide(&mut self, state: &State, run: &AgentRun) -> Step {
        let mut world = FsWorld::for_hook(&self.project, state, run.final_message(), None)
            .with_path(self.env.path.clone())
            .with_walls(self.agent.sandbox().and_then(|s| s.check_walls()).cloned())
            .with_review(review_setup(
                &self.agent,
                self.review_sandbox.clone(),
                self.env,
            ));
        let metered = usage::metered(state, &run.usage, &self.args.agent, &self.user_dir);
        let mut step = decide_iteration(&metered, &mut world, now());
        step.write = crate::world::usage::add_records(
            &step.write,
            &world.take_review_usage(),
            None,
            &self.user_dir,
        );
        if let Some((key, notice)) = world.take_notice()
            && !self
                .user_dir
                .notice_given(&self.project.root, &NoticeKey::new(&key))
        {
            let _ = self
                .user_dir
                .remember_notice(&self.project.root, &NoticeKey::new(&key));
            self.progress.note(&notice);
        }
        step
    }

    /// What follows an applied iteration: the review's verdict, the stories' progress
    /// (and issue comments), the checkpoint commit.
    fn after_iteration(
        &mut self,
        state: &State,
        next: &State,
        iteration: &Iteration,
        action: Action,
    ) {
        if let Some(verdict) = review::new_verdict(state, next) {
            self.progress.note(&format!("review: {}", verdict.summary));
        }
        let git = RepoGit {
            root: &self.project.root,
            env: self.env,
            search: &self.search,
            when: When::After(vec![next.git_config.as_ref()]),
        };
        note_stories(
            &self.project,
            next,
            iteration.number,
            iteration.plan_before.as_ref(),
            self.args.comment_progress.then_some(&git),
            self.progress,
        );
        if self.args.checkpoint {
            let message = format!(
                "pagent: {}, iteration {} ({})",
                iteration.stage,
                iteration.number,
                action.words()
            );
            match worktree::checkpoint(&self.project.root, &message) {
                Ok(Some(id)) => self
                    .progress
                    .note(&format!("checkpoint {}", &id[..id.len().min(10)])),
                Ok(None) => {}
                Err(err) => self.progress.note(&format!("checkpoint failed: {err:#}")),
            }
        }
    }
}

/// The project the loop runs in (its worktree, created and set up if new) and where
/// programs are found.
fn open_project(
    project_flag: Option<&std::path::Path>,
    env: &Env,
    args: &LoopPlan,
) -> anyhow::Result<(Option<Worktree>, Project, SearchPath, std::path::PathBuf)> {
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
    Ok((tree, project, search, base_root))
}

/// The agent reads the project's own configuration: what can run commands needs trust
/// before the first worker starts, like a workflow's commands.
fn trust_agent_config(
    project: &Project,
    user_dir: &UserDir,
    agent: &AgentSpec,
    args: &LoopPlan,
    progress: &mut Progress,
) -> anyhow::Result<()> {
    if let AgentSpec::Known { kind, .. } = agent {
        let sources = crate::store::agent_config::sources(project, *kind);
        for line in consent::require(
            project,
            user_dir,
            &sources,
            args.trusts(),
            &now().to_string(),
        )? {
            progress.note(&format!("pagent loop: {line}"));
        }
    }
    Ok(())
}

/// A run the clock or the watchdog stopped: the next prompt and the log line say so.
fn note_stopped(step: &mut Step, end: &End, limits: Limits) {
    let stopped = match end {
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
}

/// How this runner starts a reviewer: the program the user named for reviewers, else the
/// loop's own agent program when the review asks for the same agent, else `PATH`. No
/// deadline: each iteration is its own process, not inside a hook's time limit.
fn review_setup(
    agent: &AgentSpec,
    sandbox: Option<review::ReviewSandbox>,
    env: &Env,
) -> review::ReviewSetup {
    review::ReviewSetup {
        config_dir: env.config_dir.clone(),
        path: env.path.clone(),
        program: env.reviewer_bin.clone(),
        own_agent: match agent {
            AgentSpec::Known { kind, program, .. } => Some((*kind, program.clone())),
            AgentSpec::Command { .. } => None,
        },
        deadline: None,
        sandbox,
    }
}

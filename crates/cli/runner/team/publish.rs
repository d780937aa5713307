//! `pagent team start PLAN`: the plan read as `pagent parallel` reads it (every format,
//! one story per task, dependencies kept), written as the team's `plan.json`, and
//! published with a fresh `state.json` in one atomic, create-only push. A team of that
//! name already on the remote makes the push fail, and nothing changes.
//!
//! The machine that starts a team is its user's: the commands given as flags here (the
//! checks, an agent command) are recorded as trusted on this machine, so a worker started
//! here runs them; every other machine's user trusts them for themselves.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use git2::Oid;
use pagent_engine::Budget;
use pagent_stories::{Format, Plan};

use super::git::{Expect, Update};
use super::names;
use super::objects::write_record;
use super::records::{AgentSettings, PlanFile, TeamPlan, TeamState, TeamStory, VERSION, encode};
use super::remote::{Remote, all_ok};
use super::trust;
use crate::agent::Options;
use crate::cli::env::Env;
use crate::io::now;
pub use crate::runner::stories::ISSUES_PLAN;
use crate::runner::stories::{IssuesPlan, write_issues_plan};
use crate::setup::tasks::{Task, read_tasks_and_bytes};

/// What `pagent team start` was given.
#[derive(Debug, Clone)]
pub struct StartSettings {
    /// The clone it runs in, and the remote's URL.
    pub root: PathBuf,
    pub url: String,
    pub team: String,
    pub branch: String,
    /// The plan file; with `issues`, where the issues are written down.
    pub plan: PathBuf,
    /// `--issues QUERY`: the plan is GitHub issues, asked of `gh` first.
    pub issues: Option<String>,
    pub format: Option<Format>,
    pub agent: Options,
    pub checks: Vec<String>,
    pub max_iterations: u32,
    pub budget: Budget,
    pub lease: Duration,
    pub host: String,
}

/// What was published.
#[derive(Debug, Clone)]
pub struct Published {
    pub plan: TeamPlan,
    /// Why the plan file's markers will not be ticked, when they will not.
    pub no_ticks: Option<String>,
    /// With `--issues`: how many issues `gh` gave, and a note when it found more.
    pub issues: Option<IssuesPlan>,
}

/// Reads the plan, publishes the team, trusts its commands here.
pub fn start(settings: &StartSettings, env: &Env) -> anyhow::Result<Published> {
    let issues = match &settings.issues {
        Some(query) => Some(issues_plan(&settings.root, env, query)?),
        None => None,
    };
    let (tasks, _) = read_tasks_and_bytes(&settings.plan, &settings.root, settings.format)?;
    let remote = Remote::new(&settings.root, &settings.url, &settings.team, env)?;
    let repo = remote.repo()?;
    let plan_file = plan_file(&repo, &settings.plan, settings.format, &tasks);
    let plan = team_plan(settings, tasks, plan_file.clone())?;
    plan.validate(&settings.team)
        .map_err(|why| anyhow::anyhow!("the team's plan cannot be used: {why}"))?;
    let branch_tip = remote_branch(&remote, &settings.branch)?;
    let no_ticks = match &plan_file {
        None => Some("it is not a plan file of this repository".to_owned()),
        Some(file) if issues.is_some() && !in_tree(&repo, branch_tip, &file.path) => Some(format!(
            "{} is this machine's own copy of the GitHub issues, not a file on {}",
            file.path, settings.branch
        )),
        Some(file) if !in_tree(&repo, branch_tip, &file.path) => Some(format!(
            "{} is not on {} of the remote (commit and push it, then start the team)",
            file.path, settings.branch
        )),
        Some(_) => None,
    };
    let at = now();
    let plan_commit = write_record(
        &repo,
        "plan.json",
        &encode(&plan),
        &[],
        "pagent: team plan",
        at.0,
    )?;
    let state = TeamState::new(&settings.host, at);
    let state_commit = write_record(
        &repo,
        "state.json",
        &encode(&state),
        &[],
        "pagent: team state",
        at.0,
    )?;
    let pushed = remote
        .turn()
        .push(
            &[
                Update {
                    new: Some(plan_commit),
                    dst: remote.refs.plan(),
                    expect: Expect::Absent,
                },
                Update {
                    new: Some(state_commit),
                    dst: remote.refs.state(),
                    expect: Expect::Absent,
                },
            ],
            true,
        )
        .map_err(|e| anyhow::anyhow!("cannot publish the team: {e}"))?;
    if !all_ok(&pushed) {
        bail!(
            "the remote already has a team named {}; choose another --name, or see it with `pagent team status --team {}`",
            settings.team,
            settings.team
        );
    }
    trust::trust_here(env, &settings.url, &plan)?;
    Ok(Published {
        plan,
        no_ticks,
        issues,
    })
}

/// `--issues QUERY`: the issues asked of the user's own `gh` and written down as
/// [`ISSUES_PLAN`], as `pagent loop --issues` does (one code path for both).
fn issues_plan(root: &Path, env: &Env, query: &str) -> anyhow::Result<IssuesPlan> {
    let project = crate::store::project::Project::at(root)?;
    // A loop here may be working through that very file (and ticking it): never
    // rewritten under it.
    anyhow::ensure!(
        project.runner_is_running() != Some(true),
        "a `pagent loop` is running in {} and may be working through {ISSUES_PLAN}; start the team from issues once it has ended",
        project.root.display()
    );
    let search = pagent_door::process::SearchPath::new(env.path.as_deref(), &[&project.root]);
    write_issues_plan(&project, env, &search, query)
}

/// The shared branch's tip on the remote; an error when the remote has no such branch.
fn remote_branch(remote: &Remote, branch: &str) -> anyhow::Result<Oid> {
    let spec = format!("+refs/heads/{branch}:{}", remote.refs.seen_branch());
    remote.git.fetch(&[spec]).map_err(|e| match e.text().to_owned() {
        why if why.contains("couldn't find remote ref") => anyhow::anyhow!(
            "the remote has no branch {branch} for the stories to land on; push it first (or name another with --branch)"
        ),
        why => anyhow::anyhow!("cannot reach the remote: {why}"),
    })?;
    let repo = remote.repo()?;
    super::objects::ref_target(&repo, &remote.refs.seen_branch())
        .context("the remote's branch was fetched but cannot be read")
}

/// Whether `path` is a file in the tree of commit `tip`.
fn in_tree(repo: &git2::Repository, tip: Oid, path: &str) -> bool {
    repo.find_commit(tip)
        .and_then(|c| c.tree())
        .and_then(|t| t.get_path(Path::new(path)))
        .is_ok_and(|e| e.kind() == Some(git2::ObjectType::Blob))
}

/// The plan file as the team's landings tick it: its path in the repository and its
/// format, when the tasks come from a plan inside the repository.
fn plan_file(
    repo: &git2::Repository,
    path: &Path,
    format: Option<Format>,
    tasks: &[Task],
) -> Option<PlanFile> {
    if tasks.iter().all(|t| t.story.is_none()) {
        return None;
    }
    let workdir = pagent_door::files::canonical_dir(repo.workdir()?).ok()?;
    let file = pagent_door::files::canonical(path).ok()?;
    let rel = file.strip_prefix(&workdir).ok()?;
    let rel: Vec<&str> = rel
        .components()
        .map(|c| c.as_os_str().to_str())
        .collect::<Option<_>>()?;
    let bytes =
        pagent_door::files::read_outside(&file, pagent_stories::MAX_PLAN_BYTES as u64).ok()?;
    let plan = Plan::read(std::str::from_utf8(&bytes).ok()?, format).ok()?;
    Some(PlanFile {
        path: rel.join("/"),
        format: plan.format.name().to_owned(),
    })
}

fn team_plan(
    settings: &StartSettings,
    tasks: Vec<Task>,
    plan_file: Option<PlanFile>,
) -> anyhow::Result<TeamPlan> {
    names::checked("the team name", &settings.team)?;
    anyhow::ensure!(
        names::is_branch(&settings.branch),
        "{:?} is not a branch name",
        settings.branch
    );
    let stories = tasks
        .into_iter()
        .map(|task| TeamStory {
            name: task.name,
            id: task.story,
            task: task.task,
            after: task.after,
            max_iterations: task.max_iterations,
            promise: task.promise,
        })
        .collect();
    Ok(TeamPlan {
        version: VERSION,
        team: settings.team.clone(),
        branch: settings.branch.clone(),
        created_at: now(),
        created_by: settings.host.clone(),
        lease_secs: settings.lease.as_secs(),
        plan_file,
        stories,
        agent: agent_settings(&settings.agent),
        max_iterations: settings.max_iterations,
        budget: settings.budget,
        checks: settings.checks.clone(),
    })
}

/// The agent options as the plan keeps them (a program's path is this machine's: left
/// out).
pub fn agent_settings(options: &Options) -> AgentSettings {
    AgentSettings {
        kind: options.agent.name().to_owned(),
        command: options.command.clone(),
        args: options.agent_args.clone(),
        permission_mode: options.permission_mode.clone(),
        iteration_timeout_secs: options.iteration_timeout.as_secs(),
        idle_timeout_secs: options.idle_timeout.as_secs(),
        retries: options.retries,
        retry_delay_secs: options.retry_delay.as_secs(),
        outage_wait_secs: options.outage_wait.as_secs(),
        limit_wait_secs: options.limit_wait.as_secs(),
        limit_margin_secs: options.limit_margin.as_secs(),
        no_limit_wait: options.no_limit_wait,
        sandbox: options.sandbox,
    }
}

/// The plan's agent as options for this machine (`agent_bin`: the user's own program).
pub fn agent_options(settings: &AgentSettings, agent_bin: Option<PathBuf>) -> Options {
    Options {
        agent: pagent_protocol::stream::AgentKind::from_name(&settings.kind)
            .unwrap_or(pagent_protocol::stream::AgentKind::Claude),
        command: settings.command.clone(),
        agent_bin,
        agent_args: settings.args.clone(),
        permission_mode: settings.permission_mode.clone(),
        iteration_timeout: Duration::from_secs(settings.iteration_timeout_secs),
        idle_timeout: Duration::from_secs(settings.idle_timeout_secs),
        retries: settings.retries,
        retry_delay: Duration::from_secs(settings.retry_delay_secs),
        outage_wait: Duration::from_secs(settings.outage_wait_secs),
        limit_wait: Duration::from_secs(settings.limit_wait_secs),
        limit_margin: Duration::from_secs(settings.limit_margin_secs),
        no_limit_wait: settings.no_limit_wait,
        // `pagent team start --sandbox`: every worker contains its agents (a worker's own
        // --sandbox contains them whatever the plan says; a plan never opens hosts).
        sandbox: settings.sandbox,
        allow_hosts: Vec::new(),
    }
}

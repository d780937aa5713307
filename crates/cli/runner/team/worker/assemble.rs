//! A worker put together: the team read from the remote, what this machine runs of it
//! (the team's agent and checks, or the user's own flags instead; the team's commands
//! only with consent), the settings every story's loop starts with, and the worker's
//! name.

use std::io::Write;
use std::path::PathBuf;
use std::sync::mpsc;

use anyhow::Context;
use pagent_protocol::stream::AgentKind;

use super::super::names;
use super::super::publish::agent_options;
use super::super::remote::{Remote, SyncError};
use super::super::story_loop::LoopSettings;
use super::super::trust;
use super::shared::{Shared, SharedParts};
use super::{Running, work};
use crate::agent::Options;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::setup::plan::ParallelPlan;
use crate::store::project::Project;
use pagent_door::process::SearchPath;

/// The user's own agent, replacing the team's (any flag of it given).
#[derive(Debug, Clone, Default)]
pub struct OwnAgent {
    pub kind: Option<AgentKind>,
    pub command: Option<String>,
    pub args: Vec<String>,
    pub permission_mode: Option<String>,
}

impl OwnAgent {
    pub fn is_given(&self) -> bool {
        self.kind.is_some()
            || self.command.is_some()
            || !self.args.is_empty()
            || self.permission_mode.is_some()
    }
}

/// What `pagent team work` was given.
#[derive(Debug, Clone)]
pub struct WorkSettings {
    pub root: PathBuf,
    pub url: String,
    pub team: String,
    pub name: Option<String>,
    pub host: String,
    pub own_agent: OwnAgent,
    pub agent_bin: Option<PathBuf>,
    pub own_checks: Vec<String>,
    /// `--sandbox`: this worker contains its agents even if the plan does not ask.
    pub sandbox: bool,
    /// `--allow-host`: the hosts its contained agents may reach (never the plan's).
    pub allow_hosts: Vec<String>,
    pub trust: bool,
    pub running: Running,
}

/// Joins the team and works until the worker's end.
pub fn join(settings: WorkSettings, env: &Env, out: &mut dyn Write) -> anyhow::Result<ExitStatus> {
    let worker = match &settings.name {
        Some(name) => names::checked("the worker name", name)?.to_owned(),
        None => worker_name(&settings.host),
    };
    let remote =
        Remote::new(&settings.root, &settings.url, &settings.team, env)?.for_worker(&worker);
    let view = remote.sync().map_err(|err| match err {
        SyncError::Offline(why) => {
            anyhow::anyhow!("cannot reach the remote {}: {why}", settings.url)
        }
        SyncError::View(err) => anyhow::anyhow!(err),
        SyncError::Refused(why) => anyhow::anyhow!(why),
    })?;
    let plan = view.plan.clone();
    let own_agent = settings.own_agent.is_given();
    let mut needed: Vec<String> = Vec::new();
    if settings.own_checks.is_empty() {
        needed.extend(plan.checks.iter().map(|c| format!("check: {c}")));
    }
    if !own_agent {
        needed.extend(plan.agent.commands());
    }
    for line in trust::require(env, &settings.url, &plan.team, &needed, settings.trust)? {
        writeln!(out, "pagent team: {line}")?;
    }
    let team_agent = agent_options(&plan.agent, settings.agent_bin.clone());
    let mut agent = if own_agent {
        own_options(&settings.own_agent, team_agent)
    } else {
        team_agent
    };
    // Contained when the plan or this worker asks; only the worker opens hosts.
    agent.sandbox |= settings.sandbox;
    agent.allow_hosts = settings.allow_hosts.clone();
    let checks = if settings.own_checks.is_empty() {
        plan.checks.clone()
    } else {
        settings.own_checks.clone()
    };
    let search = SearchPath::new(env.path.as_deref(), &[&settings.root]);
    // The gate is the project's code too: inside pagent's walls when the agents are.
    let walls = crate::runner::sandbox::landing_walls(&agent, env, &settings.root, &search)?;
    let loops = LoopSettings {
        exe: env
            .pagent_exe()
            .context("cannot find the pagent binary itself")?,
        search: search.clone(),
        project: Project::at(&settings.root)?,
        plan: ParallelPlan {
            jobs: settings.running.jobs,
            agent,
            budget: plan.budget,
            max_iterations: plan.max_iterations,
            no_checkpoint: false,
            force: true,
            merge: false,
            merge_only: false,
            into: None,
            check: None,
            json: true,
            trust: settings.trust,
        },
    };
    let (tx, rx) = mpsc::channel();
    let shared = Shared::new(
        SharedParts {
            remote,
            plan,
            worker,
            host: settings.host.clone(),
            loops,
            checks,
            walls,
            search,
            env: env.clone(),
        },
        tx,
    );
    Ok(work(shared, rx, settings.running, out))
}

/// The user's own agent flags over the team's time limits and retries.
fn own_options(own: &OwnAgent, team: Options) -> Options {
    Options {
        agent: own.kind.unwrap_or(team.agent),
        command: own.command.clone(),
        agent_args: own.args.clone(),
        permission_mode: own
            .permission_mode
            .clone()
            .unwrap_or_else(|| super::super::records::DEFAULT_PERMISSION_MODE.to_owned()),
        ..team
    }
}

/// `HOST-1a2b`: the host's name made a name, and a random suffix.
fn worker_name(host: &str) -> String {
    let mut base: String = host
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '-'
            }
        })
        .take(40)
        .collect();
    base = base.trim_matches('-').to_owned();
    if base.is_empty() {
        base = "worker".into();
    }
    let suffix = pagent_door::random_bytes::<2>()
        .map(|b| pagent_engine::seal::hex(&b))
        .unwrap_or_else(|_| "0000".into());
    format!("{base}-{suffix}")
}

/// This machine's name: `HOSTNAME` (or `COMPUTERNAME`), else the kernel's, else
/// `unknown`; one short line.
pub fn host_name(env: &Env) -> String {
    let found = env.host_name.clone().or_else(|| {
        pagent_door::files::read_outside(std::path::Path::new("/proc/sys/kernel/hostname"), 256)
            .ok()
            .and_then(|b| String::from_utf8(b).ok())
    });
    let name = super::super::records::one_line(found.as_deref().unwrap_or("unknown"));
    let name: String = name.chars().take(64).collect();
    if name.is_empty() {
        "unknown".into()
    } else {
        name
    }
}

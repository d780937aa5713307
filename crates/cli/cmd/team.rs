//! `pagent team`: turns the flags into the team's values and hands them to
//! [`crate::runner::team`]; prints what each command did.

use std::io::Write;
use std::path::Path;

use anyhow::Context;

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::team_args::{
    TeamArgs, TeamCommand, TeamStartArgs, TeamWhich, TeamWorkArgs, TeamWorkflowArgs,
};
use crate::io::Io;
use crate::runner::team::control::{Changed, set_control};
use crate::runner::team::publish::{StartSettings, start};
use crate::runner::team::records::Control;
use crate::runner::team::remote::{Remote, SyncError};
use crate::runner::team::status::{print, report};
use crate::runner::team::worker::Running;
use crate::runner::team::worker::assemble::{OwnAgent, WorkSettings, host_name, join};
use crate::runner::team::workflow::{WorkflowSettings, workflow};
use crate::runner::team::{Place, names, place, trust, which_team};
use crate::setup::plan::{agent_options, user_tuning};
use pagent_door::process::signals;

pub fn run(global: &Global, env: &Env, args: TeamArgs, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let cwd = global
        .project
        .clone()
        .or_else(|| env.current_dir.clone())
        .context("cannot tell the current folder")?;
    match args.command {
        TeamCommand::Start(args) => team_start(&cwd, env, &args, io.stdout),
        TeamCommand::Work(args) => team_work(&cwd, env, &args, io.stdout),
        TeamCommand::Status(args) => {
            let (place, remote) = open(&cwd, &args.which, env)?;
            let view = sync(&remote)?;
            let report = report(&view, &place.url);
            if args.json {
                writeln!(io.stdout, "{}", serde_json::to_string_pretty(&report)?)?;
            } else {
                print(&report, crate::io::now(), io.stdout)?;
            }
            Ok(ExitStatus::Success)
        }
        TeamCommand::Pause(which) => team_control(&cwd, env, &which, Control::Paused, io.stdout),
        TeamCommand::Resume(which) => team_control(&cwd, env, &which, Control::Running, io.stdout),
        TeamCommand::Cancel(which) => {
            team_control(&cwd, env, &which, Control::Cancelled, io.stdout)
        }
        TeamCommand::Trust(which) => team_trust(&cwd, env, &which, io.stdout),
        TeamCommand::Workflow(args) => team_workflow(&cwd, env, &args, io.stdout),
    }
}

/// The place, and the team there.
fn open(cwd: &Path, which: &TeamWhich, env: &Env) -> anyhow::Result<(Place, Remote)> {
    let place = place(cwd, &which.remote)?;
    let team = which_team(&place, which.team.as_deref(), env)?;
    let remote = Remote::new(&place.root, &place.url, &team, env)?;
    known_here(env, &place, &team);
    Ok((place, remote))
}

/// Remembers the team as one this machine knows, for `pagent dashboard` (best effort: a
/// team it could not remember is only missing from the page).
fn known_here(env: &Env, place: &Place, team: &str) {
    let url = crate::store::teams::reachable_url(&place.root, &place.url);
    let user_dir = crate::store::user::UserDir::of(env);
    let _ = crate::store::teams::record(&user_dir, &url, team, crate::io::now());
}

fn sync(remote: &Remote) -> anyhow::Result<crate::runner::team::view::View> {
    remote.sync().map_err(|err| match err {
        SyncError::Offline(why) => anyhow::anyhow!("cannot reach the remote: {why}"),
        SyncError::View(err) => anyhow::anyhow!(err),
        SyncError::Refused(why) => anyhow::anyhow!(why),
    })
}

fn team_start(
    cwd: &Path,
    env: &Env,
    args: &TeamStartArgs,
    out: &mut dyn Write,
) -> anyhow::Result<ExitStatus> {
    let place = place(cwd, &args.remote)?;
    let (plan_path, format) = plan_source(&place.root, cwd, args)?;
    let team = match &args.name {
        Some(name) => name.clone(),
        None => default_name(&plan_path),
    };
    let branch = match &args.branch {
        Some(branch) => branch.clone(),
        None => current_branch(&place.root).unwrap_or_else(|| "main".into()),
    };
    // A plan from a remote never opens hosts: each worker gives its own.
    anyhow::ensure!(
        args.agent.allow_host.is_empty(),
        crate::cli::sandbox::team_hosts()
    );
    let settings = StartSettings {
        root: place.root.clone(),
        url: place.url.clone(),
        team,
        branch,
        plan: plan_path,
        issues: args.issues.clone(),
        format,
        agent: agent_options(&args.agent, &user_tuning(env)?),
        checks: args.checks.clone(),
        max_iterations: args.max_iterations,
        budget: args.budget.budget(),
        lease: args.lease,
        host: host_name(env),
    };
    let published = start(&settings, env)?;
    known_here(env, &place, &published.plan.team);
    if let Some(issues) = &published.issues {
        if let Some(note) = &issues.note {
            writeln!(out, "pagent team: {note}")?;
        }
        writeln!(out, "pagent team: {}", issues.summary())?;
    }
    let plan = &published.plan;
    let t = &plan.team;
    writeln!(
        out,
        "pagent team: the team {t} is on {}: {} landing on {}, lease {}",
        place.url,
        crate::runner::team::status::stories(plan.stories.len()),
        plan.branch,
        pagent_engine::format_duration(plan.lease_secs)
    )?;
    for check in &plan.checks {
        writeln!(
            out,
            "  gate: `{check}` on the merged work before each landing"
        )?;
    }
    match (&plan.plan_file, &published.no_ticks) {
        (Some(file), None) => writeln!(out, "  each landing ticks its story in {}", file.path)?,
        (_, Some(why)) => writeln!(out, "  landings tick no plan file: {why}")?,
        (None, None) => {}
    }
    if !plan.commands().is_empty() {
        writeln!(
            out,
            "  its commands are trusted on this machine; other machines trust them with `pagent team trust --team {t}`"
        )?;
    }
    writeln!(
        out,
        "Add a worker on any machine with a clone: pagent team work --team {t} -j 2"
    )?;
    writeln!(out, "See it from anywhere: pagent team status --team {t}")?;
    writeln!(
        out,
        "Stop it: pagent team cancel --team {t} (pause and resume too)"
    )?;
    writeln!(
        out,
        "Workers on GitHub Actions: pagent team workflow --team {t} --workers 8 > .github/workflows/pagent-team.yml"
    )?;
    Ok(ExitStatus::Success)
}

/// The plan file and its format: the file named, or with `--issues` the file the issues
/// are written to (never both, never neither).
fn plan_source(
    root: &Path,
    cwd: &Path,
    args: &TeamStartArgs,
) -> anyhow::Result<(std::path::PathBuf, Option<pagent_stories::Format>)> {
    match (&args.plan, &args.issues) {
        (Some(_), Some(_)) => anyhow::bail!(
            "--issues makes the team's plan from GitHub issues: give --issues or a plan file, not both"
        ),
        (None, None) => anyhow::bail!(
            "a team needs a plan: give a plan file (pagent team start prd.json) or GitHub issues (--issues label:ready)"
        ),
        (Some(plan), None) => Ok((cwd.join(plan), args.format)),
        (None, Some(_)) => {
            anyhow::ensure!(
                args.format.is_none(),
                "--format is for a plan file; --issues plans are pagent's own format"
            );
            Ok((
                root.join(crate::runner::team::publish::ISSUES_PLAN),
                Some(pagent_stories::Format::Issues),
            ))
        }
    }
}

/// The plan file's name as a team name: `prd.json` is `prd`.
fn default_name(plan: &Path) -> String {
    let stem = plan
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let name: String = stem
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .take(names::MAX_NAME)
        .collect();
    let name = name.trim_matches('-').to_owned();
    if names::is_valid(&name) {
        name
    } else {
        "team".into()
    }
}

fn current_branch(root: &Path) -> Option<String> {
    let repo = crate::store::git::discover(root)?;
    let head = repo.head().ok()?;
    head.is_branch()
        .then(|| head.shorthand().map(str::to_owned))?
}

fn team_work(
    cwd: &Path,
    env: &Env,
    args: &TeamWorkArgs,
    out: &mut dyn Write,
) -> anyhow::Result<ExitStatus> {
    signals::install();
    let place = place(cwd, &args.which.remote)?;
    anyhow::ensure!(
        crate::store::git::discover(cwd).is_some(),
        "a worker needs a clone of the repository: `git clone {}`, then run pagent team work in it",
        place.url
    );
    let team = which_team(&place, args.which.team.as_deref(), env)?;
    known_here(env, &place, &team);
    let settings = WorkSettings {
        root: place.root.clone(),
        url: place.url.clone(),
        team,
        name: args.name.clone(),
        host: host_name(env),
        own_agent: OwnAgent {
            kind: args.agent,
            command: args.command.clone(),
            args: args.agent_args.clone(),
            permission_mode: args.permission_mode.clone(),
        },
        agent_bin: args.agent_bin.clone(),
        own_checks: args.checks.clone(),
        sandbox: args.sandbox,
        allow_hosts: args.allow_host.clone(),
        trust: args.trust,
        running: Running {
            jobs: args.jobs,
            until: args.until,
            spend_limit: args.spend_limit,
            json: args.json,
        },
    };
    join(settings, env, out)
}

fn team_control(
    cwd: &Path,
    env: &Env,
    which: &TeamWhich,
    to: Control,
    out: &mut dyn Write,
) -> anyhow::Result<ExitStatus> {
    let (place, remote) = open(cwd, which, env)?;
    let team = remote.refs.team.clone();
    let by = host_name(env);
    let changed = set_control(&remote, to, &by)?;
    let said = changed.words(&team, &place.url, to);
    if changed == Changed::Cancelled {
        writeln!(out, "pagent team: {said}")?;
        return Ok(ExitStatus::Failure);
    }
    writeln!(out, "pagent team: {said}")?;
    Ok(ExitStatus::Success)
}

fn team_trust(
    cwd: &Path,
    env: &Env,
    which: &TeamWhich,
    out: &mut dyn Write,
) -> anyhow::Result<ExitStatus> {
    let (place, remote) = open(cwd, which, env)?;
    let view = sync(&remote)?;
    let commands = view.plan.commands();
    let team = &view.plan.team;
    if commands.is_empty() {
        writeln!(
            out,
            "pagent team: the team {team} runs no command of its own: nothing to trust"
        )?;
        return Ok(ExitStatus::Success);
    }
    writeln!(
        out,
        "pagent team: a worker of the team {team} on this machine may now run:"
    )?;
    for command in &commands {
        writeln!(out, "  {command}")?;
    }
    trust::trust_commands(env, &place.url, team, &commands)?;
    Ok(ExitStatus::Success)
}

fn team_workflow(
    cwd: &Path,
    env: &Env,
    args: &TeamWorkflowArgs,
    out: &mut dyn Write,
) -> anyhow::Result<ExitStatus> {
    let (_, remote) = open(cwd, &args.which, env)?;
    let view = sync(&remote)?;
    let text = workflow(
        &view.plan,
        &WorkflowSettings {
            workers: args.workers,
            jobs: args.jobs,
            timeout_minutes: args.timeout_minutes,
            pagent_version: env!("CARGO_PKG_VERSION").to_owned(),
            spend_limit: args.spend_limit.clone(),
        },
    )?;
    out.write_all(text.as_bytes())?;
    Ok(ExitStatus::Success)
}

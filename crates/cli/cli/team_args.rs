//! The flags of `pagent team`: start a team, work on it, see it, pause, resume or cancel
//! it, trust its commands, and write a GitHub Actions workflow of workers.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Args, Subcommand};
use pagent_protocol::stream::AgentKind;

use crate::cli::agent_args::{AgentArgs, agent_parser, parse_duration};
use crate::cli::budget_args::BudgetArgs;

#[derive(Debug, Args)]
pub struct TeamArgs {
    #[command(subcommand)]
    pub command: TeamCommand,
}

#[derive(Debug, Subcommand)]
pub enum TeamCommand {
    /// Publish a plan to the repository's remote as a team: its stories, the agent, the
    /// checks that gate a landing and the branch stories land on
    Start(TeamStartArgs),
    /// Join a team as a worker: claim its stories one by one (N at a time), run each
    /// one's loop here, and land it on the shared branch
    Work(TeamWorkArgs),
    /// Show the team as the remote shows it: every story and every worker
    Status(TeamStatusArgs),
    /// Pause the team: no new claims and no landings; every worker's loops wait
    Pause(TeamWhich),
    /// Let a paused team go on
    Resume(TeamWhich),
    /// Stop the team for good: no landing goes through after it, no worker pushes more
    Cancel(TeamWhich),
    /// Show the team's commands (its checks, an agent command) and trust them on this
    /// machine, so that a worker here runs them
    Trust(TeamWhich),
    /// Print a GitHub Actions workflow that runs the team's workers as a matrix of jobs
    Workflow(TeamWorkflowArgs),
}

/// Which remote and which team.
#[derive(Debug, Args, Clone)]
pub struct TeamWhich {
    /// The remote: a remote's name in this clone, or a URL
    #[arg(long, value_name = "NAME|URL", default_value = "origin")]
    pub remote: String,
    /// The team [default: the only team on the remote]
    #[arg(long, value_name = "NAME")]
    pub team: Option<String>,
}

#[derive(Debug, Args, Clone)]
pub struct TeamStartArgs {
    /// The plan: prd.json, Chief's prd.md, spec-kit's or Kiro's tasks.md, a ralphex plan,
    /// a JSON list of tasks or a text file of tasks (as `pagent parallel` reads them)
    #[arg(value_name = "PLAN")]
    pub plan: Option<PathBuf>,
    /// GitHub issues as the plan, one story each, read with your own `gh`: a search
    /// ("label:ready") or issue numbers ("12,15"); written to .claude/pagent/issues.md
    /// as `pagent loop --issues` does
    #[arg(long, value_name = "QUERY")]
    pub issues: Option<String>,
    /// The remote: a remote's name in this clone, or a URL
    #[arg(long, value_name = "NAME|URL", default_value = "origin")]
    pub remote: String,
    /// The team's name [default: the plan file's name, e.g. prd; with --issues, issues]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// The branch stories land on [default: the branch checked out here]
    #[arg(long, value_name = "BRANCH")]
    pub branch: Option<String>,
    /// The plan's format, when its content does not tell: prd-json, chief, spec-kit,
    /// kiro or ralphex
    #[arg(long, value_name = "NAME", value_parser = crate::cli::loop_args::parse_format)]
    pub format: Option<pagent_stories::Format>,
    #[command(flatten)]
    pub agent: AgentArgs,
    /// A command that must pass on the merged work before a story lands (repeatable; run
    /// with `sh -c` in the story's worktree). Workers on other machines run it only once
    /// their user trusted it
    #[arg(long = "check", value_name = "COMMAND")]
    pub checks: Vec<String>,
    /// Iterations per story unless the story sets its own
    #[arg(long, value_name = "N", default_value_t = 25, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_iterations: u32,
    /// Limits for each story's loop
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// How long a claim lasts without renewal before another worker may take the story
    /// over (workers renew every third of it)
    #[arg(long, value_name = "DURATION", value_parser = parse_lease, default_value = "5m")]
    pub lease: Duration,
}

/// A lease: 2 seconds to a day.
fn parse_lease(text: &str) -> Result<Duration, String> {
    let lease = parse_duration(text)?;
    if !(2..=24 * 3600).contains(&lease.as_secs()) {
        return Err("a lease is 2s to 24h".into());
    }
    Ok(lease)
}

#[derive(Debug, Args, Clone)]
pub struct TeamWorkArgs {
    #[command(flatten)]
    pub which: TeamWhich,
    /// How many stories this worker runs at once
    #[arg(short = 'j', long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,
    /// Stop after this long (e.g. 5h50m: a runner's time limit less a margin), releasing
    /// every claim with its work for another worker
    #[arg(long, value_name = "DURATION", value_parser = parse_duration)]
    pub until: Option<Duration>,
    /// This worker's name in the team [default: the host's name and a random suffix]
    #[arg(long, value_name = "NAME")]
    pub name: Option<String>,
    /// Claim no more stories once this worker's have cost this many US dollars
    #[arg(long, value_name = "USD", value_parser = pagent_engine::budget::parse_cost)]
    pub spend_limit: Option<u64>,
    /// Your own agent instead of the team's
    #[arg(long, value_parser = agent_parser(), value_name = "AGENT")]
    pub agent: Option<AgentKind>,
    /// Your own command as the agent instead of the team's (run with `sh -c`, the
    /// prompt on stdin)
    #[arg(long, value_name = "COMMAND", conflicts_with = "agent")]
    pub command: Option<String>,
    /// The agent's program [default: its name on PATH]
    #[arg(long, value_name = "PATH")]
    pub agent_bin: Option<PathBuf>,
    /// One more argument for your own agent (repeatable)
    #[arg(long = "agent-arg", value_name = "ARG", allow_hyphen_values = true)]
    pub agent_args: Vec<String>,
    /// Claude Code's permission mode for your own agent
    #[arg(long, value_name = "MODE")]
    pub permission_mode: Option<String>,
    /// Your own checks instead of the team's (repeatable)
    #[arg(long = "check", value_name = "COMMAND")]
    pub checks: Vec<String>,
    /// Run this worker's agents contained, whatever the team's plan says (as `pagent
    /// loop --sandbox`; docs/security.md)
    #[arg(long)]
    pub sandbox: bool,
    /// A host this worker's contained agents may reach (repeatable; Claude Code's sandbox)
    #[arg(long, value_name = "HOST", requires = "sandbox", value_parser = crate::cli::agent_args::parse_host)]
    pub allow_host: Vec<String>,
    /// Trust the team's commands (its checks, an agent command), as `pagent team trust`
    /// would
    #[arg(long)]
    pub trust: bool,
    /// Print one JSON object per line
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone)]
pub struct TeamStatusArgs {
    #[command(flatten)]
    pub which: TeamWhich,
    /// Print JSON for scripts
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone)]
pub struct TeamWorkflowArgs {
    #[command(flatten)]
    pub which: TeamWhich,
    /// How many workers (jobs of the matrix)
    #[arg(long, value_name = "N", default_value_t = 4, value_parser = clap::value_parser!(u32).range(1..=256))]
    pub workers: u32,
    /// Stories each worker runs at once
    #[arg(short = 'j', long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u32).range(1..=16))]
    pub jobs: u32,
    /// Each job's time limit in minutes; the worker stops 10 minutes before it
    #[arg(long, value_name = "MINUTES", default_value_t = 350, value_parser = clap::value_parser!(u32).range(15..=360))]
    pub timeout_minutes: u32,
    /// The most each worker spends, in US dollars
    #[arg(long, value_name = "USD")]
    pub spend_limit: Option<String>,
}

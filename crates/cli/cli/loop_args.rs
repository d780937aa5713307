//! The flags of `pagent loop` (beside the agent's, which `parallel` shares), and the
//! plan flags `--stories` loops share with `pagent run --stories`: the loop's start
//! (a subcommand, `--stories`, `--issues`, or none to resume), its git actions, and how a
//! plan is read and checked.

use std::path::PathBuf;

use clap::{Args, Subcommand};

use crate::cli::args::{AgentArgs, RalphArgs, RunArgs};
use crate::cli::budget_args::BudgetArgs;

/// How a plan is read and checked (`--stories`, `--issues`).
#[derive(Debug, Args, Clone, Default)]
pub struct PlanArgs {
    /// The plan's format, when its content does not tell: prd-json, chief, spec-kit,
    /// kiro or ralphex
    #[arg(long, value_name = "NAME", value_parser = parse_format)]
    pub format: Option<pagent_stories::Format>,
    /// A command that must pass before a story counts as done and before the loop ends
    /// (repeatable; run with `sh -c` in the project, besides the plan's own)
    #[arg(long = "check", value_name = "COMMAND")]
    pub checks: Vec<String>,
}

pub(crate) fn parse_format(name: &str) -> Result<pagent_stories::Format, String> {
    pagent_stories::Format::from_name(name)
        .ok_or_else(|| "expected prd-json, chief, spec-kit, kiro or ralphex".to_owned())
}

#[derive(Debug, Args, Clone)]
#[command(group(clap::ArgGroup::new("plan_source").args(["stories", "issues"])))]
pub struct LoopArgs {
    #[command(flatten)]
    pub agent: AgentArgs,
    /// Print only the outcome
    #[arg(global = true, help_heading = "Loop options", long)]
    pub quiet: bool,
    /// Print one JSON object per line (events) for scripts
    #[arg(
        global = true,
        help_heading = "Loop options",
        long,
        conflicts_with = "quiet"
    )]
    pub json: bool,
    /// Work through a plan's stories, one per iteration, until every one is done and the
    /// checks pass: prd.json, Chief's prd.md, spec-kit's tasks.md, a Kiro tasks.md or a
    /// ralphex plan (told by its content; --format names it)
    #[arg(
        long,
        visible_alias = "prd",
        value_name = "FILE",
        conflicts_with = "issues"
    )]
    pub stories: Option<PathBuf>,
    /// Work through GitHub issues, one per iteration, read with your own `gh`: a search
    /// ("label:ready", "milestone:v2 is:open") or issue numbers ("12,15,18")
    #[arg(long, value_name = "QUERY|NUMBERS")]
    pub issues: Option<String>,
    #[command(flatten)]
    pub plan: PlanArgs,
    /// Comment on each GitHub issue when its story is done (an --issues loop)
    #[arg(long)]
    pub comment_progress: bool,
    /// Trust the plan's validation commands and the project's config
    /// (.claude/pagent/config.json), as `pagent trust` would
    #[arg(long, requires = "plan_source")]
    pub trust: bool,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Iterations for --stories or --issues [default: the stories left, plus a margin]
    #[arg(long, value_name = "N", requires = "plan_source", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_iterations: Option<u32>,
    /// Run in the git worktree .pagent/worktrees/NAME on branch pagent/NAME
    /// (created from HEAD, or reused to resume)
    #[arg(
        global = true,
        help_heading = "Loop options",
        long,
        value_name = "NAME"
    )]
    pub worktree: Option<String>,
    /// A command run with `sh -c` in a newly created worktree before the first iteration
    #[arg(
        global = true,
        help_heading = "Loop options",
        long,
        value_name = "COMMAND",
        requires = "worktree"
    )]
    pub setup: Option<String>,
    /// Commit all changes after each iteration
    #[arg(global = true, help_heading = "Loop options", long)]
    pub checkpoint: bool,
    /// When the loop completes, push its branch (git push -u origin BRANCH)
    #[arg(global = true, help_heading = "Loop options", long)]
    pub push: bool,
    /// When the loop completes, open a pull request with gh (implies --push); after
    /// --issues, its body closes the issues done
    #[arg(global = true, help_heading = "Loop options", long)]
    pub pr: bool,
    /// The plan a `pagent parallel` child is started with, from the project's root
    /// (internal: its parent writes it, `setup/child_plan.rs`)
    #[arg(long, hide = true, value_name = "FILE", requires = "child_plan_sha256")]
    pub child_plan: Option<PathBuf>,
    /// The SHA-256 of that plan as its parent wrote it (internal)
    #[arg(long, hide = true, value_name = "HEX", requires = "child_plan")]
    pub child_plan_sha256: Option<String>,
    /// Start a new loop; without one, the active loop is resumed
    #[command(subcommand)]
    pub start: Option<LoopStart>,
}

#[derive(Debug, Subcommand, Clone)]
pub enum LoopStart {
    /// A ralph loop: one task until the agent's final message makes the promise
    Ralph(RalphArgs),
    /// A pipeline over a PRD
    Run(RunArgs),
}

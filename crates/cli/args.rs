//! The command line, as clap derive types. The `///` comments are the help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

/// Keeps Claude Code (and other coding agents) working until the work is really done.
///
/// pagent runs as Claude Code's Stop hook: when the model tries to stop, it checks the
/// current stage's exit condition and either lets the session end or hands the model its
/// next prompt. Start a loop with `pagent run PRD` (a multi-stage pipeline) or
/// `pagent ralph TASK` (one task until a promise), usually through the plugin's
/// /pagent-run and /ralph commands.
#[derive(Debug, Parser)]
#[command(
    name = "pagent",
    version,
    propagate_version = true,
    max_term_width = 100
)]
pub struct Cli {
    #[command(flatten)]
    pub global: Global,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Args, Clone, Default)]
pub struct Global {
    /// The project folder [default: $CLAUDE_PROJECT_DIR, else the hook's cwd, else the
    /// current folder]
    #[arg(long, global = true, value_name = "DIR")]
    pub project: Option<PathBuf>,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Start a pipeline over a PRD: architect, qa, security, implementer, verifier.
    Run(RunArgs),
    /// Start a Ralph loop: one task, re-prompted until the model makes its promise.
    Ralph(RalphArgs),
    /// Show the loop's stages, progress, iterations and outcome.
    Status(StatusArgs),
    /// End the active loop; the next stop is allowed.
    Cancel,
    /// Show the event log, one line per decision.
    Log(LogArgs),
    /// Entry points for Claude Code's hooks (called by the plugin, not by people).
    #[command(subcommand)]
    Hook(HookCommand),
}

#[derive(Debug, Args, Clone, Default)]
pub struct RunArgs {
    /// The PRD (product requirements) file the pipeline works from
    #[arg(required_unless_present = "stdin_args")]
    pub prd: Option<PathBuf>,
    /// A workflow name (from .claude/pagent/workflows/NAME.json, or built in) or a JSON file
    #[arg(long, value_name = "NAME|PATH")]
    pub workflow: Option<String>,
    /// Stop after this many stages
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_stages: Option<u32>,
    /// Iterations allowed per stage [default: the workflow's, else 25]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_iterations: Option<u32>,
    /// Stops in a row with no change to the working tree before giving up; 0 turns the
    /// check off [default: the workflow's, else 3]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub no_progress_limit: Option<u32>,
    /// Replace a loop that is active in this project
    #[arg(long)]
    pub force: bool,
    /// Read the arguments from stdin as typed after the slash command (no shell involved)
    #[arg(long, conflicts_with_all = ["prd", "workflow", "max_stages", "max_iterations", "no_progress_limit"])]
    pub stdin_args: bool,
}

#[derive(Debug, Args, Clone, Default)]
pub struct RalphArgs {
    /// The task; read from stdin when absent
    #[arg(value_name = "PROMPT")]
    pub prompt: Vec<String>,
    /// Iterations allowed [default: 25]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_iterations: Option<u32>,
    /// The promise that ends the loop: the model writes <promise>TEXT</promise>
    #[arg(
        long,
        alias = "completion-promise",
        value_name = "TEXT",
        default_value = "DONE"
    )]
    pub promise: String,
    /// Stops in a row with no change to the working tree before giving up; 0 turns the
    /// check off [default: 3]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub no_progress_limit: Option<u32>,
    /// Replace a loop that is active in this project
    #[arg(long)]
    pub force: bool,
    /// Read the slash command's argument text from stdin: flags in it are parsed, the rest
    /// is the task, byte for byte
    #[arg(long, conflicts_with = "prompt")]
    pub stdin_args: bool,
}

#[derive(Debug, Args, Clone, Default)]
pub struct StatusArgs {
    /// Print JSON for scripts
    #[arg(long)]
    pub json: bool,
}

#[derive(Debug, Args, Clone, Default)]
pub struct LogArgs {
    /// Print the raw JSON lines
    #[arg(long)]
    pub json: bool,
    /// Show only the last N entries
    #[arg(long, short = 'n', value_name = "N")]
    pub tail: Option<usize>,
}

#[derive(Debug, Subcommand)]
pub enum HookCommand {
    /// The Stop hook: reads Claude Code's hook JSON on stdin, prints a decision.
    Stop,
    /// The PostToolUse hook: checks the file an edit tool just wrote, feeds problems back.
    PostToolUse,
}

//! The command line, as clap derive types. The `///` comments are the help text.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand};

pub use crate::cli::agent_args::AgentArgs;
use crate::cli::agent_args::agent_parser;
pub use crate::cli::budget_args::BudgetArgs;
pub use crate::cli::loop_args::{LoopArgs, LoopStart, PlanArgs};
use pagent_protocol::HookEvent;
use pagent_protocol::stream::AgentKind;

/// What `pagent --version` prints after the name: the version and the Rust target the
/// binary was built for (`0.1.0 (aarch64-apple-darwin)`), so the platform of an installed
/// build is never a guess. `PAGENT_TARGET` comes from build.rs.
pub const VERSION: &str = concat!(env!("CARGO_PKG_VERSION"), " (", env!("PAGENT_TARGET"), ")");

/// Keeps Claude Code (and other coding agents) working until the work is really done.
///
/// pagent runs as Claude Code's Stop hook: when the model tries to stop, it checks the
/// current stage's exit condition and either lets the session end or hands the model its
/// next prompt. Start a loop with `pagent run PRD` (a multi-stage pipeline) or
/// `pagent ralph TASK` (one task until a promise), usually through the plugin's
/// /pagent:run and /pagent:ralph commands.
#[derive(Debug, Parser)]
#[command(
    name = "pagent",
    // Usage lines say `pagent`, not the file's name (`pagent.exe` on Windows).
    bin_name = "pagent",
    version = VERSION,
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
    /// End the active loop: Claude may stop again.
    Cancel,
    /// Pause the active loop, whoever drives it: its session may stop without counting an
    /// iteration, and `pagent loop` waits after the iteration it is in.
    Pause,
    /// Continue a loop that is paused (you wrote a message in its session, or paused it).
    Resume,
    /// Print the current stage's full instructions (the ralph task, or the stage prompt).
    Prompt,
    /// Show the event log, one line per decision.
    Log(LogArgs),
    /// Run the loop from outside: a fresh agent process (Claude Code, Codex, OpenCode or
    /// any command) per iteration, the same stages and conditions deciding in between.
    Loop(Box<LoopArgs>),
    /// Run several ralph loops at once, each in its own git worktree and branch.
    Parallel(ParallelArgs),
    /// A team of loops across machines: one plan shared through the repository's git
    /// remote, workers anywhere claiming its stories and landing them on one branch
    Team(crate::cli::team_args::TeamArgs),
    /// Trust the project's files that make pagent run commands (workflows with commands,
    /// .claude/pagent/config.json, node_modules/typescript, Cargo.toml, the agents' project
    /// configuration): their exact content, until they change
    Trust(TrustArgs),
    /// Set pagent up for Claude Code: the binary where the hooks find it, the plugin
    /// (a local marketplace named pagent, plugin pagent@pagent, user scope) and the short
    /// command names (/ralph, /pagent-run, ...). Safe to run again.
    Install(InstallArgs),
    /// Undo `pagent install`: the short command names pagent wrote, the plugin, its
    /// marketplace, the staged files and the binary copy; says what it removed.
    Uninstall(UninstallArgs),
    /// A live web page of every loop on this machine, with pause, resume and cancel:
    /// served on 127.0.0.1 with a secret token in its address, until Ctrl-C.
    Dashboard(DashboardArgs),
    /// Entry points for Claude Code's hooks (called by the plugin, not by people).
    // Hidden from `pagent --help` (issue 31, item 4); `pagent hook --help` still shows it.
    #[command(subcommand, hide = true)]
    Hook(HookCommand),
}

#[derive(Debug, Args, Clone, Default)]
pub struct RunArgs {
    /// The PRD (product requirements) file the pipeline works from (or --stories FILE
    /// instead)
    // Required, so the usage says `<PRD>`: `--stories` (and the slash command's
    // `--stdin-args`) conflict with it, which is what lets them go without it.
    #[arg(required = true)]
    pub prd: Option<PathBuf>,
    /// Instead of a pipeline: work through a plan's stories, one at a time, each checked
    /// before the next (prd.json, Chief's prd.md, spec-kit's or Kiro's tasks.md, a
    /// ralphex plan)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["prd", "workflow", "max_stages"])]
    pub stories: Option<PathBuf>,
    #[command(flatten)]
    pub plan: PlanArgs,
    /// A workflow name (from .claude/pagent/workflows/NAME.json, or built in) or a JSON file
    #[arg(long, value_name = "NAME|PATH")]
    pub workflow: Option<String>,
    /// Stop after this many stages
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_stages: Option<u32>,
    /// Iterations allowed per stage [default: the workflow's, else 25]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_iterations: Option<u32>,
    /// Turns in a row that change no file before giving up; 0 turns the
    /// check off [default: the workflow's, else 3]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub no_progress_limit: Option<u32>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Replace a loop that is active in this project
    #[arg(long)]
    pub force: bool,
    /// Trust the project files this loop uses that can make pagent run commands (its
    /// workflow, .claude/pagent/config.json; for `pagent loop`, the agent's project
    /// configuration), as `pagent trust` would
    #[arg(long)]
    pub trust: bool,
    /// Read the arguments from stdin as typed after the slash command (no shell involved);
    /// internal: the slash command's `!` line gives it
    #[arg(long, hide = true, conflicts_with_all = ["prd", "stories", "workflow", "max_stages", "max_iterations", "no_progress_limit"])]
    pub stdin_args: bool,
    /// The review is added to the verifier stage (else the last stage)
    #[command(flatten)]
    pub review: ReviewArgs,
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
    /// Turns in a row that change no file before giving up; 0 turns the
    /// check off [default: 3]
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=1000))]
    pub no_progress_limit: Option<u32>,
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Replace a loop that is active in this project
    #[arg(long)]
    pub force: bool,
    /// Trust the project files this loop uses that can make pagent run commands (its
    /// workflow, .claude/pagent/config.json; for `pagent loop`, the agent's project
    /// configuration), as `pagent trust` would
    #[arg(long)]
    pub trust: bool,
    /// Read the slash command's argument text from stdin: flags in it are parsed, the rest
    /// is the task, byte for byte; internal: the slash command's `!` line gives it
    #[arg(long, hide = true, conflicts_with = "prompt")]
    pub stdin_args: bool,
    #[command(flatten)]
    pub review: ReviewArgs,
}

/// A `review` exit condition asked for on the command line (the user's own words, so no
/// trust is needed for it).
#[derive(Debug, Args, Clone, Default)]
pub struct ReviewArgs {
    /// Also require a fresh reviewer agent to agree the work meets these criteria before
    /// the loop may end (runs only when everything else holds, at most once per iteration)
    #[arg(long, value_name = "CRITERIA")]
    pub review: Option<String>,
    /// The reviewer agent [default: claude]
    #[arg(long, value_parser = agent_parser(), value_name = "AGENT", requires = "review")]
    pub reviewer: Option<AgentKind>,
    /// A command line that reviews instead: the prompt on stdin, a JSON verdict
    /// ({"met": ..., "missing": [...]}) at the end of its output
    #[arg(
        long,
        value_name = "LINE",
        requires = "review",
        conflicts_with = "reviewer"
    )]
    pub reviewer_command: Option<String>,
    /// Seconds the reviewer may take [default: 240, 10 to 480]
    #[arg(long, value_name = "SECS", requires = "review")]
    pub review_timeout: Option<u64>,
}

#[derive(Debug, Args, Clone, Default)]
pub struct InstallArgs {
    /// The plugin folder to install (with .claude-plugin/marketplace.json) [default:
    /// $PAGENT_PLUGIN_SOURCE, else the folder this binary was shipped in]
    #[arg(long, value_name = "DIR")]
    pub from: Option<PathBuf>,
    /// The binary the hooks run [default: this one]
    #[arg(long, value_name = "PATH")]
    pub binary: Option<PathBuf>,
    /// The Claude Code CLI [default: `claude` on PATH]
    #[arg(long, value_name = "PATH")]
    pub claude: Option<PathBuf>,
    /// Do not install the short command names (/ralph, /pagent-run, ...)
    #[arg(long)]
    pub no_short_commands: bool,
}

#[derive(Debug, Args, Clone, Default)]
pub struct UninstallArgs {
    /// The Claude Code CLI [default: `claude` on PATH]
    #[arg(long, value_name = "PATH")]
    pub claude: Option<PathBuf>,
    /// Also remove pagent's config folder: your settings (config.json), the trust list,
    /// the secret that seals loop states and the register of loops
    #[arg(long)]
    pub purge: bool,
}

#[derive(Debug, Args, Clone, Default)]
pub struct TrustArgs {
    /// The files to trust (or revoke) [default: every such file of the project]
    #[arg(value_name = "PATH")]
    pub paths: Vec<PathBuf>,
    /// List what is trusted in this project, and what is not (or changed)
    #[arg(long, conflicts_with = "revoke")]
    pub list: bool,
    /// Forget the trust of the files (all of the project's when none are named)
    #[arg(long)]
    pub revoke: bool,
}

#[derive(Debug, Args, Clone, Default)]
pub struct StatusArgs {
    /// Print JSON for scripts
    #[arg(long)]
    pub json: bool,
    /// Accepted from the command files of older pagent versions; does nothing (asking for
    /// the status never pauses the loop)
    #[arg(long, hide = true, conflicts_with = "all")]
    pub pause: bool,
    /// For /pagent:status's `!` line: what the model reads (the hook has shown the status)
    #[arg(long, hide = true, conflicts_with_all = ["all", "json"])]
    pub slash: bool,
    /// Every loop on this machine (the register in pagent's config folder), one line each
    #[arg(long)]
    pub all: bool,
}

#[derive(Debug, Args, Clone)]
pub struct DashboardArgs {
    /// The port to listen on [default: a free one]
    #[arg(long, value_name = "PORT")]
    pub port: Option<u16>,
    /// The address to listen on; anything but a loopback address also needs your own
    /// token in $PAGENT_DASHBOARD_TOKEN (at least 32 letters, digits, - or _)
    #[arg(long, value_name = "IP", default_value = "127.0.0.1")]
    pub bind: std::net::IpAddr,
    /// Do not open the page in a browser; only print its address
    #[arg(long)]
    pub no_open: bool,
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

#[derive(Debug, Args, Clone)]
pub struct ParallelArgs {
    /// The tasks: a plan (prd.json, Chief's prd.md, spec-kit's or Kiro's tasks.md, a
    /// ralphex plan: one task per story left, each after the stories it depends on), a
    /// JSON list of {"name", "task", "promise", "max_iterations", "check"}, or a text file
    /// with one task per line ("name: task" or just the task). Each runs on branch
    /// pagent/NAME in the worktree .pagent/worktrees/NAME
    // Required, so the usage says `<TASKS_FILE>`; `--stdin-args` conflicts with it.
    #[arg(value_name = "TASKS_FILE", required = true)]
    pub tasks: Option<PathBuf>,
    /// The plan's format, when its content does not tell: prd-json, chief, spec-kit,
    /// kiro or ralphex
    #[arg(long, value_name = "NAME", value_parser = crate::cli::loop_args::parse_format)]
    pub format: Option<pagent_engine::stories::Format>,
    /// How many loops run at once
    #[arg(short = 'j', long, value_name = "N", default_value_t = 2, value_parser = clap::value_parser!(u32).range(1..=64))]
    pub jobs: u32,
    #[command(flatten)]
    pub agent: AgentArgs,
    /// Limits for each task's loop
    #[command(flatten)]
    pub budget: BudgetArgs,
    /// Iterations per task unless the task sets its own
    #[arg(long, value_name = "N", default_value_t = 25, value_parser = clap::value_parser!(u32).range(1..=1000))]
    pub max_iterations: u32,
    /// Leave each task's work uncommitted in its worktree (by default every iteration is
    /// committed on the task's branch)
    #[arg(long)]
    pub no_checkpoint: bool,
    /// Committing each iteration is the default now; kept so older command lines run
    #[arg(long, hide = true, conflicts_with = "no_checkpoint")]
    pub checkpoint: bool,
    /// Start over: every task's loop from its first iteration (its branch keeps its
    /// commits), and with --merge, every conflict resolution that gave up. Without it, a
    /// second run resumes the tasks that did not end and leaves finished ones alone
    #[arg(long)]
    pub force: bool,
    /// When the tasks are done, merge each completed task's branch into its target branch,
    /// one at a time in task order; a conflict starts a resolution loop of the same agent
    /// in the task's worktree
    #[arg(long)]
    pub merge: bool,
    /// Merge the tasks that completed, as --merge does, without running any task
    #[arg(long, conflicts_with = "merge")]
    pub merge_only: bool,
    /// The branch to merge into [default: the branch checked out where the task's worktree
    /// was made]
    #[arg(long, value_name = "BRANCH")]
    pub into: Option<String>,
    /// A command that must pass before a conflict resolution counts (run with `sh -c` in
    /// the task's worktree; a task's own "check" wins), e.g. --check 'cargo test'
    #[arg(long, value_name = "COMMAND")]
    pub check: Option<String>,
    /// Print one JSON object per line instead of the table
    #[arg(long)]
    pub json: bool,
    /// Print the tasks and the command that would run them, and stop
    #[arg(long)]
    pub dry_run: bool,
    /// Trust the project files these loops use that can make pagent run commands (the
    /// tasks file's checks, .claude/pagent/config.json, the agent's project
    /// configuration), as `pagent trust` would
    #[arg(long)]
    pub trust: bool,

    /// Read the arguments from stdin as typed after the slash command (no shell involved);
    /// internal: the slash command's `!` line gives it
    #[arg(long, hide = true, conflicts_with = "tasks")]
    pub stdin_args: bool,
}

/// `pagent hook`'s subcommands: one per hook event, built from the protocol's table
/// ([`HookEvent::subcommands`], below), so no second list of the events exists; and the
/// hidden notifier helper.
#[derive(Debug)]
pub enum HookCommand {
    /// The hook Claude Code runs for this event (the compaction hook: PreCompact).
    Event(HookEvent),
    /// The detached helper that runs a loop-end notifier.
    Notify(NotifyHelperArgs),
}

/// The one `pagent hook` subcommand that is no hook event.
#[derive(Debug, Subcommand)]
enum Helper {
    /// The detached helper that runs a loop-end notifier with a timeout (started by
    /// pagent itself).
    #[command(hide = true)]
    Notify(NotifyHelperArgs),
}

/// What `pagent hook --help` says of the subcommand of `event`.
fn hook_about(event: HookEvent) -> &'static str {
    match event {
        HookEvent::Stop => {
            "The Stop hook: reads Claude Code's hook JSON on stdin, prints a decision"
        }
        HookEvent::StopFailure => {
            "The StopFailure hook: a turn that ended on a usage limit makes the loop wait"
        }
        HookEvent::PostToolUse => {
            "The PostToolUse hook: checks the file an edit tool just wrote, feeds problems back"
        }
        HookEvent::UserPromptSubmit => {
            "The UserPromptSubmit hook: a message typed in the loop's session pauses the loop"
        }
        HookEvent::UserPromptExpansion => {
            "The UserPromptExpansion hook: pagent answers its own slash commands on screen"
        }
        HookEvent::PreCompact | HookEvent::SessionStart => {
            "The PreCompact and SessionStart (compact) hooks: the next re-prompt carries the \
             full stage prompt again"
        }
        HookEvent::SessionEnd => {
            "The SessionEnd hook: the loop of a session that was quit waits, paused, and says so"
        }
    }
}

impl clap::FromArgMatches for HookCommand {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        Self::from_arg_matches_mut(&mut matches.clone())
    }

    fn from_arg_matches_mut(matches: &mut clap::ArgMatches) -> Result<Self, clap::Error> {
        if let Some(event) = matches
            .subcommand_name()
            .and_then(HookEvent::from_subcommand)
        {
            return Ok(HookCommand::Event(event));
        }
        let Helper::Notify(args) = Helper::from_arg_matches_mut(matches)?;
        Ok(HookCommand::Notify(args))
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl Subcommand for HookCommand {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        let cmd = HookEvent::subcommands().fold(cmd, |cmd, event| {
            cmd.subcommand(clap::Command::new(event.subcommand()).about(hook_about(event)))
        });
        Helper::augment_subcommands(cmd)
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        HookEvent::from_subcommand(name).is_some() || Helper::has_subcommand(name)
    }
}

#[derive(Debug, Args, Clone)]
pub struct NotifyHelperArgs {
    /// Seconds before the notifier's process group is killed
    #[arg(long, default_value_t = 10)]
    pub timeout: u64,
    /// The notifier: program and arguments
    #[arg(last = true, required = true)]
    pub argv: Vec<String>,
}

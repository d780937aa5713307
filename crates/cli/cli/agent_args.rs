//! How `pagent loop` (and each loop of `pagent parallel`) runs its agent: which CLI, its
//! program and arguments, and the time limits and retries of one iteration. These are
//! clap globals of `pagent loop`, so they are accepted after its `ralph` or `run` too and
//! shown in their help, under their own heading. The tuning a user sets once (the
//! watchdog, retries, outage and limit waits) is their config's `loop` section
//! (`store/tuning.rs`); its flags stay, hidden, for older command lines, and win.

use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use clap::builder::{PossibleValuesParser, TypedValueParser};
use pagent_protocol::stream::AgentKind;

/// Parses an agent's name into protocol's [`AgentKind`], the one agent type (its names
/// are the one table), with clap's list of possible values for help and errors.
pub fn agent_parser() -> impl TypedValueParser<Value = AgentKind> {
    PossibleValuesParser::new(AgentKind::ALL.map(AgentKind::name))
        .try_map(|name| AgentKind::from_name(&name).ok_or("not an agent"))
}

/// How `pagent loop` runs its agent.
#[derive(Debug, Args, Clone)]
pub struct AgentArgs {
    /// The agent CLI
    #[arg(global = true, help_heading = "Agent options", long, value_parser = agent_parser(), default_value = "claude")]
    pub agent: AgentKind,
    /// Any command line as the agent, run with `sh -c`: the prompt arrives on stdin and in
    /// the file $PAGENT_PROMPT_FILE ({prompt_file} in the line is replaced by its path);
    /// its stdout is its final message
    #[arg(
        global = true,
        help_heading = "Agent options",
        long,
        value_name = "COMMAND"
    )]
    pub command: Option<String>,
    /// The agent's program [default: its name on PATH]
    #[arg(
        global = true,
        help_heading = "Agent options",
        long,
        value_name = "PATH"
    )]
    pub agent_bin: Option<PathBuf>,
    /// One more argument for the agent (repeatable), e.g. --agent-arg=--model --agent-arg=opus
    #[arg(
        global = true,
        help_heading = "Agent options",
        long = "agent-arg",
        value_name = "ARG",
        allow_hyphen_values = true
    )]
    pub agent_args: Vec<String>,
    /// Claude Code's permission mode for the agent
    #[arg(
        global = true,
        help_heading = "Agent options",
        long,
        value_name = "MODE",
        default_value = "acceptEdits"
    )]
    pub permission_mode: String,
    /// Stop an iteration that runs longer than this (e.g. 45m, 2h, 90s) [default: 30m, or
    /// loop.iteration_timeout in your config.json]
    #[arg(global = true, help_heading = "Agent options", long, value_name = "DURATION", value_parser = parse_duration)]
    pub iteration_timeout: Option<Duration>,
    // The tuning a user sets once, in the `loop` section of their own config.json
    // (`store/tuning.rs`): these flags are kept, hidden, so that older command lines still
    // run, and win over the config for the run they are given to.
    /// The watchdog: stop an agent that prints nothing for this long (loop.idle_timeout)
    #[arg(global = true, hide = true, long, value_name = "DURATION", value_parser = parse_duration)]
    pub idle_timeout: Option<Duration>,
    /// Retries of a crash or bad exit (loop.retries)
    #[arg(global = true, hide = true, long, value_name = "N", value_parser = clap::value_parser!(u32).range(0..=20))]
    pub retries: Option<u32>,
    /// The first retry's delay (loop.retry_delay)
    #[arg(global = true, hide = true, long, value_name = "DURATION", value_parser = parse_duration)]
    pub retry_delay: Option<Duration>,
    /// The wait on a usage limit that names no reset time (loop.limit_wait)
    #[arg(global = true, hide = true, long, value_name = "DURATION", value_parser = parse_duration)]
    pub limit_wait: Option<Duration>,
    /// The wait past a usage limit's reset (loop.limit_margin)
    #[arg(global = true, hide = true, long, value_name = "DURATION", value_parser = parse_duration)]
    pub limit_margin: Option<Duration>,
    /// How long an outage is retried (loop.outage_wait)
    #[arg(global = true, hide = true, long, value_name = "DURATION", value_parser = parse_duration)]
    pub outage_wait: Option<Duration>,
    /// Treat a usage limit as an agent error (retried, then the loop stops) instead of
    /// waiting for it to reset
    #[arg(global = true, help_heading = "Agent options", long)]
    pub no_limit_wait: bool,
    /// Run the agent contained: Claude Code inside its own sandbox, Codex, OpenCode and a
    /// --command agent inside bubblewrap (Linux); it writes only in the project and a
    /// temporary folder, cannot read HOME, reaches no network but its API and --allow-host
    /// and sees no other process; refuses to start where that cannot be done
    /// (docs/security.md)
    #[arg(global = true, help_heading = "Agent options", long)]
    pub sandbox: bool,
    /// A host a --sandbox agent's commands may reach (repeatable), e.g. a package registry:
    /// `--allow-host registry.example.org` (ports 80 and 443), `*.example.org` (names under
    /// it), `localhost:8080` (that port only; not for Claude Code)
    #[arg(global = true, help_heading = "Agent options", long, value_name = "HOST", requires = "sandbox", value_parser = parse_host)]
    pub allow_host: Vec<String>,
}

/// A host for `--allow-host`: a name (letters, digits, dots, dashes), `*.SUFFIX` for any
/// name under SUFFIX, and `:PORT` for that port only (`localhost:8080`, `127.0.0.1:8080`:
/// the one way a server on the machine itself is allowed), so nothing else reaches the
/// agent's settings or pagent's proxy.
pub fn parse_host(text: &str) -> Result<String, String> {
    match pagent_door::process::proxy::AllowedHost::parse(text) {
        Ok(_) => Ok(text.to_ascii_lowercase()),
        Err(_) => Err(format!(
            "`{text}` is not a host (a name of letters, digits, dots and dashes, optionally \
             starting with *. or ending with :PORT)"
        )),
    }
}

/// `90`, `90s`, `45m`, `2h`, `1h30m`: the budgets' reading of a duration, as a `Duration`.
pub fn parse_duration(text: &str) -> Result<Duration, String> {
    pagent_engine::budget::parse_duration(text).map(Duration::from_secs)
}

//! How `pagent loop` (and each loop of `pagent parallel`) runs its agent: which CLI, its
//! program and arguments, and the time limits and retries of one iteration. These are
//! clap globals of `pagent loop`, so they are accepted after its `ralph` or `run` too and
//! shown in their help, under their own heading.

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
    /// Stop an iteration that runs longer than this (e.g. 45m, 2h, 90s)
    #[arg(global = true, help_heading = "Agent options", long, value_name = "DURATION", value_parser = parse_duration, default_value = "30m")]
    pub iteration_timeout: Duration,
    /// Stop an agent that prints nothing for this long (the watchdog)
    #[arg(global = true, help_heading = "Agent options", long, value_name = "DURATION", value_parser = parse_duration, default_value = "10m")]
    pub idle_timeout: Duration,
    /// Retries, with exponential backoff, when the agent crashes or exits with an error
    /// (not counted as iterations); a service outage is retried for --outage-wait instead
    #[arg(global = true, help_heading = "Agent options", long, value_name = "N", default_value_t = 3, value_parser = clap::value_parser!(u32).range(0..=20))]
    pub retries: u32,
    /// The first retry's delay; each next one doubles it (at most 5m)
    #[arg(global = true, help_heading = "Agent options", long, value_name = "DURATION", value_parser = parse_duration, default_value = "5s")]
    pub retry_delay: Duration,
    /// How long to wait when the agent hits a usage limit and names no reset time (one
    /// that names it is waited until then, plus --limit-margin); then the same iteration
    /// runs again, not counted
    #[arg(global = true, help_heading = "Agent options", long, value_name = "DURATION", value_parser = parse_duration, default_value = "30m")]
    pub limit_wait: Duration,
    /// How long past the reset a usage limit names the loop waits (the provider's clock is
    /// not ours)
    #[arg(global = true, help_heading = "Agent options", long, value_name = "DURATION", value_parser = parse_duration, default_value = "1m")]
    pub limit_margin: Duration,
    /// How long to keep retrying, with exponential backoff, while the agent's service is
    /// down (a 5xx, overloaded); then the loop stops, its state saved
    #[arg(global = true, help_heading = "Agent options", long, value_name = "DURATION", value_parser = parse_duration, default_value = "1h")]
    pub outage_wait: Duration,
    /// Treat a usage limit as an agent error (retried, then the loop stops) instead of
    /// waiting for it to reset
    #[arg(global = true, help_heading = "Agent options", long)]
    pub no_limit_wait: bool,
    /// Run the agent contained: Claude Code inside its own sandbox, OpenCode and a
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

//! How an agent runs, as a plain value: which CLI (or a command of the user's), its
//! program and arguments, and the time limits and retries of one iteration. `cmd/` and
//! `setup/` build it from the command line's flags (`setup/plan.rs`); the runner and the
//! agent layer read it and never see clap. A parallel child gets it back as flags
//! (`runner/parallel/child.rs`, the one place that writes them).

use std::path::PathBuf;
use std::time::Duration;

use pagent_protocol::stream::AgentKind;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Options {
    /// The agent CLI, unless `command` names a command of the user's instead.
    pub agent: AgentKind,
    pub command: Option<String>,
    pub agent_bin: Option<PathBuf>,
    pub agent_args: Vec<String>,
    pub permission_mode: String,
    pub iteration_timeout: Duration,
    pub idle_timeout: Duration,
    pub retries: u32,
    pub retry_delay: Duration,
    pub outage_wait: Duration,
    pub limit_wait: Duration,
    pub limit_margin: Duration,
    pub no_limit_wait: bool,
    /// Run the agent contained (`--sandbox`).
    pub sandbox: bool,
    /// The hosts a contained agent's commands may reach (`--allow-host`).
    pub allow_hosts: Vec<String>,
}

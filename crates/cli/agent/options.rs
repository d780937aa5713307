//! How an agent runs, as a plain value: which CLI (or a command of the user's), its
//! program and arguments, and the time limits and retries of one iteration. `cmd/` and
//! `setup/` build it from the command line's flags (`setup/plan.rs`); the runner and the
//! agent layer read it and never see clap. A parallel child gets it as data, in the
//! plan file its parent writes (`setup/child_plan.rs`): durations in whole seconds, the
//! agent by its name.

use std::path::PathBuf;
use std::time::Duration;

use pagent_protocol::stream::AgentKind;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Options {
    /// The agent CLI, unless `command` names a command of the user's instead.
    #[serde(with = "agent_name")]
    pub agent: AgentKind,
    pub command: Option<String>,
    pub agent_bin: Option<PathBuf>,
    pub agent_args: Vec<String>,
    pub permission_mode: String,
    #[serde(with = "secs")]
    pub iteration_timeout: Duration,
    #[serde(with = "secs")]
    pub idle_timeout: Duration,
    pub retries: u32,
    #[serde(with = "secs")]
    pub retry_delay: Duration,
    #[serde(with = "secs")]
    pub outage_wait: Duration,
    #[serde(with = "secs")]
    pub limit_wait: Duration,
    #[serde(with = "secs")]
    pub limit_margin: Duration,
    pub no_limit_wait: bool,
    /// Run the agent contained (`--sandbox`).
    pub sandbox: bool,
    /// The hosts a contained agent's commands may reach (`--allow-host`).
    pub allow_hosts: Vec<String>,
}

/// An agent as its name (`claude`), the one table of names.
mod agent_name {
    use pagent_protocol::stream::AgentKind;
    use serde::de::Error;
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(kind: &AgentKind, out: S) -> Result<S::Ok, S::Error> {
        out.serialize_str(kind.name())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(input: D) -> Result<AgentKind, D::Error> {
        let name = String::deserialize(input)?;
        AgentKind::from_name(&name)
            .ok_or_else(|| D::Error::custom(format!("{name:?} is not an agent")))
    }
}

/// A duration as whole seconds, as the flags give it.
mod secs {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(duration: &Duration, out: S) -> Result<S::Ok, S::Error> {
        out.serialize_u64(duration.as_secs())
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(input: D) -> Result<Duration, D::Error> {
        u64::deserialize(input).map(Duration::from_secs)
    }
}

//! One configured check: [`CheckSpec`], which runs either a built-in parser or a command
//! ([`CheckRun`]), never both and never neither. The file format keeps its two optional
//! keys (`"builtin"`, `"command"`); `RawCheckSpec` is that form, and a check that gives
//! both or neither is refused while it is read, so no later code has to guess.

use serde::{Deserialize, Serialize};

use super::{ConfigError, DEFAULT_COMMAND_TIMEOUT};
use crate::Syntax;

/// What a check runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckRun {
    /// A built-in parser (`json`, `toml`, `yaml`): no subprocess.
    Builtin(Syntax),
    /// A program and its arguments; `{file}`, `{dir}` and `{root}` are substituted.
    Command(Vec<String>),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(try_from = "RawCheckSpec", into = "RawCheckSpec")]
pub struct CheckSpec {
    /// A name for messages and the log (default: the builtin, or the program).
    pub name: Option<String>,
    pub run: CheckRun,
    /// Seconds before the command is killed and reported as timed out.
    pub timeout: Option<u64>,
    pub enabled: bool,
    /// Treat any output as a failure, even with exit status 0 (`gofmt -l`).
    pub fail_on_output: bool,
    /// What must hold for a default check to apply; user checks need only their program.
    pub requires: Option<Requirement>,
}

/// "The project looks like it uses this tool", decided by the binary.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Requirement {
    /// A `Cargo.toml` above the file (inside the project); runs in its folder.
    CargoProject,
    /// A `tsconfig.json` above the file and TypeScript installed in `node_modules`; runs
    /// in the tsconfig's folder, with that `tsc`.
    TypescriptProject,
    /// A `go.mod` above the file; runs in the file's folder.
    GoModule,
}

/// A check as written in a config file or sealed in a state.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct RawCheckSpec {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    builtin: Option<Syntax>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    timeout: Option<u64>,
    #[serde(default = "super::yes", skip_serializing_if = "Clone::clone")]
    enabled: bool,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    fail_on_output: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    requires: Option<Requirement>,
}

impl TryFrom<RawCheckSpec> for CheckSpec {
    type Error = String;

    fn try_from(raw: RawCheckSpec) -> Result<CheckSpec, String> {
        let run = match (raw.builtin, raw.command) {
            (Some(syntax), None) => CheckRun::Builtin(syntax),
            (None, Some(argv)) => CheckRun::Command(argv),
            (Some(_), Some(argv)) => {
                return Err(format!(
                    "the check running `{}` also names a \"builtin\": give either \"builtin\" or \"command\", not both",
                    argv.join(" ")
                ));
            }
            (None, None) => {
                return Err(format!(
                    "the check {}gives neither: give \"builtin\" (json, toml, yaml) or \"command\" ([program, args...])",
                    raw.name
                        .map(|n| format!("named {n:?} "))
                        .unwrap_or_default()
                ));
            }
        };
        Ok(CheckSpec {
            name: raw.name,
            run,
            timeout: raw.timeout,
            enabled: raw.enabled,
            fail_on_output: raw.fail_on_output,
            requires: raw.requires,
        })
    }
}

impl From<CheckSpec> for RawCheckSpec {
    fn from(spec: CheckSpec) -> RawCheckSpec {
        let (builtin, command) = match spec.run {
            CheckRun::Builtin(syntax) => (Some(syntax), None),
            CheckRun::Command(argv) => (None, Some(argv)),
        };
        RawCheckSpec {
            name: spec.name,
            builtin,
            command,
            timeout: spec.timeout,
            enabled: spec.enabled,
            fail_on_output: spec.fail_on_output,
            requires: spec.requires,
        }
    }
}

impl CheckSpec {
    pub(super) fn builtin(syntax: Syntax) -> CheckSpec {
        CheckSpec {
            name: None,
            run: CheckRun::Builtin(syntax),
            timeout: None,
            enabled: true,
            fail_on_output: false,
            requires: None,
        }
    }

    pub(super) fn command(argv: &[&str], timeout: u64) -> CheckSpec {
        CheckSpec {
            name: None,
            run: CheckRun::Command(argv.iter().map(|s| (*s).to_owned()).collect()),
            timeout: Some(timeout),
            enabled: true,
            fail_on_output: false,
            requires: None,
        }
    }

    pub(super) fn requiring(mut self, requirement: Requirement) -> CheckSpec {
        self.requires = Some(requirement);
        self
    }

    /// How the check is named in messages and the log.
    pub fn label(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        match &self.run {
            CheckRun::Builtin(syntax) => format!("{} syntax", syntax.name()),
            CheckRun::Command(argv) => argv
                .iter()
                .filter(|a| !a.contains('{'))
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
        }
    }

    pub fn timeout_secs(&self) -> u64 {
        self.timeout.unwrap_or(DEFAULT_COMMAND_TIMEOUT)
    }

    /// Checks the spec is usable; `field` names it in the error.
    pub fn validate(&self, field: &str) -> Result<(), ConfigError> {
        let err = |suffix: &str, reason: &str| {
            Err(ConfigError {
                field: format!("{field}{suffix}"),
                reason: reason.to_owned(),
            })
        };
        match &self.run {
            CheckRun::Command(argv) if argv.first().is_none_or(|p| p.trim().is_empty()) => {
                err(".command", "expected a non-empty list")
            }
            _ if self.timeout == Some(0) || self.timeout.is_some_and(|t| t > 3600) => {
                err(".timeout", "expected 1 to 3600 seconds")
            }
            _ => Ok(()),
        }
    }
}

//! PostToolUse backpressure: which checks an edited file gets, and what the model is told.
//!
//! After every Write/Edit/MultiEdit/NotebookEdit in an active loop, the edited file is
//! checked and problems go straight back to the model, so it fixes them in the same turn
//! instead of discovering them stages later. This module is the policy: the configuration
//! format, the built-in defaults per extension, and the text sent back. Running the
//! commands (and deciding whether a tool is installed, or whether the project uses it) is
//! the binary's job.
//!
//! Configuration, in a workflow's `"backpressure"`, in the project's
//! `.claude/pagent/config.json`, or in the user's `config.json`:
//!
//! ```json
//! {"checks": {
//!     "py":   [{"command": ["mypy", "{file}"], "timeout": 60}],
//!     "json": false,
//!     "rs":   [{"builtin": "toml", "enabled": false}]
//! }}
//! ```
//!
//! An extension's entry replaces its defaults; `false` or `[]` turns its checks off.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::Syntax;
use crate::render::cap_head;

/// Longest output kept per failed check, in characters (the head: first errors first).
pub const CHECK_OUTPUT_CAP: usize = 1_500;
/// Longest additional context sent back for one edit.
pub const CONTEXT_CAP: usize = 6_000;
const DEFAULT_COMMAND_TIMEOUT: u64 = 30;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BackpressureConfig {
    /// Check edits in every session, not only while a loop is active. Honoured only in
    /// the user's own config file.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub always: bool,
    /// Per extension (without the dot, lowercase): the checks that replace the defaults.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    pub checks: BTreeMap<String, ExtensionChecks>,
    /// While the latest check of a file edited in the loop fails, the loop does not
    /// complete and a stage does not advance. `"gate": false` turns that off.
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub gate: bool,
}

impl Default for BackpressureConfig {
    fn default() -> Self {
        BackpressureConfig {
            always: false,
            checks: BTreeMap::new(),
            gate: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ExtensionChecks {
    /// `false`: no checks for this extension (`true` means "the defaults").
    Switch(bool),
    List(Vec<CheckSpec>),
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CheckSpec {
    /// A name for messages and the log (default: the builtin, or the program).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// A built-in parser (`json`, `toml`, `yaml`): no subprocess.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub builtin: Option<Syntax>,
    /// A program and its arguments; `{file}`, `{dir}` and `{root}` are substituted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub command: Option<Vec<String>>,
    /// Seconds before the command is killed and reported as timed out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub timeout: Option<u64>,
    #[serde(default = "yes", skip_serializing_if = "Clone::clone")]
    pub enabled: bool,
    /// Treat any output as a failure, even with exit status 0 (`gofmt -l`).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fail_on_output: bool,
    /// What must hold for a default check to apply; user checks need only their program.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub requires: Option<Requirement>,
}

fn yes() -> bool {
    true
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

impl BackpressureConfig {
    /// Every configured command (not the built-in defaults), as `ext: argv`, for consent.
    pub fn commands(&self) -> Vec<String> {
        let mut out = Vec::new();
        for (ext, checks) in &self.checks {
            if let ExtensionChecks::List(list) = checks {
                for spec in list.iter().filter(|c| c.enabled) {
                    if let Some(argv) = &spec.command {
                        out.push(format!(".{ext} files: {}", argv.join(" ")));
                    }
                }
            }
        }
        out
    }
}

impl CheckSpec {
    fn builtin(syntax: Syntax) -> CheckSpec {
        CheckSpec {
            name: None,
            builtin: Some(syntax),
            command: None,
            timeout: None,
            enabled: true,
            fail_on_output: false,
            requires: None,
        }
    }

    fn command(argv: &[&str], timeout: u64) -> CheckSpec {
        CheckSpec {
            name: None,
            builtin: None,
            command: Some(argv.iter().map(|s| (*s).to_owned()).collect()),
            timeout: Some(timeout),
            enabled: true,
            fail_on_output: false,
            requires: None,
        }
    }

    fn requiring(mut self, requirement: Requirement) -> CheckSpec {
        self.requires = Some(requirement);
        self
    }

    /// How the check is named in messages and the log.
    pub fn label(&self) -> String {
        if let Some(name) = &self.name {
            return name.clone();
        }
        match (&self.builtin, &self.command) {
            (Some(syntax), _) => format!("{} syntax", syntax.name()),
            (None, Some(argv)) => argv
                .iter()
                .filter(|a| !a.contains('{'))
                .cloned()
                .collect::<Vec<_>>()
                .join(" "),
            (None, None) => "check".to_owned(),
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
        match (&self.builtin, &self.command) {
            (Some(_), Some(_)) => err("", "give either \"builtin\" or \"command\", not both"),
            (None, None) => err(
                "",
                "give \"builtin\" (json, toml, yaml) or \"command\" ([program, args...])",
            ),
            (None, Some(argv)) if argv.first().is_none_or(|p| p.trim().is_empty()) => {
                err(".command", "expected a non-empty list")
            }
            _ if self.timeout == Some(0) || self.timeout.is_some_and(|t| t > 3600) => {
                err(".timeout", "expected 1 to 3600 seconds")
            }
            _ => Ok(()),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct ConfigError {
    pub field: String,
    pub reason: String,
}

impl BackpressureConfig {
    pub fn validate(&self) -> Result<(), ConfigError> {
        for (ext, checks) in &self.checks {
            if ext.is_empty() || ext.starts_with('.') || ext.contains('/') {
                return Err(ConfigError {
                    field: format!("checks.{ext}"),
                    reason: "use the extension without its dot, e.g. \"py\"".into(),
                });
            }
            if let ExtensionChecks::List(list) = checks {
                for (i, spec) in list.iter().enumerate() {
                    spec.validate(&format!("checks.{ext}[{i}]"))?;
                }
            }
        }
        Ok(())
    }

    /// `self` with `over`'s extensions replacing its own.
    pub fn overlaid(mut self, over: &BackpressureConfig) -> BackpressureConfig {
        self.always |= over.always;
        self.gate &= over.gate;
        for (ext, checks) in &over.checks {
            self.checks.insert(ext.clone(), checks.clone());
        }
        self
    }

    /// The enabled checks for a file with extension `ext` (any case, no dot).
    pub fn checks_for(&self, ext: &str) -> Vec<CheckSpec> {
        let ext = ext.to_ascii_lowercase();
        let list = match self.checks.get(&ext) {
            Some(ExtensionChecks::Switch(false)) => Vec::new(),
            Some(ExtensionChecks::List(list)) => list.clone(),
            Some(ExtensionChecks::Switch(true)) | None => default_checks(&ext),
        };
        list.into_iter().filter(|c| c.enabled).collect()
    }
}

/// The built-in checks: safe to run, fast, and each only where the project uses the tool.
pub fn default_checks(ext: &str) -> Vec<CheckSpec> {
    match ext {
        "json" | "ipynb" => vec![CheckSpec::builtin(Syntax::Json)],
        "toml" => vec![CheckSpec::builtin(Syntax::Toml)],
        "yaml" | "yml" => vec![CheckSpec::builtin(Syntax::Yaml)],
        "py" | "pyw" => vec![CheckSpec::command(
            &["python3", "-m", "py_compile", "{file}"],
            15,
        )],
        "sh" | "bash" => vec![
            CheckSpec::command(&["bash", "-n", "{file}"], 10),
            CheckSpec::command(&["shellcheck", "-f", "gcc", "{file}"], 20),
        ],
        "ts" | "tsx" | "mts" | "cts" => {
            vec![
                CheckSpec::command(&["tsc", "--noEmit", "--pretty", "false"], 90)
                    .requiring(Requirement::TypescriptProject),
            ]
        }
        "rs" => vec![
            CheckSpec::command(
                &["cargo", "check", "--quiet", "--message-format", "short"],
                180,
            )
            .requiring(Requirement::CargoProject),
        ],
        "go" => vec![
            CheckSpec {
                fail_on_output: true,
                ..CheckSpec::command(&["gofmt", "-l", "{file}"], 10)
            },
            CheckSpec::command(&["go", "vet", "."], 90).requiring(Requirement::GoModule),
        ],
        _ => Vec::new(),
    }
}

/// How one check of one file ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckResult {
    Passed,
    /// Problems found: the output (or parse error) to show the model.
    Failed(String),
    TimedOut {
        after_secs: u64,
        output: String,
    },
    /// The tool is not installed or the project does not use it: nothing said.
    Skipped(String),
}

/// The latest failed check of one edited file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct FailedCheck {
    /// The checks that failed, e.g. `python3 -m py_compile`.
    pub checks: String,
    /// The start of their output (compilers put the first errors first).
    pub output: String,
}

/// The additional context for one edited file, or `None` when everything passed.
pub fn render_feedback(file: &str, results: &[(String, CheckResult)]) -> Option<String> {
    let mut problems = Vec::new();
    for (label, result) in results {
        match result {
            CheckResult::Failed(output) => problems.push(format!(
                "{label} failed:\n{}",
                cap_head(output.trim_end(), CHECK_OUTPUT_CAP, "output cut")
            )),
            CheckResult::TimedOut { after_secs, output } => {
                let mut text = format!(
                    "{label} did not finish within {after_secs} s and was stopped, so {file} is unchecked"
                );
                if !output.trim().is_empty() {
                    text.push_str(&format!(
                        ":\n{}",
                        cap_head(output.trim_end(), CHECK_OUTPUT_CAP, "output cut")
                    ));
                }
                problems.push(text);
            }
            CheckResult::Passed | CheckResult::Skipped(_) => {}
        }
    }
    if problems.is_empty() {
        return None;
    }
    let text = format!(
        "pagent checked {file} after your edit and found problems; fix them before moving on.\n\n{}",
        problems.join("\n\n")
    );
    Some(cap_head(&text, CONTEXT_CAP, "more problems cut"))
}

#[cfg(test)]
mod tests;

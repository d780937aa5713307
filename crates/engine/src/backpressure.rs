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

mod spec;

pub use spec::{CheckRun, CheckSpec, Requirement};

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

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(untagged)]
pub enum ExtensionChecks {
    /// `false`: no checks for this extension (`true` means "the defaults").
    Switch(bool),
    List(Vec<CheckSpec>),
}

/// By hand, not `untagged`: an untagged enum answers every mistake inside a check with
/// "data did not match any variant"; this one says which check and what is wrong.
impl<'de> Deserialize<'de> for ExtensionChecks {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Shape;
        impl<'de> serde::de::Visitor<'de> for Shape {
            type Value = ExtensionChecks;

            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("true, false or a list of checks")
            }

            fn visit_bool<E: serde::de::Error>(self, on: bool) -> Result<ExtensionChecks, E> {
                Ok(ExtensionChecks::Switch(on))
            }

            fn visit_seq<A: serde::de::SeqAccess<'de>>(
                self,
                mut seq: A,
            ) -> Result<ExtensionChecks, A::Error> {
                let mut list = Vec::new();
                loop {
                    match seq.next_element::<CheckSpec>() {
                        Ok(Some(spec)) => list.push(spec),
                        Ok(None) => return Ok(ExtensionChecks::List(list)),
                        Err(err) => {
                            return Err(serde::de::Error::custom(format!(
                                "check [{}]: {err}",
                                list.len()
                            )));
                        }
                    }
                }
            }
        }
        deserializer.deserialize_any(Shape)
    }
}

fn yes() -> bool {
    true
}

impl BackpressureConfig {
    /// Every configured command (not the built-in defaults), as `ext: argv`, for consent;
    /// and the gate turned off, which a project may do only with the user's consent too
    /// (a failing check would no longer keep its loop from completing).
    pub fn commands(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.gate {
            out.push(GATE_OFF.to_owned());
        }
        for (ext, checks) in &self.checks {
            if let ExtensionChecks::List(list) = checks {
                for spec in list.iter().filter(|c| c.enabled) {
                    if let CheckRun::Command(argv) = &spec.run {
                        out.push(format!(".{ext} files: {}", argv.join(" ")));
                    }
                }
            }
        }
        out
    }
}

/// How a configuration that turns the gate off reads in a consent list.
pub const GATE_OFF: &str =
    "\"gate\": false (a failing check no longer keeps the loop from completing)";

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

impl CheckSpec {
    /// Whether this is one of pagent's own default checks for files with extension
    /// `ext`: the binary runs those isolated from the project (its own working folder,
    /// interpreters that cannot import the project's files), a check someone configured
    /// as it was written.
    pub fn is_builtin_default(&self, ext: &str) -> bool {
        default_checks(&ext.to_ascii_lowercase()).contains(self)
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

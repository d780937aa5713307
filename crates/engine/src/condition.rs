//! Exit conditions (`exit_when`): their JSON forms, validation and evaluation.
//!
//! A condition is an object discriminated by which key it has (`{"file_exists": ...,
//! "min_lines": 50}`), which serde's enum representations cannot express with good error
//! messages, so conversion goes through `serde_json::Value` by hand. Every error names the
//! field (`stages[1].exit_when.min_lines`) and what was wrong; an unknown form is an error,
//! never "satisfied".
//!
//! This file holds the types, and what a condition says about itself without looking at
//! the world: the paths it names, whether it runs commands, the promise it waits for.
//! The JSON forms are in `parse`, checking a condition against the world in `evaluate`,
//! the condition in a person's words in `describe`; each grows with every new form, so
//! each has its own file.

mod describe;
mod evaluate;
pub(crate) mod parse;

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

use crate::RelPath;

pub use evaluate::{Evaluation, Finding};
pub use parse::ConditionError;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Condition {
    FileExists {
        path: RelPath,
        min_lines: u64,
    },
    DirectoryExists {
        path: RelPath,
        min_files: u64,
    },
    AllFilesExist {
        paths: Vec<RelPath>,
        min_lines: u64,
    },
    Promise(String),
    /// Every required story of this plan is done (`{"stories_pass": "tasks.md"}`, with
    /// `"format"` to name the plan's kind instead of telling it by content).
    StoriesPass {
        path: RelPath,
        format: Option<crate::stories::Format>,
    },
    Command(Check),
    /// A merge of another branch is committed here, keeping the branch's own work, with no
    /// conflict left (see `merge.rs`): `pagent parallel --merge`'s resolution loops.
    MergeCommitted(crate::merge::MergeSpec),
    /// A fresh reviewer agent agrees the work meets the criteria (see `review.rs`). Only
    /// the whole condition or an item of its top-level `all`, and once per stage.
    Review(crate::review::Review),
    All(Vec<Condition>),
    Any(Vec<Condition>),
}

/// A command whose exit status is the condition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Check {
    pub shape: CheckShape,
    pub timeout_secs: u64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CheckShape {
    /// `{"custom": "scripts/check.sh --fast"}`: a command line for `sh -c`.
    Shell(String),
    /// `{"command": ["cargo", "test"]}`: a program and its arguments, no shell.
    Argv(Vec<String>),
}

impl Check {
    /// How the command reads in messages: the shell text, or the argv joined by spaces.
    pub fn display(&self) -> String {
        match &self.shape {
            CheckShape::Shell(line) => line.clone(),
            CheckShape::Argv(argv) => argv.join(" "),
        }
    }
}

impl Condition {
    /// Every path the condition names, for the set-up's symlink check.
    pub fn paths(&self) -> Vec<&RelPath> {
        match self {
            Condition::FileExists { path, .. } | Condition::DirectoryExists { path, .. } => {
                vec![path]
            }
            Condition::AllFilesExist { paths, .. } => paths.iter().collect(),
            Condition::All(items) | Condition::Any(items) => {
                items.iter().flat_map(Condition::paths).collect()
            }
            Condition::StoriesPass { path, .. } => vec![path],
            Condition::Promise(_)
            | Condition::Command(_)
            | Condition::Review(_)
            | Condition::MergeCommitted(_) => Vec::new(),
        }
    }

    /// Every command this condition may run, as shown to the user for consent.
    pub fn commands(&self) -> Vec<String> {
        match self {
            Condition::Command(check) => vec![check.display()],
            // Starting an agent in the project is running a command: it needs the same
            // consent as a check when a project file asks for it.
            Condition::Review(review) => vec![review.reviewer.display()],
            Condition::All(items) | Condition::Any(items) => {
                items.iter().flat_map(Condition::commands).collect()
            }
            _ => Vec::new(),
        }
    }

    /// The check commands of this condition: what a reviewer may run besides reading.
    pub fn checks(&self) -> Vec<Check> {
        match self {
            Condition::Command(check) => vec![check.clone()],
            Condition::All(items) | Condition::Any(items) => {
                items.iter().flat_map(Condition::checks).collect()
            }
            _ => Vec::new(),
        }
    }

    /// True if evaluating this condition may start a process.
    pub fn runs_commands(&self) -> bool {
        match self {
            Condition::Command(_) | Condition::Review(_) => true,
            Condition::All(items) | Condition::Any(items) => {
                items.iter().any(Condition::runs_commands)
            }
            _ => false,
        }
    }

    /// The promise this condition waits for, if it is (or contains) a promise.
    pub fn promise(&self) -> Option<&str> {
        match self {
            Condition::Promise(text) => Some(text),
            Condition::All(items) | Condition::Any(items) => {
                items.iter().find_map(Condition::promise)
            }
            _ => None,
        }
    }
}

impl Serialize for Condition {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.to_json().serialize(serializer)
    }
}

impl<'de> Deserialize<'de> for Condition {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let value = Value::deserialize(deserializer)?;
        Condition::from_json(&value, "exit_when").map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests;

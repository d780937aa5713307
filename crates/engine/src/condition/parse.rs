//! A condition's JSON forms: [`Condition::from_json`], which validates as it parses, and
//! [`Condition::to_json`], its inverse.
//!
//! The form is found by its key, then each form checks its own fields by hand, so an
//! error names the exact field that is wrong (`stages[1].exit_when.min_lines`), and a
//! key that belongs to no form, or to another form, is an error rather than ignored.

use serde_json::{Value, json};

use super::{Check, CheckShape, Condition};
use crate::RelPath;
use crate::review::{Review, Reviewer};

/// Default time budget of a check command, in seconds.
pub const DEFAULT_CHECK_TIMEOUT_SECS: u64 = 120;
const MAX_CHECK_TIMEOUT_SECS: u64 = 3600;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct ConditionError {
    pub field: String,
    pub reason: String,
}

fn error(field: &str, reason: impl Into<String>) -> ConditionError {
    ConditionError {
        field: field.to_owned(),
        reason: reason.into(),
    }
}

const FORMS: &str = "file_exists, directory_exists, all_files_exist, promise_in_output, \
                     stories_pass, custom, command, review, merge_committed, all, any";

/// Where a condition sits: a review may be the whole condition or an item of its
/// top-level `all`, so "everything else holds" has one plain meaning.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place {
    Top,
    TopAll,
    Nested,
}

impl Condition {
    /// Parses a condition; `field` names it in errors (e.g. `stages[0].exit_when`).
    pub fn from_json(value: &Value, field: &str) -> Result<Condition, ConditionError> {
        let condition = Condition::parse_at(value, field, Place::Top)?;
        if let Condition::All(items) = &condition
            && items
                .iter()
                .filter(|c| matches!(c, Condition::Review(_)))
                .count()
                > 1
        {
            return Err(error(
                field,
                "one review per stage: put every criterion in one review",
            ));
        }
        Ok(condition)
    }

    fn parse_at(value: &Value, field: &str, place: Place) -> Result<Condition, ConditionError> {
        let Value::Object(map) = value else {
            return Err(error(
                field,
                format!("expected an object with one of: {FORMS}"),
            ));
        };
        let kinds: Vec<&str> = map
            .keys()
            .map(String::as_str)
            .filter(|k| FORMS.split(", ").any(|f| f == *k))
            .collect();
        let kind = match kinds.as_slice() {
            [one] => *one,
            [] => {
                let keys: Vec<&str> = map.keys().map(String::as_str).collect();
                return Err(error(
                    field,
                    format!("unknown condition {keys:?}; expected one of: {FORMS}"),
                ));
            }
            many => {
                return Err(error(
                    field,
                    format!(
                        "one condition per object, found {many:?}; combine them with \"all\" or \"any\""
                    ),
                ));
            }
        };
        let sub = |key: &str| format!("{field}.{key}");
        let allow_only = |allowed: &[&str]| -> Result<(), ConditionError> {
            match map.keys().find(|k| !allowed.contains(&k.as_str())) {
                Some(extra) => Err(error(
                    &sub(extra),
                    format!(
                        "not a field of \"{kind}\" (allowed: {})",
                        allowed.join(", ")
                    ),
                )),
                None => Ok(()),
            }
        };
        let path_at = |v: &Value, f: &str| -> Result<RelPath, ConditionError> {
            let text = v
                .as_str()
                .ok_or_else(|| error(f, "expected a path string"))?;
            RelPath::new(text).map_err(|e| error(f, e.to_string()))
        };
        let count_at = |key: &str, default: u64| -> Result<u64, ConditionError> {
            match map.get(key) {
                None => Ok(default),
                Some(v) => v
                    .as_u64()
                    .ok_or_else(|| error(&sub(key), "expected a whole number of at least 0")),
            }
        };
        match kind {
            "file_exists" => {
                allow_only(&["file_exists", "min_lines"])?;
                Ok(Condition::FileExists {
                    path: path_at(&map[kind], &sub(kind))?,
                    min_lines: count_at("min_lines", 0)?,
                })
            }
            "directory_exists" => {
                allow_only(&["directory_exists", "min_files"])?;
                Ok(Condition::DirectoryExists {
                    path: path_at(&map[kind], &sub(kind))?,
                    min_files: count_at("min_files", 0)?,
                })
            }
            "all_files_exist" => {
                allow_only(&["all_files_exist", "min_lines"])?;
                let Value::Array(items) = &map[kind] else {
                    return Err(error(&sub(kind), "expected a list of paths"));
                };
                if items.is_empty() {
                    return Err(error(&sub(kind), "the list is empty"));
                }
                let paths = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| path_at(v, &format!("{}[{i}]", sub(kind))))
                    .collect::<Result<_, _>>()?;
                Ok(Condition::AllFilesExist {
                    paths,
                    min_lines: count_at("min_lines", 0)?,
                })
            }
            "stories_pass" => {
                allow_only(&["stories_pass", "format"])?;
                let format = match map.get("format") {
                    None => None,
                    Some(value) => Some(
                        value
                            .as_str()
                            .and_then(crate::stories::Format::from_name)
                            .ok_or_else(|| {
                                error(
                                    &sub("format"),
                                    "expected one of: prd-json, chief, spec-kit, kiro, ralphex, issues",
                                )
                            })?,
                    ),
                };
                Ok(Condition::StoriesPass {
                    path: path_at(&map[kind], &sub(kind))?,
                    format,
                })
            }
            "merge_committed" => {
                allow_only(&["merge_committed", "keeping", "name"])?;
                crate::merge::MergeSpec::parse(map, field).map(Condition::MergeCommitted)
            }
            "promise_in_output" => {
                allow_only(&["promise_in_output"])?;
                let text = map[kind].as_str().map(str::trim).unwrap_or_default();
                if text.is_empty() {
                    return Err(error(
                        &sub(kind),
                        "expected the promise text, e.g. \"DONE\"",
                    ));
                }
                if text.contains('<') || text.contains('>') {
                    return Err(error(&sub(kind), "the promise text may not contain < or >"));
                }
                Ok(Condition::Promise(text.to_owned()))
            }
            "review" => {
                allow_only(&["review", "reviewer", "reviewer_command", "timeout"])?;
                if place == Place::Nested {
                    return Err(error(
                        field,
                        "a review must be the stage's whole exit_when or an item of its top-level \"all\"",
                    ));
                }
                let criteria = map[kind].as_str().map(str::trim).unwrap_or_default();
                if criteria.is_empty() {
                    return Err(error(
                        &sub(kind),
                        "expected the criteria, e.g. \"every public function has a test\"",
                    ));
                }
                if criteria.chars().count() > crate::review::MAX_CRITERIA_CHARS {
                    return Err(error(
                        &sub(kind),
                        format!(
                            "the criteria are longer than {} characters; point to a file instead",
                            crate::review::MAX_CRITERIA_CHARS
                        ),
                    ));
                }
                let reviewer = match (map.get("reviewer"), map.get("reviewer_command")) {
                    (Some(_), Some(_)) => {
                        return Err(error(
                            &sub("reviewer_command"),
                            "name a reviewer or a reviewer command, not both",
                        ));
                    }
                    (None, None) => Reviewer::Claude,
                    (Some(name), None) => match name.as_str() {
                        Some("claude") => Reviewer::Claude,
                        Some("codex") => Reviewer::Codex,
                        Some("opencode") => Reviewer::Opencode,
                        _ => {
                            return Err(error(
                                &sub("reviewer"),
                                "expected \"claude\", \"codex\" or \"opencode\" (or use reviewer_command)",
                            ));
                        }
                    },
                    (None, Some(line)) => match line.as_str().map(str::trim) {
                        Some(line) if !line.is_empty() => Reviewer::Command(line.to_owned()),
                        _ => {
                            return Err(error(
                                &sub("reviewer_command"),
                                "expected a command line that reads the prompt on stdin",
                            ));
                        }
                    },
                };
                let timeout_secs = count_at("timeout", crate::review::DEFAULT_REVIEW_TIMEOUT_SECS)?;
                if !(10..=crate::review::MAX_REVIEW_TIMEOUT_SECS).contains(&timeout_secs) {
                    return Err(error(
                        &sub("timeout"),
                        format!(
                            "expected 10 to {} seconds (the reviewer runs inside the Stop hook's time limit)",
                            crate::review::MAX_REVIEW_TIMEOUT_SECS
                        ),
                    ));
                }
                Ok(Condition::Review(Review {
                    criteria: criteria.to_owned(),
                    reviewer,
                    timeout_secs,
                }))
            }
            "custom" | "command" => {
                allow_only(&[kind, "timeout"])?;
                let shape = if kind == "custom" {
                    let line = map[kind].as_str().map(str::trim).unwrap_or_default();
                    if line.is_empty() {
                        return Err(error(
                            &sub(kind),
                            "expected a command line, e.g. \"scripts/check.sh\"",
                        ));
                    }
                    CheckShape::Shell(line.to_owned())
                } else {
                    let argv: Option<Vec<String>> = map[kind]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .map(|v| v.as_str().map(str::to_owned))
                                .collect::<Option<_>>()
                        })
                        .unwrap_or(None);
                    match argv {
                        Some(argv) if !argv.is_empty() && !argv[0].is_empty() => {
                            CheckShape::Argv(argv)
                        }
                        _ => {
                            return Err(error(
                                &sub(kind),
                                "expected a non-empty list of strings, e.g. [\"cargo\", \"test\"]",
                            ));
                        }
                    }
                };
                let timeout_secs = count_at("timeout", DEFAULT_CHECK_TIMEOUT_SECS)?;
                if !(1..=MAX_CHECK_TIMEOUT_SECS).contains(&timeout_secs) {
                    return Err(error(
                        &sub("timeout"),
                        format!("expected 1 to {MAX_CHECK_TIMEOUT_SECS} seconds"),
                    ));
                }
                Ok(Condition::Command(Check {
                    shape,
                    timeout_secs,
                }))
            }
            _ => {
                allow_only(&[kind])?;
                let Value::Array(items) = &map[kind] else {
                    return Err(error(&sub(kind), "expected a list of conditions"));
                };
                if items.is_empty() {
                    return Err(error(&sub(kind), "the list is empty"));
                }
                let child_place = if place == Place::Top && kind == "all" {
                    Place::TopAll
                } else {
                    Place::Nested
                };
                let children = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| {
                        Condition::parse_at(v, &format!("{}[{i}]", sub(kind)), child_place)
                    })
                    .collect::<Result<Vec<_>, _>>()?;
                Ok(if kind == "all" {
                    Condition::All(children)
                } else {
                    Condition::Any(children)
                })
            }
        }
    }

    pub fn to_json(&self) -> Value {
        match self {
            Condition::FileExists { path, min_lines } => {
                json!({"file_exists": path.as_str(), "min_lines": min_lines})
            }
            Condition::DirectoryExists { path, min_files } => {
                json!({"directory_exists": path.as_str(), "min_files": min_files})
            }
            Condition::AllFilesExist { paths, min_lines } => {
                json!({"all_files_exist": paths.iter().map(RelPath::as_str).collect::<Vec<_>>(), "min_lines": min_lines})
            }
            Condition::Promise(text) => json!({"promise_in_output": text}),
            Condition::MergeCommitted(spec) => spec.to_json(),
            Condition::StoriesPass { path, format } => match format {
                None => json!({"stories_pass": path.as_str()}),
                Some(format) => json!({"stories_pass": path.as_str(), "format": format.name()}),
            },
            Condition::Command(Check {
                shape: CheckShape::Shell(line),
                timeout_secs,
            }) => json!({"custom": line, "timeout": timeout_secs}),
            Condition::Command(Check {
                shape: CheckShape::Argv(argv),
                timeout_secs,
            }) => json!({"command": argv, "timeout": timeout_secs}),
            Condition::Review(Review {
                criteria,
                reviewer,
                timeout_secs,
            }) => match reviewer {
                Reviewer::Command(line) => {
                    json!({"review": criteria, "reviewer_command": line, "timeout": timeout_secs})
                }
                known => {
                    json!({"review": criteria, "reviewer": known.name(), "timeout": timeout_secs})
                }
            },
            Condition::All(items) => {
                json!({"all": items.iter().map(Condition::to_json).collect::<Vec<_>>()})
            }
            Condition::Any(items) => {
                json!({"any": items.iter().map(Condition::to_json).collect::<Vec<_>>()})
            }
        }
    }
}

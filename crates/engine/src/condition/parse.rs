//! A condition's JSON forms: [`Condition::from_json`], which validates as it parses, and
//! [`Condition::to_json`], its inverse.
//!
//! The form is found by its key ([`FORMS`], the one table of forms and their keys), then
//! each form checks its own fields by hand, so an error names the exact field that is
//! wrong (`stages[1].exit_when.min_lines`), and a key that belongs to no form, or to
//! another form, is an error rather than ignored.

use serde_json::{Map, Value, json};

use super::{Check, CheckShape, Condition};
use crate::RelPath;
use crate::review::{Review, Reviewer};

/// Default time budget of a check command, in seconds.
pub const DEFAULT_CHECK_TIMEOUT_SECS: u64 = 120;
/// The longest a check command may be given.
pub const MAX_CHECK_TIMEOUT_SECS: u64 = 3600;

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

/// Every form of condition: the key that names it, then every key it allows (in the
/// order errors list them). The parser and the workflow schema (`schema.rs`) both read
/// this table, so a form or a key cannot be added to one and not the other.
pub const FORMS: &[(&str, &[&str])] = &[
    ("file_exists", &["file_exists", "min_lines"]),
    ("directory_exists", &["directory_exists", "min_files"]),
    ("all_files_exist", &["all_files_exist", "min_lines"]),
    ("promise_in_output", &["promise_in_output"]),
    ("stories_pass", &["stories_pass", "format"]),
    ("custom", &["custom", "timeout"]),
    ("command", &["command", "timeout"]),
    (
        "review",
        &["review", "reviewer", "reviewer_command", "timeout"],
    ),
    ("merge_committed", &["merge_committed", "keeping", "name"]),
    ("all", &["all"]),
    ("any", &["any"]),
];

/// The forms' names, for messages: `file_exists, directory_exists, ...`.
fn form_names() -> String {
    FORMS
        .iter()
        .map(|(name, _)| *name)
        .collect::<Vec<_>>()
        .join(", ")
}

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

    /// The form is found by its key, its keys checked against [`FORMS`], then the form
    /// reads its own fields.
    fn parse_at(value: &Value, field: &str, place: Place) -> Result<Condition, ConditionError> {
        let Value::Object(map) = value else {
            return Err(error(
                field,
                format!("expected an object with one of: {}", form_names()),
            ));
        };
        let (kind, allowed) = form_of(map, field)?;
        let at = Fields { map, field, kind };
        at.allow_only(allowed)?;
        match kind {
            "file_exists" => at.file_exists(),
            "directory_exists" => at.directory_exists(),
            "all_files_exist" => at.all_files_exist(),
            "stories_pass" => at.stories_pass(),
            "merge_committed" => {
                crate::merge::MergeSpec::parse(map, field).map(Condition::MergeCommitted)
            }
            "promise_in_output" => at.promise(),
            "review" => at.review(place),
            "custom" | "command" => at.command(),
            _ => at.combination(place),
        }
    }
}

/// The one form `map` names, with the keys it allows.
fn form_of(
    map: &Map<String, Value>,
    field: &str,
) -> Result<(&'static str, &'static [&'static str]), ConditionError> {
    let found: Vec<(&'static str, &'static [&'static str])> = FORMS
        .iter()
        .copied()
        .filter(|(name, _)| map.contains_key(*name))
        .collect();
    match found.as_slice() {
        [one] => Ok(*one),
        [] => {
            let keys: Vec<&str> = map.keys().map(String::as_str).collect();
            Err(error(
                field,
                format!(
                    "unknown condition {keys:?}; expected one of: {}",
                    form_names()
                ),
            ))
        }
        _ => {
            // In the object's own (sorted) key order, as the message always listed them.
            let many: Vec<&str> = map
                .keys()
                .map(String::as_str)
                .filter(|k| FORMS.iter().any(|(name, _)| name == k))
                .collect();
            Err(error(
                field,
                format!(
                    "one condition per object, found {many:?}; combine them with \"all\" or \"any\""
                ),
            ))
        }
    }
}

/// One condition object being read: its fields, where it is, and which form it is.
struct Fields<'a> {
    map: &'a Map<String, Value>,
    field: &'a str,
    kind: &'static str,
}

impl Fields<'_> {
    fn sub(&self, key: &str) -> String {
        format!("{}.{key}", self.field)
    }

    /// The form's own value (its key is there: [`form_of`] found it).
    fn value(&self) -> &Value {
        &self.map[self.kind]
    }

    fn allow_only(&self, allowed: &[&str]) -> Result<(), ConditionError> {
        match self.map.keys().find(|k| !allowed.contains(&k.as_str())) {
            Some(extra) => Err(error(
                &self.sub(extra),
                format!(
                    "not a field of \"{}\" (allowed: {})",
                    self.kind,
                    allowed.join(", ")
                ),
            )),
            None => Ok(()),
        }
    }

    fn path_at(v: &Value, f: &str) -> Result<RelPath, ConditionError> {
        let text = v
            .as_str()
            .ok_or_else(|| error(f, "expected a path string"))?;
        RelPath::new(text).map_err(|e| error(f, e.to_string()))
    }

    fn path(&self) -> Result<RelPath, ConditionError> {
        Fields::path_at(self.value(), &self.sub(self.kind))
    }

    fn count(&self, key: &str, default: u64) -> Result<u64, ConditionError> {
        match self.map.get(key) {
            None => Ok(default),
            Some(v) => v
                .as_u64()
                .ok_or_else(|| error(&self.sub(key), "expected a whole number of at least 0")),
        }
    }

    /// The form's value as trimmed text (empty when it is not a string).
    fn text(&self) -> &str {
        self.value().as_str().map(str::trim).unwrap_or_default()
    }

    fn file_exists(&self) -> Result<Condition, ConditionError> {
        Ok(Condition::FileExists {
            path: self.path()?,
            min_lines: self.count("min_lines", 0)?,
        })
    }

    fn directory_exists(&self) -> Result<Condition, ConditionError> {
        Ok(Condition::DirectoryExists {
            path: self.path()?,
            min_files: self.count("min_files", 0)?,
        })
    }

    fn all_files_exist(&self) -> Result<Condition, ConditionError> {
        let at = self.sub(self.kind);
        let Value::Array(items) = self.value() else {
            return Err(error(&at, "expected a list of paths"));
        };
        if items.is_empty() {
            return Err(error(&at, "the list is empty"));
        }
        let paths = items
            .iter()
            .enumerate()
            .map(|(i, v)| Fields::path_at(v, &format!("{at}[{i}]")))
            .collect::<Result<_, _>>()?;
        Ok(Condition::AllFilesExist {
            paths,
            min_lines: self.count("min_lines", 0)?,
        })
    }

    fn stories_pass(&self) -> Result<Condition, ConditionError> {
        let format = match self.map.get("format") {
            None => None,
            Some(value) => Some(
                value
                    .as_str()
                    .and_then(crate::stories::Format::from_name)
                    .ok_or_else(|| {
                        error(
                            &self.sub("format"),
                            "expected one of: prd-json, chief, spec-kit, kiro, ralphex, issues",
                        )
                    })?,
            ),
        };
        Ok(Condition::StoriesPass {
            path: self.path()?,
            format,
        })
    }

    fn promise(&self) -> Result<Condition, ConditionError> {
        let text = self.text();
        let at = self.sub(self.kind);
        if text.is_empty() {
            return Err(error(&at, "expected the promise text, e.g. \"DONE\""));
        }
        if text.contains('<') || text.contains('>') {
            return Err(error(&at, "the promise text may not contain < or >"));
        }
        Ok(Condition::Promise(text.to_owned()))
    }

    fn review(&self, place: Place) -> Result<Condition, ConditionError> {
        use crate::review::{DEFAULT_REVIEW_TIMEOUT_SECS, MAX_CRITERIA_CHARS};
        if place == Place::Nested {
            return Err(error(
                self.field,
                "a review must be the stage's whole exit_when or an item of its top-level \"all\"",
            ));
        }
        let criteria = self.text();
        let at = self.sub(self.kind);
        if criteria.is_empty() {
            return Err(error(
                &at,
                "expected the criteria, e.g. \"every public function has a test\"",
            ));
        }
        if criteria.chars().count() > MAX_CRITERIA_CHARS {
            return Err(error(
                &at,
                format!(
                    "the criteria are longer than {MAX_CRITERIA_CHARS} characters; point to a file instead"
                ),
            ));
        }
        let reviewer = self.reviewer()?;
        let timeout_secs = self.count("timeout", DEFAULT_REVIEW_TIMEOUT_SECS)?;
        if !(10..=crate::review::MAX_REVIEW_TIMEOUT_SECS).contains(&timeout_secs) {
            return Err(error(
                &self.sub("timeout"),
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

    fn reviewer(&self) -> Result<Reviewer, ConditionError> {
        match (self.map.get("reviewer"), self.map.get("reviewer_command")) {
            (Some(_), Some(_)) => Err(error(
                &self.sub("reviewer_command"),
                "name a reviewer or a reviewer command, not both",
            )),
            (None, None) => Ok(Reviewer::Claude),
            (Some(name), None) => match name.as_str() {
                Some("claude") => Ok(Reviewer::Claude),
                Some("codex") => Ok(Reviewer::Codex),
                Some("opencode") => Ok(Reviewer::Opencode),
                _ => Err(error(
                    &self.sub("reviewer"),
                    "expected \"claude\", \"codex\" or \"opencode\" (or use reviewer_command)",
                )),
            },
            (None, Some(line)) => match line.as_str().map(str::trim) {
                Some(line) if !line.is_empty() => Ok(Reviewer::Command(line.to_owned())),
                _ => Err(error(
                    &self.sub("reviewer_command"),
                    "expected a command line that reads the prompt on stdin",
                )),
            },
        }
    }

    fn command(&self) -> Result<Condition, ConditionError> {
        let at = self.sub(self.kind);
        let shape = if self.kind == "custom" {
            let line = self.text();
            if line.is_empty() {
                return Err(error(
                    &at,
                    "expected a command line, e.g. \"scripts/check.sh\"",
                ));
            }
            CheckShape::Shell(line.to_owned())
        } else {
            let argv: Option<Vec<String>> = self.value().as_array().and_then(|a| {
                a.iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect::<Option<_>>()
            });
            match argv {
                Some(argv) if !argv.is_empty() && !argv[0].is_empty() => CheckShape::Argv(argv),
                _ => {
                    return Err(error(
                        &at,
                        "expected a non-empty list of strings, e.g. [\"cargo\", \"test\"]",
                    ));
                }
            }
        };
        let timeout_secs = self.count("timeout", DEFAULT_CHECK_TIMEOUT_SECS)?;
        if !(1..=MAX_CHECK_TIMEOUT_SECS).contains(&timeout_secs) {
            return Err(error(
                &self.sub("timeout"),
                format!("expected 1 to {MAX_CHECK_TIMEOUT_SECS} seconds"),
            ));
        }
        Ok(Condition::Command(Check {
            shape,
            timeout_secs,
        }))
    }

    /// `all` or `any`: a list of conditions.
    fn combination(&self, place: Place) -> Result<Condition, ConditionError> {
        let at = self.sub(self.kind);
        let Value::Array(items) = self.value() else {
            return Err(error(&at, "expected a list of conditions"));
        };
        if items.is_empty() {
            return Err(error(&at, "the list is empty"));
        }
        let child_place = if place == Place::Top && self.kind == "all" {
            Place::TopAll
        } else {
            Place::Nested
        };
        let children = items
            .iter()
            .enumerate()
            .map(|(i, v)| Condition::parse_at(v, &format!("{at}[{i}]"), child_place))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(if self.kind == "all" {
            Condition::All(children)
        } else {
            Condition::Any(children)
        })
    }
}

impl Condition {
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

//! Exit conditions (`exit_when`): their JSON forms, validation and evaluation.
//!
//! A condition is an object discriminated by which key it has (`{"file_exists": ...,
//! "min_lines": 50}`), which serde's enum representations cannot express with good error
//! messages, so conversion goes through `serde_json::Value` by hand. Every error names the
//! field (`stages[1].exit_when.min_lines`) and what was wrong; an unknown form is an error,
//! never "satisfied".

use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Value, json};

use crate::world::{CheckOutcome, Probe, World};
use crate::{RelPath, render::cap_tail};

/// Default time budget of a check command, in seconds.
pub const DEFAULT_CHECK_TIMEOUT_SECS: u64 = 120;
const MAX_CHECK_TIMEOUT_SECS: u64 = 3600;

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
    /// Every user story in this PRD file (`prd.json`) has `"passes": true`.
    StoriesPass(RelPath),
    Command(Check),
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
                     stories_pass, custom, command, all, any";

impl Condition {
    /// Parses a condition; `field` names it in errors (e.g. `stages[0].exit_when`).
    pub fn from_json(value: &Value, field: &str) -> Result<Condition, ConditionError> {
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
                allow_only(&["stories_pass"])?;
                Ok(Condition::StoriesPass(path_at(&map[kind], &sub(kind))?))
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
                let children = items
                    .iter()
                    .enumerate()
                    .map(|(i, v)| Condition::from_json(v, &format!("{}[{i}]", sub(kind))))
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
            Condition::StoriesPass(path) => json!({"stories_pass": path.as_str()}),
            Condition::Command(Check {
                shape: CheckShape::Shell(line),
                timeout_secs,
            }) => json!({"custom": line, "timeout": timeout_secs}),
            Condition::Command(Check {
                shape: CheckShape::Argv(argv),
                timeout_secs,
            }) => json!({"command": argv, "timeout": timeout_secs}),
            Condition::All(items) => {
                json!({"all": items.iter().map(Condition::to_json).collect::<Vec<_>>()})
            }
            Condition::Any(items) => {
                json!({"any": items.iter().map(Condition::to_json).collect::<Vec<_>>()})
            }
        }
    }

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
            Condition::StoriesPass(path) => vec![path],
            Condition::Promise(_) | Condition::Command(_) => Vec::new(),
        }
    }

    /// True if evaluating this condition may start a process.
    pub fn runs_commands(&self) -> bool {
        match self {
            Condition::Command(_) => true,
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

    /// Evaluates the condition against the world.
    pub fn evaluate(&self, world: &mut dyn World) -> Evaluation {
        let mut findings = Vec::new();
        let met = self.evaluate_into(world, &mut findings);
        Evaluation { met, findings }
    }

    fn evaluate_into(&self, world: &mut dyn World, out: &mut Vec<Finding>) -> bool {
        match self {
            Condition::FileExists { path, min_lines } => file_finding(world, path, *min_lines, out),
            Condition::AllFilesExist { paths, min_lines } => {
                let mut met = true;
                for path in paths {
                    met &= file_finding(world, path, *min_lines, out);
                }
                met
            }
            Condition::DirectoryExists { path, min_files } => {
                let probe = world.count_files(path);
                let (met, detail, short) =
                    count_phrases(&probe, &format!("{path}/"), *min_files, "file");
                out.push(Finding {
                    met,
                    detail,
                    short,
                    output_tail: None,
                });
                met
            }
            Condition::StoriesPass(path) => {
                let (met, detail, short) = match world
                    .read_text(path)
                    .map(|t| crate::stories::Prd::parse(&t))
                {
                    Ok(Ok(prd)) => {
                        let total = prd.user_stories.len();
                        let passing = prd.passing();
                        match prd.next_story() {
                            None => (
                                true,
                                format!("all {total} stories in {path} pass"),
                                format!("stories {total}/{total}"),
                            ),
                            Some(next) => (
                                false,
                                format!(
                                    "{passing} of {total} stories in {path} pass; next: {}: {}",
                                    next.id, next.title
                                ),
                                format!("stories {passing}/{total}"),
                            ),
                        }
                    }
                    Ok(Err(why)) => (
                        false,
                        format!("{path} is not a valid PRD: {why}"),
                        format!("{path} invalid"),
                    ),
                    Err(Probe::Missing) => (
                        false,
                        format!("{path} does not exist"),
                        format!("{path} missing"),
                    ),
                    Err(_) => (
                        false,
                        format!("{path} cannot be read"),
                        format!("{path} unreadable"),
                    ),
                };
                out.push(Finding {
                    met,
                    detail,
                    short,
                    output_tail: None,
                });
                met
            }
            Condition::Promise(text) => {
                let message = world.last_assistant_message();
                let met = message
                    .as_deref()
                    .is_some_and(|m| crate::contains_promise(m, text));
                let (detail, short) = match (&message, met) {
                    (_, true) => (
                        format!("the promise <promise>{text}</promise> was made"),
                        format!("promise {text} made"),
                    ),
                    (None, false) => (
                        format!(
                            "your last message could not be read, so the promise <promise>{text}</promise> was not seen"
                        ),
                        format!("waiting for <promise>{text}</promise>"),
                    ),
                    (Some(_), false) => (
                        format!("your last message did not contain <promise>{text}</promise>"),
                        format!("waiting for <promise>{text}</promise>"),
                    ),
                };
                out.push(Finding {
                    met,
                    detail,
                    short,
                    output_tail: None,
                });
                met
            }
            Condition::Command(check) => {
                let shown = check.display();
                let (met, detail, short, tail) = match world.run_check(check) {
                    CheckOutcome::Passed => (
                        true,
                        format!("`{shown}` passed"),
                        format!("`{shown}` passed"),
                        None,
                    ),
                    CheckOutcome::Failed { code, tail } => {
                        let how = code.map_or_else(
                            || "was killed by a signal".to_owned(),
                            |c| format!("exited with code {c}"),
                        );
                        (
                            false,
                            format!("`{shown}` {how}"),
                            format!("`{shown}` failed"),
                            Some(tail),
                        )
                    }
                    CheckOutcome::TimedOut { after_secs, tail } => (
                        false,
                        format!("`{shown}` did not finish within {after_secs} s and was stopped"),
                        format!("`{shown}` timed out"),
                        Some(tail),
                    ),
                    CheckOutcome::Error(why) => (
                        false,
                        format!("`{shown}` could not run: {why}"),
                        format!("`{shown}` could not run"),
                        None,
                    ),
                    CheckOutcome::NotRun => (
                        false,
                        format!("`{shown}` runs when the model stops"),
                        format!("`{shown}` (checked at stop)"),
                        None,
                    ),
                };
                let output_tail = tail
                    .map(|t| cap_tail(&t, crate::TAIL_CAP))
                    .filter(|t| !t.trim().is_empty());
                out.push(Finding {
                    met,
                    detail,
                    short,
                    output_tail,
                });
                met
            }
            Condition::All(items) => {
                let mut met = true;
                for item in items {
                    met &= item.evaluate_into(world, out);
                }
                met
            }
            Condition::Any(items) => {
                let mut alternatives = Vec::new();
                for item in items {
                    let mut sub = Vec::new();
                    if item.evaluate_into(world, &mut sub) {
                        out.extend(sub);
                        return true;
                    }
                    alternatives.extend(sub);
                }
                let detail = format!(
                    "none of the alternatives holds: {}",
                    alternatives
                        .iter()
                        .map(|f| f.detail.as_str())
                        .collect::<Vec<_>>()
                        .join("; or ")
                );
                let short = alternatives
                    .iter()
                    .map(|f| f.short.as_str())
                    .collect::<Vec<_>>()
                    .join(" | ");
                let output_tail = alternatives.into_iter().find_map(|f| f.output_tail);
                out.push(Finding {
                    met: false,
                    detail,
                    short,
                    output_tail,
                });
                false
            }
        }
    }
}

fn file_finding(
    world: &mut dyn World,
    path: &RelPath,
    min_lines: u64,
    out: &mut Vec<Finding>,
) -> bool {
    let probe = world.count_lines(path);
    let (met, detail, short) = count_phrases(&probe, path.as_str(), min_lines, "non-blank line");
    out.push(Finding {
        met,
        detail,
        short,
        output_tail: None,
    });
    met
}

/// (met, sentence for the model, short form for status) for a counted probe.
fn count_phrases(probe: &Probe, name: &str, min: u64, unit: &str) -> (bool, String, String) {
    let plural = |n: u64| {
        if n == 1 {
            unit.to_owned()
        } else {
            format!("{unit}s")
        }
    };
    let short_unit = unit.rsplit(' ').next().unwrap_or(unit);
    match probe {
        Probe::Count(n) if *n >= min => (
            true,
            format!("{name} has {n} {} (needs {min})", plural(*n)),
            format!("{name} {n}/{min} {short_unit}s"),
        ),
        Probe::Count(n) => (
            false,
            format!("{name} has {n} of the {min} {} it needs", plural(min)),
            format!("{name} {n}/{min} {short_unit}s"),
        ),
        Probe::Missing => (
            false,
            format!("{name} does not exist yet (it needs {min} {})", plural(min)),
            format!("{name} missing"),
        ),
        Probe::WrongKind => {
            let what = if name.ends_with('/') {
                "is a file, not a folder"
            } else {
                "is a folder, not a file"
            };
            (
                false,
                format!("{} {what}", name.trim_end_matches('/')),
                format!("{name} wrong kind"),
            )
        }
        Probe::Outside => (
            false,
            format!("{name} leads outside the project (symlink) and is not counted"),
            format!("{name} outside project"),
        ),
        Probe::Error(why) => (
            false,
            format!("{name} could not be read: {why}"),
            format!("{name} unreadable"),
        ),
    }
}

/// The result of evaluating a condition: whether it holds, and one finding per leaf.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Evaluation {
    pub met: bool,
    pub findings: Vec<Finding>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    pub met: bool,
    /// A sentence for the model: "architecture.md has 12 of the 50 non-blank lines it needs".
    pub detail: String,
    /// A few words for status: "architecture.md 12/50 lines".
    pub short: String,
    /// The tail of a failed command's output.
    pub output_tail: Option<String>,
}

impl Evaluation {
    /// What is still missing, one sentence per unmet leaf.
    pub fn missing(&self) -> Vec<&Finding> {
        self.findings.iter().filter(|f| !f.met).collect()
    }

    /// One line for status and logs: the short forms joined.
    pub fn summary(&self) -> String {
        self.findings
            .iter()
            .map(|f| f.short.as_str())
            .collect::<Vec<_>>()
            .join(", ")
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
mod tests {
    use super::*;
    use crate::testing::MemoryWorld;

    fn parse(value: Value) -> Result<Condition, ConditionError> {
        Condition::from_json(&value, "exit_when")
    }

    #[test]
    fn every_documented_form_parses_and_round_trips() {
        for value in [
            json!({"file_exists": "architecture.md", "min_lines": 50}),
            json!({"directory_exists": "src", "min_files": 3}),
            json!({"all_files_exist": ["a.md", "b.md"], "min_lines": 2}),
            json!({"promise_in_output": "DONE"}),
            json!({"custom": "scripts/check.sh", "timeout": 30}),
            json!({"command": ["cargo", "test"], "timeout": 120}),
            json!({"all": [{"file_exists": "a", "min_lines": 0}, {"any": [{"promise_in_output": "X"}, {"command": ["true"], "timeout": 5}]}]}),
        ] {
            let condition = parse(value.clone()).unwrap();
            assert_eq!(condition.to_json(), value);
            assert_eq!(parse(condition.to_json()).unwrap(), condition);
        }
    }

    #[test]
    fn invalid_forms_name_the_field_and_the_reason() {
        let cases = [
            (json!({"file_exist": "a"}), "exit_when", "unknown condition"),
            (json!("DONE"), "exit_when", "expected an object"),
            (
                json!({"file_exists": "a", "promise_in_output": "X"}),
                "exit_when",
                "one condition per object",
            ),
            (
                json!({"file_exists": "a", "min_line": 3}),
                "exit_when.min_line",
                "not a field",
            ),
            (
                json!({"file_exists": "../a"}),
                "exit_when.file_exists",
                "leaves the project",
            ),
            (
                json!({"file_exists": "/etc/passwd"}),
                "exit_when.file_exists",
                "absolute",
            ),
            (
                json!({"directory_exists": "src", "min_files": -1}),
                "exit_when.min_files",
                "whole number",
            ),
            (
                json!({"all_files_exist": []}),
                "exit_when.all_files_exist",
                "empty",
            ),
            (
                json!({"all_files_exist": ["a", 3]}),
                "exit_when.all_files_exist[1]",
                "path string",
            ),
            (
                json!({"promise_in_output": ""}),
                "exit_when.promise_in_output",
                "promise text",
            ),
            (
                json!({"command": []}),
                "exit_when.command",
                "non-empty list",
            ),
            (
                json!({"command": "cargo test"}),
                "exit_when.command",
                "non-empty list",
            ),
            (
                json!({"custom": "x", "timeout": 0}),
                "exit_when.timeout",
                "seconds",
            ),
            (
                json!({"all": [{"nope": 1}]}),
                "exit_when.all[0]",
                "unknown condition",
            ),
        ];
        for (value, field, reason) in cases {
            let err = parse(value.clone()).unwrap_err();
            assert_eq!(err.field, field, "{value}");
            assert!(err.reason.contains(reason), "{value}: {}", err.reason);
        }
    }

    #[test]
    fn evaluation_reports_what_is_missing() {
        let mut world = MemoryWorld::default()
            .file("architecture.md", 12)
            .dir("src", 1);
        let condition = parse(json!({"all": [
            {"file_exists": "architecture.md", "min_lines": 50},
            {"directory_exists": "src", "min_files": 1},
            {"file_exists": "test-plan.md", "min_lines": 30}
        ]}))
        .unwrap();
        let evaluation = condition.evaluate(&mut world);
        assert!(!evaluation.met);
        let missing: Vec<&str> = evaluation
            .missing()
            .iter()
            .map(|f| f.detail.as_str())
            .collect();
        assert_eq!(
            missing,
            [
                "architecture.md has 12 of the 50 non-blank lines it needs",
                "test-plan.md does not exist yet (it needs 30 non-blank lines)"
            ]
        );
        assert_eq!(
            evaluation.summary(),
            "architecture.md 12/50 lines, src/ 1/1 files, test-plan.md missing"
        );
    }

    #[test]
    fn any_holds_when_one_alternative_holds() {
        let mut world = MemoryWorld::default().file("b.md", 1).message("no promise");
        let condition = parse(json!({"any": [{"promise_in_output": "DONE"}, {"file_exists": "b.md", "min_lines": 1}]})).unwrap();
        assert!(condition.evaluate(&mut world).met);
        let condition =
            parse(json!({"any": [{"promise_in_output": "DONE"}, {"file_exists": "c.md"}]}))
                .unwrap();
        let evaluation = condition.evaluate(&mut world);
        assert!(!evaluation.met);
        assert!(
            evaluation.findings[0]
                .detail
                .starts_with("none of the alternatives holds")
        );
    }

    #[test]
    fn failed_commands_carry_their_output_tail() {
        let mut world = MemoryWorld::default().check(
            "cargo test",
            CheckOutcome::Failed {
                code: Some(101),
                tail: "error[E0308]: mismatched types\n".into(),
            },
        );
        let condition = parse(json!({"command": ["cargo", "test"]})).unwrap();
        let evaluation = condition.evaluate(&mut world);
        assert!(!evaluation.met);
        assert_eq!(
            evaluation.findings[0].detail,
            "`cargo test` exited with code 101"
        );
        assert_eq!(
            evaluation.findings[0].output_tail.as_deref(),
            Some("error[E0308]: mismatched types\n")
        );
    }
}

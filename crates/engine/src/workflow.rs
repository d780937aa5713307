//! Workflows: the stages a user (or the built-in `prd-to-code`) asks for, validated once.
//!
//! A workflow file is configuration a person writes by hand, so unlike hook payloads it is
//! strict: unknown keys are errors (a typo like `exit_wen` must not silently mean "no
//! condition"), and every error names its field (`stages[2].exit_when.min_lines`).

use serde_json::{Map, Value};

use crate::Condition;
use crate::backpressure::BackpressureConfig;
use crate::budget::{self, Budget};

pub const DEFAULT_MAX_ITERATIONS: u32 = 25;
pub const DEFAULT_NO_PROGRESS_LIMIT: u32 = 3;
/// Upper bound on any iteration budget: a loop is never unlimited, even by request.
pub const MAX_ITERATIONS_CEILING: u32 = 1_000;

/// Every key of a workflow file, in the order errors list them. The parser and the
/// workflow's JSON Schema (`schema.rs`) both read it.
pub const WORKFLOW_KEYS: &[&str] = &[
    "name",
    "description",
    "max_iterations",
    "no_progress_limit",
    "backpressure",
    "max_duration",
    "max_tokens",
    "max_cost",
    "stages",
];

/// Every key of a stage, as [`WORKFLOW_KEYS`] is the workflow's.
pub const STAGE_KEYS: &[&str] = &[
    "name",
    "prompt",
    "prompt_file",
    "exit_when",
    "max_iterations",
];

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Workflow {
    pub name: String,
    pub description: Option<String>,
    pub max_iterations: Option<u32>,
    pub no_progress_limit: Option<u32>,
    /// PostToolUse checks for this workflow's loops (see `backpressure.rs`).
    pub backpressure: Option<BackpressureConfig>,
    /// Time, token and cost limits (`max_duration`, `max_tokens`, `max_cost`).
    pub budget: Budget,
    pub stages: Vec<StageSpec>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StageSpec {
    pub name: String,
    pub prompt: PromptSource,
    pub exit_when: Condition,
    pub max_iterations: Option<u32>,
}

/// Where a stage's prompt text comes from; the binary reads files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum PromptSource {
    Inline(String),
    /// Relative to the workflow file's folder.
    File(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{field}: {reason}")]
pub struct WorkflowError {
    pub field: String,
    pub reason: String,
}

fn error(field: impl Into<String>, reason: impl Into<String>) -> WorkflowError {
    WorkflowError {
        field: field.into(),
        reason: reason.into(),
    }
}

impl Workflow {
    /// Every command the workflow may run (its conditions and its backpressure checks).
    pub fn commands(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .stages
            .iter()
            .flat_map(|s| {
                s.exit_when
                    .commands()
                    .into_iter()
                    .map(move |c| format!("stage {}: {c}", s.name))
            })
            .collect();
        if let Some(backpressure) = &self.backpressure {
            out.extend(backpressure.commands());
        }
        out
    }

    /// Parses and validates a workflow document. `fallback_name` names a workflow whose
    /// file has no `name` (its file stem).
    pub fn from_json(value: &Value, fallback_name: &str) -> Result<Workflow, WorkflowError> {
        let Value::Object(map) = value else {
            return Err(error(
                "(top level)",
                "expected a JSON object with \"stages\"",
            ));
        };
        reject_unknown(map, "", WORKFLOW_KEYS)?;
        let budget_field = |key: &str, parse: fn(&str) -> Result<u64, String>| match map.get(key) {
            None | Some(Value::Null) => Ok(None),
            Some(value) => budget::parse_json_field(value, parse)
                .map(Some)
                .map_err(|reason| error(key, reason)),
        };
        let budget = Budget {
            max_duration_secs: budget_field("max_duration", budget::parse_duration)?,
            max_tokens: budget_field("max_tokens", budget::parse_tokens)?,
            max_cost_microusd: budget_field("max_cost", budget::parse_cost)?,
        };
        let name =
            optional_string(map, "name", "name")?.unwrap_or_else(|| fallback_name.to_owned());
        check_name(&name, "name")?;
        let description = optional_string(map, "description", "description")?;
        let max_iterations = optional_budget(map, "max_iterations", "max_iterations", 1)?;
        let no_progress_limit = optional_budget(map, "no_progress_limit", "no_progress_limit", 0)?;
        let backpressure = match map.get("backpressure") {
            None | Some(Value::Null) => None,
            Some(value) => {
                let config: BackpressureConfig = serde_json::from_value(value.clone())
                    .map_err(|e| error("backpressure", e.to_string()))?;
                config
                    .validate()
                    .map_err(|e| error(format!("backpressure.{}", e.field), e.reason))?;
                if config.always {
                    // `always` belongs to the user's own config: a workflow may not turn
                    // checks on for sessions that run no loop.
                    return Err(error(
                        "backpressure.always",
                        "only the user's own config.json can turn checks on outside a loop",
                    ));
                }
                Some(config)
            }
        };
        let Some(Value::Array(items)) = map.get("stages") else {
            return Err(error("stages", "expected a list of stages"));
        };
        if items.is_empty() {
            return Err(error("stages", "a workflow needs at least one stage"));
        }
        let mut stages: Vec<StageSpec> = Vec::with_capacity(items.len());
        for (i, item) in items.iter().enumerate() {
            let at = format!("stages[{i}]");
            let stage = parse_stage(item, &at)?;
            if stages.iter().any(|s| s.name == stage.name) {
                return Err(error(
                    format!("{at}.name"),
                    format!("the stage name {:?} is used twice", stage.name),
                ));
            }
            stages.push(stage);
        }
        Ok(Workflow {
            name,
            description,
            max_iterations,
            no_progress_limit,
            backpressure,
            budget,
            stages,
        })
    }
}

fn parse_stage(value: &Value, at: &str) -> Result<StageSpec, WorkflowError> {
    let Value::Object(map) = value else {
        return Err(error(
            at,
            "expected an object with name, prompt and exit_when",
        ));
    };
    reject_unknown(map, at, STAGE_KEYS)?;
    let name = optional_string(map, "name", &format!("{at}.name"))?
        .ok_or_else(|| error(format!("{at}.name"), "every stage needs a name"))?;
    check_name(&name, &format!("{at}.name"))?;
    let prompt = match (
        optional_string(map, "prompt", &format!("{at}.prompt"))?,
        optional_string(map, "prompt_file", &format!("{at}.prompt_file"))?,
    ) {
        (Some(_), Some(_)) => {
            return Err(error(
                at,
                "give either \"prompt\" or \"prompt_file\", not both",
            ));
        }
        (Some(text), None) if !text.trim().is_empty() => PromptSource::Inline(text),
        (None, Some(file)) if !file.trim().is_empty() => PromptSource::File(file),
        _ => {
            return Err(error(
                format!("{at}.prompt"),
                "every stage needs a non-empty \"prompt\" or \"prompt_file\"",
            ));
        }
    };
    let condition = map.get("exit_when").ok_or_else(|| {
        error(
            format!("{at}.exit_when"),
            "every stage needs an exit condition",
        )
    })?;
    let exit_when = Condition::from_json(condition, &format!("{at}.exit_when"))
        .map_err(|e| error(e.field, e.reason))?;
    let max_iterations =
        optional_budget(map, "max_iterations", &format!("{at}.max_iterations"), 1)?;
    Ok(StageSpec {
        name,
        prompt,
        exit_when,
        max_iterations,
    })
}

fn reject_unknown(
    map: &Map<String, Value>,
    at: &str,
    allowed: &[&str],
) -> Result<(), WorkflowError> {
    match map.keys().find(|k| !allowed.contains(&k.as_str())) {
        Some(key) => {
            // A key that would read oddly in `field: reason` is quoted (found by fuzzing:
            // an empty key gave an empty field name).
            let key = if key.is_empty()
                || key.contains(|c: char| c.is_whitespace() || c == '.' || c == ':')
            {
                format!("{key:?}")
            } else {
                key.clone()
            };
            let field = if at.is_empty() {
                key
            } else {
                format!("{at}.{key}")
            };
            Err(error(
                field,
                format!("unknown field (expected one of: {})", allowed.join(", ")),
            ))
        }
        None => Ok(()),
    }
}

fn optional_string(
    map: &Map<String, Value>,
    key: &str,
    field: &str,
) -> Result<Option<String>, WorkflowError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(error(field, "expected a string")),
    }
}

fn optional_budget(
    map: &Map<String, Value>,
    key: &str,
    field: &str,
    min: u32,
) -> Result<Option<u32>, WorkflowError> {
    match map.get(key) {
        None | Some(Value::Null) => Ok(None),
        Some(v) => match v.as_u64().and_then(|n| u32::try_from(n).ok()) {
            Some(n) if (min..=MAX_ITERATIONS_CEILING).contains(&n) => Ok(Some(n)),
            _ => Err(error(
                field,
                format!("expected a whole number from {min} to {MAX_ITERATIONS_CEILING}"),
            )),
        },
    }
}

/// Stage and workflow names become file names (`.claude/prompts/<stage>.md`).
fn check_name(name: &str, field: &str) -> Result<(), WorkflowError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
        && !name.starts_with('-');
    if ok {
        Ok(())
    } else {
        Err(error(
            field,
            format!("{name:?} must be 1-64 letters, digits, - or _"),
        ))
    }
}

#[cfg(test)]
mod tests;

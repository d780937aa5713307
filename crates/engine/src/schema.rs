//! JSON Schemas (draft 2020-12) for the files a person writes by hand: a workflow, and the
//! backpressure settings that a workflow and `config.json` share. Editors read them to
//! complete and validate as the file is typed (the editor's setting maps a file name to
//! its schema: the parsers refuse unknown keys, `"$schema"` too); `docs/schemas/`
//! publishes them.
//!
//! They are built from the tables the parsers read ([`FORMS`] for conditions,
//! [`WORKFLOW_KEYS`] and [`STAGE_KEYS`] for a workflow and its stages) and the limits the
//! parsers check, so a key cannot be added to a parser and not to its schema; the tests
//! in `tests/integration/docs/schemas.rs` hold the published files to these and check
//! that the schema and the parser accept and refuse the same documents.
//!
//! A schema says what a file may hold; the parser stays the judge (a path that leaves
//! the project, a name used twice): the schema is the editor's help, never the gate.

use serde_json::{Map, Value, json};

use crate::condition::parse::{DEFAULT_CHECK_TIMEOUT_SECS, FORMS, MAX_CHECK_TIMEOUT_SECS};
use crate::review::{DEFAULT_REVIEW_TIMEOUT_SECS, MAX_CRITERIA_CHARS, MAX_REVIEW_TIMEOUT_SECS};
use crate::stories::Format;
use crate::workflow::{MAX_ITERATIONS_CEILING, STAGE_KEYS, WORKFLOW_KEYS};

/// The draft every schema here follows.
pub const DRAFT: &str = "https://json-schema.org/draft/2020-12/schema";

/// The schema of a workflow file.
pub fn workflow() -> Value {
    let properties: Map<String, Value> = WORKFLOW_KEYS
        .iter()
        .map(|key| ((*key).to_owned(), workflow_key(key)))
        .collect();
    json!({
        "$schema": DRAFT,
        "title": "pagent workflow",
        "description": "The stages of a pagent loop, each with its prompt and the condition that ends it (docs/workflows.md).",
        "type": "object",
        "required": ["stages"],
        "properties": properties,
        "additionalProperties": false,
        "$defs": {
            "stage": stage(),
            "condition": condition(),
            "name": {
                "type": "string",
                "pattern": "^[A-Za-z0-9_][A-Za-z0-9_-]{0,63}$",
                "description": "1-64 letters, digits, - or _ (it becomes a file name)."
            },
        },
    })
}

/// The backpressure settings (`"backpressure"` in a workflow or in `config.json`).
/// `always` is honoured only in the user's own config, so only `user_config` offers it.
pub fn backpressure(user_config: bool) -> Value {
    let mut properties = json!({
        "checks": {
            "type": "object",
            "description": "Per file extension (without the dot): false (no checks), true (the defaults) or the checks that replace the defaults.",
            "propertyNames": {"pattern": "^[^./][^/]*$"},
            "additionalProperties": {
                "oneOf": [{"type": "boolean"}, {"type": "array", "items": check()}]
            },
        },
        "gate": {
            "type": "boolean",
            "default": true,
            "description": "While a check of a file edited in the loop fails, the loop does not complete.",
        },
    });
    if user_config {
        properties["always"] = json!({
            "type": "boolean",
            "default": false,
            "description": "Check edits in every session, not only while a loop runs (only in your own config.json).",
        });
    }
    json!({"type": "object", "properties": properties, "additionalProperties": false})
}

fn workflow_key(key: &str) -> Value {
    let limit = |min: u32, what: &str| json!({"type": "integer", "minimum": min, "maximum": MAX_ITERATIONS_CEILING, "description": what});
    let budget = |what: &str| json!({"type": ["number", "string", "null"], "description": what});
    match key {
        "name" => json!({"$ref": "#/$defs/name"}),
        "description" => json!({"type": "string"}),
        "max_iterations" => limit(1, "Iterations of the whole loop [default: 25]."),
        "no_progress_limit" => limit(
            0,
            "Iterations without progress before the loop gives up [default: 3; 0: never].",
        ),
        "backpressure" => backpressure(false),
        "max_duration" => budget("A time limit, e.g. \"8h\" or \"90m\"."),
        "max_tokens" => budget("A token limit, e.g. \"5M\"."),
        "max_cost" => budget("A cost limit in US dollars, e.g. \"20\" or \"$20\"."),
        "stages" => json!({"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/stage"}}),
        _ => Value::Null,
    }
}

fn stage() -> Value {
    let properties: Map<String, Value> = STAGE_KEYS
        .iter()
        .map(|key| ((*key).to_owned(), stage_key(key)))
        .collect();
    json!({
        "type": "object",
        "required": ["name", "exit_when"],
        "properties": properties,
        "additionalProperties": false,
        "oneOf": [{"required": ["prompt"]}, {"required": ["prompt_file"]}],
    })
}

fn stage_key(key: &str) -> Value {
    let text = |what: &str| json!({"type": "string", "minLength": 1, "pattern": "\\S", "description": what});
    match key {
        "name" => json!({"$ref": "#/$defs/name"}),
        "prompt" => text("The stage's prompt."),
        "prompt_file" => text("A file holding the prompt, relative to the workflow file's folder."),
        "exit_when" => json!({"$ref": "#/$defs/condition"}),
        "max_iterations" => {
            json!({"type": "integer", "minimum": 1, "maximum": MAX_ITERATIONS_CEILING})
        }
        _ => Value::Null,
    }
}

/// A condition: exactly one of [`FORMS`], each with only its own keys.
fn condition() -> Value {
    let forms: Vec<Value> = FORMS
        .iter()
        .map(|(name, keys)| {
            let properties: Map<String, Value> = keys
                .iter()
                .map(|key| ((*key).to_owned(), condition_key(name, key)))
                .collect();
            json!({
                "type": "object",
                "required": [name],
                "properties": properties,
                "additionalProperties": false,
            })
        })
        .collect();
    json!({"oneOf": forms})
}

/// The schema of `key` in the condition form `form`; `null` for a key this table does not
/// know (a test fails on it).
pub fn condition_key(form: &str, key: &str) -> Value {
    let path =
        json!({"type": "string", "minLength": 1, "description": "A path inside the project."});
    let count = json!({"type": "integer", "minimum": 0, "default": 0});
    let conditions =
        json!({"type": "array", "minItems": 1, "items": {"$ref": "#/$defs/condition"}});
    match (form, key) {
        (_, "file_exists" | "directory_exists" | "stories_pass") => path,
        (_, "all_files_exist") => json!({"type": "array", "minItems": 1, "items": path}),
        (_, "min_lines" | "min_files") => count,
        (_, "promise_in_output") => {
            json!({"type": "string", "pattern": "^[^<>]*\\S[^<>]*$", "description": "The text the agent prints as <promise>TEXT</promise>."})
        }
        (_, "format") => {
            let names: Vec<&str> = Format::ALL.iter().map(|f| f.name()).collect();
            json!({"enum": names})
        }
        (_, "custom") => {
            json!({"type": "string", "pattern": "\\S", "description": "A shell command line; exit status 0 ends the stage."})
        }
        (_, "command") => {
            json!({"type": "array", "minItems": 1, "items": {"type": "string"}, "prefixItems": [{"type": "string", "minLength": 1}], "description": "A program and its arguments; exit status 0 ends the stage."})
        }
        ("review", "timeout") => {
            json!({"type": "integer", "minimum": 10, "maximum": MAX_REVIEW_TIMEOUT_SECS, "default": DEFAULT_REVIEW_TIMEOUT_SECS})
        }
        (_, "timeout") => {
            json!({"type": "integer", "minimum": 1, "maximum": MAX_CHECK_TIMEOUT_SECS, "default": DEFAULT_CHECK_TIMEOUT_SECS})
        }
        (_, "review") => {
            json!({"type": "string", "pattern": "\\S", "maxLength": MAX_CRITERIA_CHARS, "description": "What the reviewer checks the work against."})
        }
        (_, "reviewer") => json!({"enum": ["claude", "codex", "opencode"], "default": "claude"}),
        (_, "reviewer_command") => {
            json!({"type": "string", "pattern": "\\S", "description": "A command line that reads the review prompt on stdin."})
        }
        (_, "merge_committed" | "keeping" | "name") => json!({"type": "string"}),
        (_, "all" | "any") => conditions,
        _ => Value::Null,
    }
}

/// One backpressure check: a built-in parser or a command, never both.
fn check() -> Value {
    json!({
        "type": "object",
        "properties": {
            "name": {"type": "string"},
            "builtin": {"enum": ["json", "toml", "yaml"]},
            "command": {
                "type": "array", "minItems": 1, "items": {"type": "string"},
                "prefixItems": [{"type": "string", "pattern": "\\S"}],
                "description": "A program and its arguments; {file}, {dir} and {root} are replaced.",
            },
            "timeout": {"type": "integer", "minimum": 1, "maximum": 3600},
            "enabled": {"type": "boolean", "default": true},
            "fail_on_output": {"type": "boolean", "default": false},
            "requires": {"enum": ["cargo_project", "typescript_project", "go_module"]},
        },
        "additionalProperties": false,
        "oneOf": [{"required": ["builtin"]}, {"required": ["command"]}],
    })
}

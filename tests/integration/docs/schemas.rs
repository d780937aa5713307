//! The JSON Schemas in `docs/schemas/` (issue 31, item 4): the published files are the
//! ones built from the parsers' own tables, the built-in workflow and every example in
//! the docs fit them, and the schema and the parser accept and refuse the same documents.
//!
//! The schemas use a small part of draft 2020-12; [`valid`] checks exactly that part, and
//! [`schemas_use_only_what_the_validator_knows`] fails on a keyword it does not check, so
//! a schema cannot hold a rule these tests never exercise.
//! `PAGENT_BLESS_DOCS=1` rewrites the published files (review the diff).

use std::path::Path;

use serde_json::{Value, json};

use super::{documents, fences, read, repo};

const KEYWORDS: &[&str] = &[
    "$schema",
    "$defs",
    "$ref",
    "title",
    "description",
    "default",
    "type",
    "enum",
    "properties",
    "required",
    "additionalProperties",
    "propertyNames",
    "items",
    "prefixItems",
    "minItems",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
    "pattern",
    "oneOf",
];

fn published() -> [(&'static str, Value); 2] {
    [
        ("docs/schemas/config.schema.json", pagent::schemas::config()),
        (
            "docs/schemas/workflow.schema.json",
            pagent::schemas::workflow(),
        ),
    ]
}

#[test]
fn published_schemas_are_the_ones_built_from_the_parsers() {
    let bless = std::env::var_os("PAGENT_BLESS_DOCS").is_some();
    for (file, schema) in published() {
        let text = serde_json::to_string_pretty(&schema).unwrap() + "\n";
        let path = repo().join(file);
        if bless {
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(&path, &text).unwrap();
        }
        let on_disk = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            on_disk == text,
            "{file} is not the schema pagent builds (PAGENT_BLESS_DOCS=1 cargo test --test integration docs::schemas rewrites it)"
        );
    }
}

/// A key a parser reads but the schema tables do not know becomes `null` in the schema.
#[test]
fn no_key_of_a_parser_lacks_its_schema() {
    fn walk(value: &Value, at: &str) {
        match value {
            Value::Null => panic!("{at} has no schema: add it to crates/engine/src/schema.rs"),
            Value::Array(items) => {
                (0..items.len()).for_each(|i| walk(&items[i], &format!("{at}[{i}]")))
            }
            Value::Object(map) => map.iter().for_each(|(k, v)| walk(v, &format!("{at}.{k}"))),
            _ => {}
        }
    }
    for (file, schema) in published() {
        walk(&schema, file);
    }
}

#[test]
fn schemas_use_only_what_the_validator_knows() {
    fn walk(schema: &Value, at: &str) {
        let Value::Object(map) = schema else { return };
        for (key, value) in map {
            assert!(
                KEYWORDS.contains(&key.as_str()),
                "{at}: keyword {key} is not checked by these tests"
            );
            match key.as_str() {
                "properties" | "$defs" => value
                    .as_object()
                    .unwrap()
                    .iter()
                    .for_each(|(k, v)| walk(v, &format!("{at}.{key}.{k}"))),
                "oneOf" | "prefixItems" => value
                    .as_array()
                    .unwrap()
                    .iter()
                    .for_each(|v| walk(v, &format!("{at}.{key}"))),
                "items" | "additionalProperties" | "propertyNames" => {
                    walk(value, &format!("{at}.{key}"))
                }
                _ => {}
            }
        }
    }
    for (file, schema) in published() {
        walk(&schema, file);
    }
}

/// Whether `value` fits `schema` (the part of the draft the schemas use; `root` resolves
/// `#/$defs/...`), with the first place it does not.
fn valid(root: &Value, schema: &Value, value: &Value, at: &str) -> Result<(), String> {
    let fail = |why: String| Err(format!("{at}: {why}"));
    if let Some(reference) = schema["$ref"].as_str() {
        let name = reference.strip_prefix("#/$defs/").unwrap();
        return valid(root, &root["$defs"][name], value, at);
    }
    if let Some(kinds) = schema.get("type") {
        let kinds: Vec<&str> = match kinds {
            Value::String(one) => vec![one.as_str()],
            many => many
                .as_array()
                .unwrap()
                .iter()
                .map(|k| k.as_str().unwrap())
                .collect(),
        };
        let fits = |kind: &str| match kind {
            "integer" => value.is_u64() || value.is_i64(),
            "number" => value.is_number(),
            "string" => value.is_string(),
            "boolean" => value.is_boolean(),
            "array" => value.is_array(),
            "object" => value.is_object(),
            "null" => value.is_null(),
            other => panic!("type {other}"),
        };
        if !kinds.iter().any(|k| fits(k)) {
            return fail(format!("{value} is not {kinds:?}"));
        }
    }
    if let Some(options) = schema["enum"].as_array()
        && !options.contains(value)
    {
        return fail(format!("{value} is not one of {options:?}"));
    }
    if let Some(n) = value.as_f64() {
        if schema["minimum"].as_f64().is_some_and(|min| n < min) {
            return fail(format!("{n} is below the minimum"));
        }
        if schema["maximum"].as_f64().is_some_and(|max| n > max) {
            return fail(format!("{n} is above the maximum"));
        }
    }
    if let Some(text) = value.as_str() {
        valid_text(schema, text).or_else(fail)?;
    }
    if let Some(items) = value.as_array() {
        valid_items(root, schema, items, at)?;
    }
    if let Some(map) = value.as_object() {
        valid_object(root, schema, map, at)?;
    }
    if let Some(options) = schema["oneOf"].as_array() {
        let fitting = options
            .iter()
            .filter(|o| valid(root, o, value, at).is_ok())
            .count();
        if fitting != 1 {
            let reasons: Vec<String> = options
                .iter()
                .filter_map(|o| valid(root, o, value, at).err())
                .collect();
            return fail(format!(
                "fits {fitting} of the {} choices, not one ({reasons:?})",
                options.len()
            ));
        }
    }
    Ok(())
}

fn valid_text(schema: &Value, text: &str) -> Result<(), String> {
    let chars = text.chars().count() as u64;
    if schema["minLength"].as_u64().is_some_and(|min| chars < min) {
        return Err(format!("{text:?} is too short"));
    }
    if schema["maxLength"].as_u64().is_some_and(|max| chars > max) {
        return Err(format!("{text:?} is too long"));
    }
    if let Some(pattern) = schema["pattern"].as_str()
        && !regex::Regex::new(pattern).unwrap().is_match(text)
    {
        return Err(format!("{text:?} does not match {pattern}"));
    }
    Ok(())
}

fn valid_items(root: &Value, schema: &Value, items: &[Value], at: &str) -> Result<(), String> {
    if schema["minItems"]
        .as_u64()
        .is_some_and(|min| (items.len() as u64) < min)
    {
        return Err(format!("{at}: too few items"));
    }
    let first = schema["prefixItems"]
        .as_array()
        .map_or(&[][..], Vec::as_slice);
    for (i, item) in items.iter().enumerate() {
        let at = format!("{at}[{i}]");
        if let Some(prefix) = first.get(i) {
            valid(root, prefix, item, &at)?;
        }
        if let Some(each) = schema.get("items") {
            valid(root, each, item, &at)?;
        }
    }
    Ok(())
}

fn valid_object(
    root: &Value,
    schema: &Value,
    map: &serde_json::Map<String, Value>,
    at: &str,
) -> Result<(), String> {
    for key in schema["required"].as_array().into_iter().flatten() {
        if !map.contains_key(key.as_str().unwrap()) {
            return Err(format!("{at}: {key} is required"));
        }
    }
    for (key, item) in map {
        let at = format!("{at}.{key}");
        if let Some(names) = schema.get("propertyNames") {
            valid(root, names, &Value::String(key.clone()), &at)?;
        }
        match (
            schema["properties"].get(key),
            schema.get("additionalProperties"),
        ) {
            (Some(property), _) => valid(root, property, item, &at)?,
            (None, Some(Value::Bool(false))) => return Err(format!("{at}: not allowed")),
            (None, Some(other)) => valid(root, other, item, &at)?,
            (None, None) => {}
        }
    }
    Ok(())
}

fn workflow_fits(value: &Value) -> Result<(), String> {
    let schema = pagent::schemas::workflow();
    valid(&schema, &schema, value, "workflow")
}

fn config_fits(value: &Value) -> Result<(), String> {
    let schema = pagent::schemas::config();
    valid(&schema, &schema, value, "config")
}

fn parser_takes_workflow(value: &Value) -> bool {
    pagent_engine::Workflow::from_json(value, "example").is_ok()
}

fn parser_takes_config(value: &Value) -> bool {
    pagent::schemas::check_config(value.to_string().as_bytes()).is_ok()
}

#[test]
fn the_builtin_workflow_and_every_example_in_the_docs_fit_the_schemas() {
    let builtin = repo().join("crates/engine/builtin/workflows/prd-to-code.json");
    let builtin: Value = serde_json::from_str(&std::fs::read_to_string(builtin).unwrap()).unwrap();
    workflow_fits(&builtin).unwrap();
    let (mut workflows, mut conditions, mut configs) = (0, 0, 0);
    for doc in documents() {
        // The conditions written inline (the exit-conditions table).
        for span in read(&doc).split('`').skip(1).step_by(2) {
            let Ok(value) = serde_json::from_str::<Value>(span) else {
                continue;
            };
            if value.is_object() && parser_takes_workflow(&with_condition(value.clone())) {
                conditions += 1;
                workflow_fits(&with_condition(value.clone()))
                    .unwrap_or_else(|e| panic!("{}: {span}: {e}", doc.display()));
            }
        }
        for fence in fences(&doc, &read(&doc))
            .into_iter()
            .filter(|f| f.lang() == "json")
        {
            let Ok(value) = serde_json::from_str::<Value>(&fence.body) else {
                continue;
            };
            let Some(map) = value.as_object() else {
                continue;
            };
            if map.contains_key("stages") && parser_takes_workflow(&value) {
                workflows += 1;
                workflow_fits(&value).unwrap_or_else(|e| panic!("{}: {e}", fence.place()));
            } else if parser_takes_workflow(&with_condition(value.clone())) {
                conditions += 1;
                workflow_fits(&with_condition(value.clone()))
                    .unwrap_or_else(|e| panic!("{}: {e}", fence.place()));
            } else if !map.is_empty()
                && map.keys().all(|k| {
                    ["backpressure", "prices", "notify", "logs", "loop"].contains(&k.as_str())
                })
            {
                configs += 1;
                assert!(
                    parser_takes_config(&value),
                    "{}: pagent refuses this config",
                    fence.place()
                );
                config_fits(&value).unwrap_or_else(|e| panic!("{}: {e}", fence.place()));
            }
        }
    }
    assert!(
        workflows >= 1 && conditions >= 3 && configs >= 3,
        "found {workflows} workflows, {conditions} conditions and {configs} configs in the docs"
    );
}

/// A workflow with one stage ending on `condition`.
fn with_condition(condition: Value) -> Value {
    json!({"stages": [{"name": "s", "prompt": "go", "exit_when": condition}]})
}

#[test]
fn the_workflow_schema_and_the_parser_take_and_refuse_the_same_documents() {
    let sha = "0123456789abcdef0123456789abcdef01234567";
    let taken = [
        json!({"name": "w", "description": "d", "max_iterations": 5, "no_progress_limit": 0, "max_duration": "8h", "max_tokens": 5000000, "max_cost": "$20",
               "backpressure": {"gate": false, "checks": {"py": [{"command": ["ruff", "{file}"], "timeout": 30}], "json": true, "md": false}},
               "stages": [{"name": "a", "prompt_file": "a.md", "exit_when": {"file_exists": "a.md", "min_lines": 3}, "max_iterations": 2}]}),
        with_condition(json!({"directory_exists": "src", "min_files": 2})),
        with_condition(json!({"all_files_exist": ["a", "b"], "min_lines": 1})),
        with_condition(json!({"promise_in_output": "DONE"})),
        with_condition(json!({"stories_pass": "prd.json", "format": "kiro"})),
        with_condition(json!({"custom": "make test", "timeout": 60})),
        with_condition(json!({"command": ["cargo", "test"], "timeout": 3600})),
        with_condition(json!({"review": "has tests", "reviewer": "codex", "timeout": 10})),
        with_condition(
            json!({"review": "has tests", "reviewer_command": "my-reviewer", "timeout": 480}),
        ),
        with_condition(json!({"merge_committed": sha, "keeping": sha, "name": "main"})),
        with_condition(
            json!({"all": [{"review": "ok"}, {"any": [{"file_exists": "a"}, {"command": ["true"]}]}]}),
        ),
    ];
    for document in &taken {
        assert!(
            parser_takes_workflow(document),
            "the parser refuses {document}"
        );
        workflow_fits(document).unwrap_or_else(|e| panic!("the schema refuses {document}: {e}"));
    }
    let refused = [
        json!({"stages": [{"name": "s", "prompt": "go", "exit_when": {"promise_in_output": "DONE"}}], "exit_wen": 1}),
        json!({"stages": [{"name": "s", "prompt": "go", "prompt_file": "a.md", "exit_when": {"promise_in_output": "DONE"}}]}),
        json!({"stages": [{"name": "s", "exit_when": {"promise_in_output": "DONE"}}]}),
        json!({"stages": [{"name": "bad name", "prompt": "go", "exit_when": {"promise_in_output": "DONE"}}]}),
        json!({"stages": []}),
        json!({"max_iterations": 0, "stages": [{"name": "s", "prompt": "go", "exit_when": {"promise_in_output": "DONE"}}]}),
        json!({"backpressure": {"always": true}, "stages": [{"name": "s", "prompt": "go", "exit_when": {"promise_in_output": "DONE"}}]}),
        json!({"backpressure": {"checks": {"py": [{"builtin": "json", "command": ["x"]}]}}, "stages": [{"name": "s", "prompt": "go", "exit_when": {"promise_in_output": "DONE"}}]}),
        with_condition(json!({"file_exists": "a", "promise_in_output": "DONE"})),
        with_condition(json!({"file_exist": "a"})),
        with_condition(json!({"file_exists": "a", "min_files": 2})),
        with_condition(json!({"promise_in_output": "<DONE>"})),
        with_condition(json!({"stories_pass": "prd.json", "format": "yaml"})),
        with_condition(json!({"command": []})),
        with_condition(json!({"custom": "make", "timeout": 0})),
        with_condition(json!({"review": "ok", "timeout": 5})),
        with_condition(json!({"review": "ok", "reviewer": "gpt"})),
        with_condition(json!({"all": []})),
    ];
    for document in &refused {
        assert!(
            !parser_takes_workflow(document),
            "the parser takes {document}"
        );
        assert!(
            workflow_fits(document).is_err(),
            "the schema takes {document}"
        );
    }
}

#[test]
fn the_config_schema_and_the_parser_take_and_refuse_the_same_documents() {
    let taken = [
        json!({}),
        json!({"backpressure": {"always": true, "gate": true, "checks": {"py": [{"name": "types", "command": ["mypy", "{file}"], "enabled": false, "fail_on_output": true, "requires": "cargo_project"}], "toml": [{"builtin": "toml"}]}},
               "prices": {"claude-sonnet-4": {"input": 3, "output": 15, "cache_read": 0.3, "cache_write": 3.75}},
               "notify": {"desktop": true, "command": ["my-notifier", "{message}"], "timeout": 20},
               "logs": {"max_mb": 64},
               "loop": {"iteration_timeout": 2700, "idle_timeout": 1, "retries": 0, "retry_delay": 300, "outage_wait": 0, "limit_wait": 604_800, "limit_margin": 86_400}}),
    ];
    for document in &taken {
        assert!(
            parser_takes_config(document),
            "the parser refuses {document}"
        );
        config_fits(document).unwrap_or_else(|e| panic!("the schema refuses {document}: {e}"));
    }
    let refused = [
        json!({"backpresure": {}}),
        json!({"prices": {"m": {"input": 3}}}),
        json!({"prices": {"m": {"input": -1, "output": 2}}}),
        json!({"prices": {"m": {"input": 1, "output": 200000}}}),
        json!({"prices": {"m": {"input": 1, "output": 2, "cached": 1}}}),
        json!({"notify": {"command": []}}),
        json!({"notify": {"command": [" "]}}),
        json!({"notify": {"sound": true}}),
        json!({"backpressure": {"checks": {".py": true}}}),
        json!({"backpressure": {"checks": {"py": [{"name": "x"}]}}}),
        json!({"backpressure": {"checks": {"py": [{"builtin": "xml"}]}}}),
        json!({"backpressure": {"checks": {"py": [{"command": ["x"], "timeout": 0}]}}}),
        json!({"logs": {"max_mb": 0}}),
        json!({"logs": {"max_gb": 1}}),
        json!({"loop": {"retry_wait": 5}}),
        json!({"loop": {"retries": 21}}),
        json!({"loop": {"idle_timeout": 0}}),
        json!({"loop": {"retry_delay": 301}}),
        json!({"loop": {"outage_wait": 604_801}}),
        json!({"loop": {"limit_margin": -1}}),
        json!({"loop": {"limit_wait": "30m"}}),
    ];
    for document in &refused {
        assert!(
            !parser_takes_config(document),
            "the parser takes {document}"
        );
        assert!(
            config_fits(document).is_err(),
            "the schema takes {document}"
        );
    }
}

/// Issue 31, item 4: the `loop` section written out with every default, as the schema
/// states them, is one the schema and pagent both take, and the defaults are the ones a
/// loop runs with when the config says nothing.
#[test]
fn issue_31_the_config_schema_validates_the_loop_defaults() {
    let schema = pagent::schemas::config();
    let defaults: serde_json::Map<String, Value> = schema["properties"]["loop"]["properties"]
        .as_object()
        .unwrap()
        .iter()
        .map(|(key, knob)| (key.clone(), knob["default"].clone()))
        .collect();
    assert_eq!(defaults.len(), 7, "{defaults:?}");
    let document = json!({ "loop": defaults });
    config_fits(&document).unwrap();
    assert!(parser_takes_config(&document), "pagent refuses {document}");
    assert_eq!(
        pagent::schemas::tuning_of(&document),
        pagent::schemas::tuning_of(&json!({})),
        "the schema's defaults are not the ones a loop runs with"
    );
}

#[test]
fn the_docs_point_to_the_schemas() {
    for (doc, schema) in [
        ("docs/workflows.md", "schemas/workflow.schema.json"),
        ("docs/backpressure.md", "schemas/config.schema.json"),
        ("docs/unattended.md", "schemas/config.schema.json"),
    ] {
        assert!(
            read(Path::new(doc)).contains(schema),
            "{doc} does not link {schema}"
        );
    }
}

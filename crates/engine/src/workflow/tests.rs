//! Workflow validation: the built-in workflow parses, every error names its field, and
//! what a workflow may not do (turn checks on outside a loop, blank prompts, odd names).

use serde_json::json;

use super::*;

const BUILT_IN: &str = crate::prompt::templates::PRD_TO_CODE;

#[test]
fn the_built_in_workflow_is_valid() {
    let value: Value = serde_json::from_str(BUILT_IN).unwrap();
    let workflow = Workflow::from_json(&value, "x").unwrap();
    assert_eq!(workflow.name, "prd-to-code");
    let names: Vec<&str> = workflow.stages.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        names,
        ["architect", "qa", "security", "implementer", "verifier"]
    );
    assert_eq!(workflow.stages[4].exit_when.promise(), Some("DONE"));
}

/// Regression (fuzz target `workflow`): an empty key produced an error with an empty
/// field name.
#[test]
fn an_empty_or_odd_key_is_named_in_the_error() {
    for (key, field) in [("", "\"\""), ("a b", "\"a b\""), ("x.y", "\"x.y\"")] {
        let mut value = json!({"stages": [{"name": "a", "prompt": "p", "exit_when": {"promise_in_output": "X"}}]});
        value[key] = json!(3);
        let err = Workflow::from_json(&value, "w").unwrap_err();
        assert_eq!(err.field, field);
        assert!(
            err.to_string()
                .starts_with(&format!("{field}: unknown field")),
            "{err}"
        );
    }
}

#[test]
fn errors_name_the_field() {
    let stage = json!({"name": "a", "prompt": "p", "exit_when": {"promise_in_output": "X"}});
    let cases = [
        (json!([]), "(top level)"),
        (json!({"stages": []}), "stages"),
        (
            json!({"stages": [stage], "max_iteration": 3}),
            "max_iteration",
        ),
        (
            json!({"stages": [stage], "max_iterations": 0}),
            "max_iterations",
        ),
        (
            json!({"stages": [stage], "max_iterations": 100000}),
            "max_iterations",
        ),
        (json!({"stages": [stage, stage]}), "stages[1].name"),
        (
            json!({"stages": [{"name": "a b", "prompt": "p", "exit_when": {"promise_in_output": "X"}}]}),
            "stages[0].name",
        ),
        (
            json!({"stages": [{"name": "a", "exit_when": {"promise_in_output": "X"}}]}),
            "stages[0].prompt",
        ),
        (
            json!({"stages": [{"name": "a", "prompt": "p"}]}),
            "stages[0].exit_when",
        ),
        (
            json!({"stages": [{"name": "a", "prompt": "p", "exit_wen": {}}]}),
            "stages[0].exit_wen",
        ),
        (
            json!({"stages": [{"name": "a", "prompt": "p", "exit_when": {"magic": true}}]}),
            "stages[0].exit_when",
        ),
        (
            json!({"stages": [{"name": "a", "prompt": "p", "prompt_file": "f", "exit_when": {"promise_in_output": "X"}}]}),
            "stages[0]",
        ),
    ];
    for (value, field) in cases {
        let err = Workflow::from_json(&value, "w").unwrap_err();
        assert_eq!(err.field, field, "{value}: {err}");
    }
}

fn stage(name: &str) -> Value {
    json!({"name": name, "prompt": "p", "exit_when": {"promise_in_output": "X"}})
}

#[test]
fn every_field_is_read() {
    let workflow = Workflow::from_json(
        &json!({
            "description": "two stages",
            "max_iterations": 1000,
            "no_progress_limit": 0,
            "backpressure": {"gate": false},
            "stages": [
                {"name": "plan", "prompt_file": "plan.md", "exit_when": {"file_exists": "plan.md"}, "max_iterations": 1},
                {"name": "build", "prompt": "Build it.", "exit_when": {"promise_in_output": "X"}}
            ]
        }),
        "from-file",
    )
    .unwrap();
    assert_eq!(workflow.name, "from-file");
    assert_eq!(workflow.description.as_deref(), Some("two stages"));
    assert_eq!(workflow.max_iterations, Some(1000));
    assert_eq!(workflow.no_progress_limit, Some(0), "0 turns the check off");
    assert!(!workflow.backpressure.unwrap().gate);
    assert_eq!(
        workflow.stages[0].prompt,
        PromptSource::File("plan.md".into())
    );
    assert_eq!(workflow.stages[0].max_iterations, Some(1));
    assert_eq!(
        workflow.stages[1].prompt,
        PromptSource::Inline("Build it.".into())
    );
    assert_eq!(workflow.stages[1].max_iterations, None);
    let null = Workflow::from_json(&json!({"backpressure": null, "stages": [stage("a")]}), "w");
    assert_eq!(null.unwrap().backpressure, None);
}

/// Consent is asked for every command a workflow may run: its conditions', stage by
/// stage, and its backpressure checks'.
#[test]
fn commands_lists_conditions_and_checks() {
    let workflow = Workflow::from_json(
        &json!({
            "backpressure": {"checks": {"py": [{"command": ["mypy", "{file}"]}]}},
            "stages": [
                {"name": "plan", "prompt": "p", "exit_when": {"file_exists": "plan.md"}},
                {"name": "build", "prompt": "p", "exit_when": {"all": [{"command": ["cargo", "test"]}, {"custom": "make lint"}]}}
            ]
        }),
        "w",
    )
    .unwrap();
    assert_eq!(
        workflow.commands(),
        [
            "stage build: cargo test",
            "stage build: make lint",
            ".py files: mypy {file}"
        ]
    );
}

/// A blank prompt would loop the model on nothing; whitespace is blank.
#[test]
fn whitespace_only_prompts_are_refused() {
    for prompt in [
        json!({"prompt": " \n\t"}),
        json!({"prompt_file": "  "}),
        json!({"prompt": ""}),
    ] {
        let mut value = json!({"name": "a", "exit_when": {"promise_in_output": "X"}});
        for (k, v) in prompt.as_object().unwrap() {
            value[k] = v.clone();
        }
        let err = Workflow::from_json(&json!({"stages": [value]}), "w").unwrap_err();
        assert_eq!(err.field, "stages[0].prompt", "{prompt}");
        assert!(err.reason.contains("non-empty"), "{err}");
    }
}

/// A workflow is project content: it may turn checks off, never on for sessions that run
/// no loop; a bad check names its place under `backpressure`.
#[test]
fn backpressure_may_not_reach_outside_the_loop() {
    for (value, field) in [
        (json!({"always": true}), "backpressure.always"),
        (json!({"checks": {".py": []}}), "backpressure.checks..py"),
        (json!({"checkz": {}}), "backpressure"),
    ] {
        let err = Workflow::from_json(&json!({"backpressure": value, "stages": [stage("a")]}), "w")
            .unwrap_err();
        assert_eq!(err.field, field, "{value}: {err}");
    }
}

/// Names become file names: 1-64 of letters, digits, `-`, `_`, not starting with `-`.
#[test]
fn names_are_checked_at_their_edges() {
    let named = |name: &str| Workflow::from_json(&json!({"stages": [stage(name)]}), "w");
    for ok in ["a", "A-b_9", &"x".repeat(64)] {
        assert!(named(ok).is_ok(), "{ok}");
    }
    for bad in ["", "-a", &"x".repeat(65), "a/b", "a.b", "é", "a b"] {
        let err = named(bad).unwrap_err();
        assert_eq!(err.field, "stages[0].name", "{bad:?}");
        assert!(err.reason.contains("must be 1-64"), "{err}");
    }
    assert_eq!(
        Workflow::from_json(&json!({"name": "-x", "stages": [stage("a")]}), "w")
            .unwrap_err()
            .field,
        "name"
    );
}

#[test]
fn budgets_and_strings_are_checked() {
    for (value, field) in [
        (json!({"no_progress_limit": 1001}), "no_progress_limit"),
        (json!({"no_progress_limit": -1}), "no_progress_limit"),
        (json!({"max_iterations": "5"}), "max_iterations"),
        (
            json!({"max_iterations": 4_294_967_297u64}),
            "max_iterations",
        ),
        (json!({"description": 3}), "description"),
        (json!({"name": 3}), "name"),
    ] {
        let mut doc = value.clone();
        doc["stages"] = json!([stage("a")]);
        let err = Workflow::from_json(&doc, "w").unwrap_err();
        assert_eq!(err.field, field, "{value}: {err}");
    }
    let stage_budget = json!({"stages": [{"name": "a", "prompt": "p", "exit_when": {"promise_in_output": "X"}, "max_iterations": 0}]});
    assert_eq!(
        Workflow::from_json(&stage_budget, "w").unwrap_err().field,
        "stages[0].max_iterations"
    );
    assert_eq!(
        Workflow::from_json(&json!({"stages": ["a"]}), "w")
            .unwrap_err()
            .field,
        "stages[0]"
    );
    assert_eq!(
        Workflow::from_json(&json!({"stages": {}}), "w")
            .unwrap_err()
            .field,
        "stages"
    );
}

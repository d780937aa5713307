//! Unit tests of conditions: every documented form round-trips, an invalid one names its
//! field and what was wrong, and an evaluation says what is still missing.

use serde_json::json;

use super::*;
use crate::testing::MemoryWorld;
use crate::world::CheckOutcome;

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
        json!({"command": ["x"], "timeout": 3600}),
        json!({"stories_pass": "prd.json"}),
        json!({"all": [{"file_exists": "a", "min_lines": 0}, {"any": [{"promise_in_output": "X"}, {"command": ["true"], "timeout": 5}]}]}),
    ] {
        let condition = parse(value.clone()).unwrap();
        assert_eq!(condition.to_json(), value);
        assert_eq!(parse(condition.to_json()).unwrap(), condition);
    }
}

/// Each case: (the condition, the field its error names, words of the reason).
fn refused(cases: &[(serde_json::Value, &str, &str)]) {
    for (value, field, reason) in cases {
        let err = parse(value.clone()).unwrap_err();
        assert_eq!(err.field, *field, "{value}");
        assert!(err.reason.contains(reason), "{value}: {}", err.reason);
    }
}

#[test]
fn invalid_forms_name_the_field_and_the_reason() {
    refused(&[
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
    ]);
}

/// The same, for a promise's text, a command's words and a key of another form.
#[test]
fn invalid_texts_commands_and_keys_name_the_field_and_the_reason() {
    refused(&[
        // A promise is matched as `<promise>TEXT</promise>`: either bracket in TEXT
        // would let a quoted tag pass for a made promise.
        (
            json!({"promise_in_output": "a<b"}),
            "exit_when.promise_in_output",
            "may not contain < or >",
        ),
        (
            json!({"promise_in_output": "a>b"}),
            "exit_when.promise_in_output",
            "may not contain < or >",
        ),
        (
            json!({"promise_in_output": " \t "}),
            "exit_when.promise_in_output",
            "promise text",
        ),
        (json!({"custom": "  "}), "exit_when.custom", "command line"),
        (
            json!({"command": [""]}),
            "exit_when.command",
            "non-empty list",
        ),
        (
            json!({"command": ["cargo", 3]}),
            "exit_when.command",
            "non-empty list",
        ),
        (
            json!({"command": ["x"], "timeout": 3601}),
            "exit_when.timeout",
            "1 to 3600 seconds",
        ),
        (
            json!({"stories_pass": "prd.json", "min_lines": 1}),
            "exit_when.min_lines",
            "not a field",
        ),
        (
            json!({"directory_exists": "src", "min_lines": 1}),
            "exit_when.min_lines",
            "not a field",
        ),
        (
            json!({"all_files_exist": ["a"], "min_files": 1}),
            "exit_when.min_files",
            "not a field",
        ),
        (
            json!({"all_files_exist": "a"}),
            "exit_when.all_files_exist",
            "list of paths",
        ),
        (json!({"any": []}), "exit_when.any", "empty"),
        (json!({"all": {}}), "exit_when.all", "list of conditions"),
    ]);
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
        "architecture.md 12/50 lines, src/ 1+/1 files, test-plan.md missing"
    );
}

#[test]
fn any_holds_when_one_alternative_holds() {
    let mut world = MemoryWorld::default().file("b.md", 1).message("no promise");
    let condition = parse(
        json!({"any": [{"promise_in_output": "DONE"}, {"file_exists": "b.md", "min_lines": 1}]}),
    )
    .unwrap();
    assert!(condition.evaluate(&mut world).met);
    let condition =
        parse(json!({"any": [{"promise_in_output": "DONE"}, {"file_exists": "c.md"}]})).unwrap();
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

#[test]
fn all_files_exist_holds_only_when_every_file_does() {
    let condition =
        parse(json!({"all_files_exist": ["a.md", "b.md", "c.md"], "min_lines": 2})).unwrap();
    for (world, met) in [
        (
            MemoryWorld::default()
                .file("a.md", 5)
                .file("b.md", 5)
                .file("c.md", 5),
            true,
        ),
        // Partly present: one missing, or one too short, is not met.
        (
            MemoryWorld::default().file("a.md", 5).file("c.md", 5),
            false,
        ),
        (
            MemoryWorld::default()
                .file("a.md", 5)
                .file("b.md", 1)
                .file("c.md", 5),
            false,
        ),
        (MemoryWorld::default().file("b.md", 5), false),
        (MemoryWorld::default(), false),
    ] {
        let mut world = world;
        let evaluation = condition.evaluate(&mut world);
        assert_eq!(evaluation.met, met, "{evaluation:?}");
        assert_eq!(evaluation.findings.len(), 3, "every file is reported");
    }
}

mod evaluation;
mod itself;

#[test]
fn omitted_fields_take_their_defaults() {
    for (short, full) in [
        (
            json!({"custom": "make check"}),
            json!({"custom": "make check", "timeout": 120}),
        ),
        (
            json!({"file_exists": "a.md"}),
            json!({"file_exists": "a.md", "min_lines": 0}),
        ),
        (
            json!({"directory_exists": "src"}),
            json!({"directory_exists": "src", "min_files": 0}),
        ),
        (
            json!({"promise_in_output": "  ALL DONE "}),
            json!({"promise_in_output": "ALL DONE"}),
        ),
    ] {
        assert_eq!(parse(short.clone()).unwrap().to_json(), full, "{short}");
    }
}

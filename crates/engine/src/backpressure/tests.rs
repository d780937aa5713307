//! Backpressure policy tests: the defaults per extension, how a configured entry replaces
//! or turns them off, which configurations are refused, and feedback that lists only the
//! failures and stays short.

use serde_json::json;

use super::*;

fn config(value: serde_json::Value) -> BackpressureConfig {
    serde_json::from_value(value).unwrap()
}

#[test]
fn defaults_cover_the_documented_extensions() {
    let labels = |ext: &str| {
        BackpressureConfig::default()
            .checks_for(ext)
            .iter()
            .map(CheckSpec::label)
            .collect::<Vec<_>>()
    };
    assert_eq!(labels("json"), ["JSON syntax"]);
    assert_eq!(labels("IPYNB"), ["JSON syntax"]);
    assert_eq!(labels("toml"), ["TOML syntax"]);
    assert_eq!(labels("yml"), ["YAML syntax"]);
    assert_eq!(labels("py"), ["python3 -m py_compile"]);
    assert_eq!(labels("sh"), ["bash -n", "shellcheck -f gcc"]);
    assert_eq!(labels("ts"), ["tsc --noEmit --pretty false"]);
    assert_eq!(labels("rs"), ["cargo check --quiet --message-format short"]);
    assert_eq!(labels("go"), ["gofmt -l", "go vet ."]);
    assert!(labels("md").is_empty());
}

#[test]
fn an_extension_entry_replaces_or_disables_the_defaults() {
    let c = config(json!({"checks": {
        "py": [{"name": "mypy", "command": ["mypy", "{file}"], "timeout": 60}],
        "json": false,
        "sh": [{"command": ["bash", "-n", "{file}"]}, {"command": ["shellcheck", "{file}"], "enabled": false}],
        "toml": true
    }}));
    assert!(c.validate().is_ok());
    assert_eq!(
        c.checks_for("py")
            .iter()
            .map(CheckSpec::label)
            .collect::<Vec<_>>(),
        ["mypy"]
    );
    assert_eq!(c.checks_for("py")[0].timeout_secs(), 60);
    assert!(c.checks_for("json").is_empty());
    assert_eq!(c.checks_for("sh").len(), 1);
    assert_eq!(c.checks_for("toml"), default_checks("toml"));
}

/// A check runs a builtin or a command, never both, never neither: refused as it is read,
/// saying which check (issue 12: `CheckSpec` is an enum, not two optional keys).
#[test]
fn a_check_names_a_builtin_or_a_command_exactly() {
    for (value, said) in [
        (
            json!({"checks": {"py": [{}]}}),
            "check [0]: the check gives neither",
        ),
        (
            json!({"checks": {"py": [{"command": ["ok"]}, {"builtin": "json", "command": ["x"]}]}}),
            "check [1]: the check running `x` also names a \"builtin\"",
        ),
        (
            json!({"checks": {"py": "yes"}}),
            "true, false or a list of checks",
        ),
    ] {
        let err = serde_json::from_value::<BackpressureConfig>(value.clone()).unwrap_err();
        assert!(err.to_string().contains(said), "{value}: {err}");
    }
    let spec = |value| serde_json::from_value::<CheckSpec>(value).unwrap();
    assert_eq!(
        spec(json!({"builtin": "toml"})).run,
        CheckRun::Builtin(Syntax::Toml)
    );
    let command = spec(json!({"command": ["mypy", "{file}"], "timeout": 60}));
    assert_eq!(
        command.run,
        CheckRun::Command(vec!["mypy".into(), "{file}".into()])
    );
    // Written back exactly as the file format has it (states seal it).
    assert_eq!(
        serde_json::to_value(&command).unwrap(),
        json!({"command": ["mypy", "{file}"], "timeout": 60})
    );
}

#[test]
fn invalid_configs_are_refused() {
    assert!(serde_json::from_value::<BackpressureConfig>(json!({"checkz": {}})).is_err());
    assert!(
        serde_json::from_value::<BackpressureConfig>(
            json!({"checks": {"py": [{"comand": ["x"]}]}})
        )
        .is_err()
    );
    for (value, field) in [
        (json!({"checks": {".py": []}}), "checks..py"),
        (
            json!({"checks": {"py": [{"command": []}]}}),
            "checks.py[0].command",
        ),
        (
            json!({"checks": {"py": [{"command": ["x"], "timeout": 0}]}}),
            "checks.py[0].timeout",
        ),
    ] {
        let err = config(value.clone()).validate().unwrap_err();
        assert_eq!(err.field, field, "{value}: {err}");
    }
}

#[test]
fn feedback_lists_failures_only_and_stays_short() {
    let results = vec![
        (
            "JSON syntax".to_owned(),
            CheckResult::Failed("line 3, column 5: expected value".into()),
        ),
        (
            "shellcheck".to_owned(),
            CheckResult::Skipped("not installed".into()),
        ),
        (
            "slow".to_owned(),
            CheckResult::TimedOut {
                after_secs: 5,
                output: String::new(),
            },
        ),
        ("big".to_owned(), CheckResult::Failed("e\n".repeat(10_000))),
    ];
    let text = render_feedback("a.json", &results).unwrap();
    assert!(text.starts_with("pagent checked a.json after your edit and found problems"));
    assert!(text.contains("JSON syntax failed:\nline 3, column 5: expected value"));
    assert!(
        text.contains("slow did not finish within 5 s and was stopped, so a.json is unchecked")
    );
    assert!(!text.contains("shellcheck"));
    assert!(text.chars().count() <= CONTEXT_CAP + 100);
    assert_eq!(
        render_feedback("a.json", &[("x".into(), CheckResult::Passed)]),
        None
    );
}

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

/// Consent lists every command a configuration would run, and only those: a disabled
/// check, a built-in parser and an extension switched off run nothing.
#[test]
fn commands_lists_what_consent_must_cover() {
    let c = config(json!({"checks": {
        "py": [
            {"command": ["mypy", "--strict", "{file}"]},
            {"command": ["ruff", "{file}"], "enabled": false},
            {"builtin": "json"}
        ],
        "sh": [{"command": ["shellcheck", "{file}"]}],
        "json": false,
        "toml": true
    }}));
    assert_eq!(
        c.commands(),
        [
            ".py files: mypy --strict {file}",
            ".sh files: shellcheck {file}"
        ]
    );
    assert!(BackpressureConfig::default().commands().is_empty());
}

/// A workflow's checks over the project's: its extensions replace the project's, the
/// others stay; `always` can only be turned on and the gate only turned off.
#[test]
fn an_overlay_replaces_extensions_and_only_loosens_nothing() {
    let project = config(json!({"always": true, "checks": {
        "py": [{"command": ["mypy", "{file}"]}],
        "sh": false
    }}));
    let workflow = config(json!({"gate": false, "checks": {
        "py": [{"command": ["pyright", "{file}"]}]
    }}));
    let both = project.clone().overlaid(&workflow);
    assert!(both.always, "the project's `always` survives the workflow");
    assert!(
        !both.gate,
        "the workflow's `gate: false` survives the project"
    );
    assert_eq!(
        both.checks_for("py")
            .iter()
            .map(CheckSpec::label)
            .collect::<Vec<_>>(),
        ["pyright"]
    );
    assert!(both.checks_for("sh").is_empty());

    let reverse = workflow.overlaid(&project);
    assert!(reverse.always);
    assert!(!reverse.gate);
    assert_eq!(reverse.checks_for("py")[0].label(), "mypy");

    let plain = BackpressureConfig::default().overlaid(&BackpressureConfig::default());
    assert!(!plain.always);
    assert!(plain.gate);
}

#[test]
fn labels_name_the_check_without_placeholders() {
    let spec = |value: serde_json::Value| serde_json::from_value::<CheckSpec>(value).unwrap();
    assert_eq!(
        spec(json!({"name": "types", "command": ["mypy"]})).label(),
        "types"
    );
    assert_eq!(
        spec(json!({"command": ["mypy", "--strict", "{file}", "{dir}/x"]})).label(),
        "mypy --strict"
    );
    assert_eq!(spec(json!({"builtin": "yaml"})).label(), "YAML syntax");
    assert!(serde_json::from_value::<CheckSpec>(json!({})).is_err());
    assert_eq!(spec(json!({"command": ["x"]})).timeout_secs(), 30);
}

#[test]
fn timeouts_and_extensions_are_checked_at_their_edges() {
    let validate = |value: serde_json::Value| config(value).validate().map_err(|e| e.field);
    for ok in [
        json!({"checks": {"py": [{"command": ["x"], "timeout": 1}]}}),
        json!({"checks": {"py": [{"command": ["x"], "timeout": 3600}]}}),
        json!({"checks": {"py": [{"builtin": "json"}]}}),
    ] {
        assert_eq!(validate(ok.clone()), Ok(()), "{ok}");
    }
    for (bad, field) in [
        (
            json!({"checks": {"py": [{"command": ["x"], "timeout": 3601}]}}),
            "checks.py[0].timeout",
        ),
        (
            json!({"checks": {"py": [{"command": ["  "]}]}}),
            "checks.py[0].command",
        ),
        (json!({"checks": {"": []}}), "checks."),
        (json!({"checks": {"a/py": []}}), "checks.a/py"),
        (
            json!({"checks": {"py": [{"command": ["x"]}, {"command": ["y"], "timeout": 0}]}}),
            "checks.py[1].timeout",
        ),
    ] {
        assert_eq!(validate(bad.clone()), Err(field.to_owned()), "{bad}");
    }
}

/// A timed-out check's partial output is shown (capped); whitespace-only output is not.
#[test]
fn a_timeout_shows_what_the_check_printed() {
    let timed_out = |output: &str| {
        render_feedback(
            "a.py",
            &[(
                "mypy".to_owned(),
                CheckResult::TimedOut {
                    after_secs: 60,
                    output: output.to_owned(),
                },
            )],
        )
        .unwrap()
    };
    let text = timed_out("a.py:1: error: x\n");
    assert!(
        text.ends_with("mypy did not finish within 60 s and was stopped, so a.py is unchecked:\na.py:1: error: x"),
        "{text}"
    );
    let text = timed_out(" \n\t");
    assert!(text.ends_with("so a.py is unchecked"), "{text}");
    let text = timed_out(&"e".repeat(10_000));
    assert!(
        text.chars().count() < CHECK_OUTPUT_CAP + 300,
        "{}",
        text.len()
    );
}

/// One failure's output is cut at its cap, and the whole text at the context cap even
/// when many checks fail.
#[test]
fn feedback_caps_each_output_and_the_whole() {
    let one = render_feedback(
        "a.rs",
        &[("big".to_owned(), CheckResult::Failed("e".repeat(10_000)))],
    )
    .unwrap();
    let head = one.chars().count();
    assert!(
        (CHECK_OUTPUT_CAP..CHECK_OUTPUT_CAP + 200).contains(&head),
        "{head}"
    );
    let many: Vec<_> = (0..20)
        .map(|i| (format!("c{i}"), CheckResult::Failed("e".repeat(2_000))))
        .collect();
    let all = render_feedback("a.rs", &many).unwrap();
    let marker = "\n[... more problems cut ...]";
    assert!(all.ends_with(marker), "{all}");
    assert_eq!(all.chars().count(), CONTEXT_CAP + marker.chars().count());
}

/// The binary isolates pagent's own default checks, not what someone configured.
#[test]
fn only_the_defaults_count_as_built_in() {
    let py = BackpressureConfig::default().checks_for("py");
    assert!(py.iter().all(|c| c.is_builtin_default("py")));
    assert!(py.iter().all(|c| c.is_builtin_default("PY")));
    assert!(!py[0].is_builtin_default("sh"));
    let configured =
        config(json!({"checks": {"py": [{"command": ["python3", "-m", "mypy", "{file}"]}]}}));
    assert!(!configured.checks_for("py")[0].is_builtin_default("py"));
}

/// Finding 8: a project could switch the gate off without any command to trust; turning
/// the gate off is now something consent lists, so set-up asks for trust first.
#[test]
fn finding_8_turning_the_gate_off_is_listed_for_consent() {
    let off = config(json!({"gate": false}));
    assert_eq!(off.commands(), [crate::backpressure::GATE_OFF]);
    assert!(config(json!({"gate": true})).commands().is_empty());
}

use serde_json::{Value, json};

use super::*;

fn plan() -> Value {
    json!({
        "version": 1,
        "team": "night",
        "branch": "main",
        "created_at": "2026-11-27T01:00:00Z",
        "created_by": "laptop",
        "lease_secs": 300,
        "plan_file": {"path": "docs/prd.json", "format": "prd-json"},
        "stories": [
            {"name": "US-001", "id": "US-001", "task": "Do one", "after": []},
            {"name": "US-002", "id": "US-002", "task": "Do two", "after": ["US-001"]}
        ],
        "agent": {"kind": "claude", "permission_mode": "acceptEdits", "iteration_timeout_secs": 1800,
                  "idle_timeout_secs": 600, "retries": 3, "retry_delay_secs": 5,
                  "limit_wait_secs": 1800, "limit_margin_secs": 60},
        "max_iterations": 25,
        "checks": ["cargo test"],
        "some_future_field": {"ignored": true}
    })
}

fn validated(value: &Value) -> Result<TeamPlan, String> {
    let plan: TeamPlan = decode(value.to_string().as_bytes(), MAX_PLAN_BYTES)?;
    plan.validate("night").map(|()| plan)
}

#[test]
fn a_plan_from_the_remote_is_used_only_once_every_field_is_checked() {
    let good = validated(&plan()).unwrap();
    assert_eq!(good.commands(), ["check: cargo test"]);
    let cases: Vec<(&str, Value)> = vec![
        ("/stories/0/name", json!("../../etc")),
        ("/stories/0/name", json!("a/b")),
        ("/stories/0/name", json!("-rf")),
        ("/stories/1/after", json!(["US-404"])),
        ("/stories/0/after", json!(["US-002"])),
        ("/team", json!("day")),
        ("/branch", json!("main..x")),
        ("/lease_secs", json!(0)),
        ("/plan_file/path", json!("../outside.json")),
        ("/plan_file/path", json!("/etc/passwd")),
        ("/plan_file/format", json!("word")),
        ("/agent/kind", json!("rm")),
        ("/agent/permission_mode", json!("bypass Permissions")),
        ("/max_iterations", json!(0)),
        ("/version", json!(2)),
        ("/stories/0/task", json!("x".repeat(MAX_TASK + 1))),
        ("/checks", json!(vec!["x"; MAX_CHECKS + 1])),
    ];
    for (pointer, bad) in cases {
        let mut value = plan();
        *value.pointer_mut(pointer).unwrap() = bad;
        assert!(validated(&value).is_err(), "{pointer} accepted");
    }
    let mut two = plan();
    two["stories"][1]["name"] = json!("US-001");
    assert!(validated(&two).unwrap_err().contains("two stories"));
}

#[test]
fn a_plans_commands_are_what_needs_consent() {
    let mut value = plan();
    value["agent"]["command"] = json!("sh run.sh");
    value["agent"]["args"] = json!(["--dangerously-skip-permissions"]);
    value["agent"]["permission_mode"] = json!("bypassPermissions");
    let plan = validated(&value).unwrap();
    assert_eq!(
        plan.commands(),
        [
            "check: cargo test",
            "agent command: sh run.sh",
            "agent arguments: --dangerously-skip-permissions",
            "agent permission mode: bypassPermissions",
        ]
    );
}

#[test]
fn a_deep_or_large_record_is_refused_without_a_crash() {
    let deep = format!("{}{}", "[".repeat(100_000), "]".repeat(100_000));
    assert!(decode::<Value>(deep.as_bytes(), 1 << 20).is_err());
    assert!(decode::<Value>(&vec![b' '; 2048], 1024).is_err());
    let state = TeamState::new("x", Timestamp(0));
    let plan = validated(&plan()).unwrap();
    let mut bad = state.clone();
    bad.landed.insert(
        "US-999".into(),
        Landed {
            commit: "0".repeat(40),
            worker: "w".into(),
            at: Timestamp(0),
            rejected: 0,
            not_ticked: None,
        },
    );
    assert!(bad.validate(&plan).is_err());
    assert!(state.validate(&plan).is_ok());
}

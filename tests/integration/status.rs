//! `pagent status` and `pagent log`, human and JSON.

use serde_json::{Value, json};

use crate::util::*;

fn snapshot_filters() -> Vec<(&'static str, &'static str)> {
    vec![
        (r"\b\d+s\b", "[ELAPSED]"),
        (r"\b\d+m\d\ds\b", "[ELAPSED]"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "[TIME]"),
        (r"\(\d+ ms\)", "([MS])"),
    ]
}

#[test]
fn status_shows_every_stage_with_its_progress() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    env.cmd(&["run", "prd.md"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.write_lines("architecture.md", 64);
    env.stop(&env.stop_input("done")).blocked();
    env.write_lines("test-plan.md", 12);
    env.stop(&env.stop_input("half")).blocked();

    let human = env.cmd(&["status"]).success().stdout;
    insta::with_settings!({filters => snapshot_filters()}, {
        insta::assert_snapshot!(human);
    });

    let status: Value =
        serde_json::from_str(&env.cmd(&["status", "--json"]).success().stdout).unwrap();
    assert_eq!(status["status"], "active");
    assert_eq!(status["stage"], "qa");
    assert_eq!(status["iterations"], 3);
    assert_eq!(status["sealed"], true);
    let stages: Vec<(&str, &str, &str)> = status["stages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| {
            (
                s["name"].as_str().unwrap(),
                s["state"].as_str().unwrap(),
                s["progress"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        stages,
        [
            ("architect", "done", "architecture.md 50/50 lines"),
            ("qa", "current", "test-plan.md 12/30 lines"),
            ("security", "waiting", "security-assessment.md missing"),
            ("implementer", "waiting", "src/ missing"),
            ("verifier", "waiting", "waiting for <promise>DONE</promise>"),
        ]
    );
}

#[test]
fn status_and_log_without_a_loop() {
    let env = TestEnv::new();
    assert!(env.cmd(&["status"]).success().stdout.contains("no loop in"));
    assert_eq!(
        env.cmd(&["status", "--json"]).success().stdout.trim(),
        "null"
    );
    assert!(
        env.cmd(&["log"])
            .success()
            .stdout
            .contains("the event log is empty")
    );
    assert_eq!(env.cmd(&["log", "--json"]).success().stdout, "");
}

#[test]
fn the_log_has_one_line_per_decision() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.stop(&env.stop_input("one")).blocked();
    let mut other = env.stop_input("x");
    other["session_id"] = json!("someone-else");
    env.stop(&other).allowed();
    env.stop(&env.stop_input("<promise>DONE</promise>"))
        .allowed();
    env.cmd(&["cancel"]).success();

    let lines: Vec<Value> = env
        .cmd(&["log", "--json"])
        .success()
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let actions: Vec<&str> = lines
        .iter()
        .map(|l| l["action"].as_str().unwrap())
        .collect();
    assert_eq!(actions, ["ralph", "block", "other_session", "complete"]);
    assert_eq!(lines[1]["iteration"], 2);
    assert!(lines[1]["ms"].is_u64());

    let human = env.cmd(&["log", "-n", "2"]).success().stdout;
    insta::with_settings!({filters => snapshot_filters()}, {
        insta::assert_snapshot!(human);
    });
}

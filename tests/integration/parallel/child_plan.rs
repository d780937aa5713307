//! Issue 31 item 2: `pagent parallel` hands each child loop its plan as data, a file in
//! the project's plans folder (`.claude/pagent/parallel/NAME.json`), not as flags the
//! child parses again; and a child takes that file only as its parent wrote it.

use std::fs;

use serde_json::{Value, json};

use super::*;

/// A fake `claude -p` that keeps its arguments (one per line) beside its control folder
/// and keeps the task's promise.
fn recording_claude(p: &Parallel) -> String {
    let ctl = p.ctl.display();
    p.env
        .fake_tool(
            "bin",
            "claude",
            &format!(
                "printf '%s\\n' \"$@\" > {ctl}/argv\n\
                 cat > /dev/null\n\
                 echo '{{\"type\":\"system\",\"subtype\":\"init\",\"session_id\":\"s\",\"model\":\"opus-test\"}}'\n\
                 echo '{{\"type\":\"result\",\"subtype\":\"success\",\"is_error\":false,\"num_turns\":1,\"result\":\"<promise>SHIPPED</promise>\",\"session_id\":\"s\",\"usage\":{{\"input_tokens\":5,\"output_tokens\":1}}}}'"
            ),
        )
        .join("claude")
        .display()
        .to_string()
}

/// Every option a child could get besides the agent's program: its model, permission
/// mode, budgets and limits, none of them the default.
const EVERY_OPTION: &[&str] = &[
    "--agent-arg=--model",
    "--agent-arg=opus-test",
    "--permission-mode",
    "plan",
    "--max-duration",
    "2h",
    "--max-tokens",
    "5000000",
    "--max-cost",
    "3.5",
    "--iteration-timeout",
    "90s",
    "--idle-timeout",
    "45s",
    "--retries",
    "1",
    "--retry-delay",
    "2s",
    "--limit-wait",
    "10m",
    "--limit-margin",
    "5s",
    "--outage-wait",
    "20m",
    "--no-limit-wait",
    "--no-checkpoint",
];

/// The plan file of a task run with [`EVERY_OPTION`] and `claude`.
fn every_option(claude: &str) -> Value {
    json!({
        "version": 1,
        "agent": {
            "agent": "claude",
            "command": null,
            "agent_bin": claude,
            "agent_args": ["--model", "opus-test"],
            "permission_mode": "plan",
            "iteration_timeout": 90,
            "idle_timeout": 45,
            "retries": 1,
            "retry_delay": 2,
            "outage_wait": 1200,
            "limit_wait": 600,
            "limit_margin": 5,
            "no_limit_wait": true,
            // Uncontained here (a contained claude agent needs Claude Code's sandbox):
            // the hosts it may reach are checked in setup::child_plan's tests.
            "sandbox": false,
            "allow_hosts": []
        },
        "budget": {
            "max_duration_secs": 7200,
            "max_tokens": 5_000_000,
            "max_cost_microusd": 3_500_000
        },
        "checkpoint": false,
        "start": {
            "task": "do alpha",
            "promise": "SHIPPED",
            "max_iterations": 7,
            "trust": false,
            "force": false
        }
    })
}

#[test]
fn issue_31_item_2_a_parallel_child_gets_every_option_from_its_plan_file() {
    let p = Parallel::new("");
    p.env.write(
        "tasks.json",
        r#"[{"name": "alpha", "task": "do alpha", "promise": "SHIPPED", "max_iterations": 7}]"#,
    );
    let claude = recording_claude(&p);
    let mut args = vec!["parallel", "tasks.json", "--json", "--agent-bin", &claude];
    args.extend(EVERY_OPTION);
    let out = p.env.cmd(&args).run();
    assert_eq!(out.code, Some(0), "{out}");
    let written: Value =
        serde_json::from_str(&p.env.read(".claude/pagent/parallel/alpha.json")).unwrap();
    assert_eq!(written, every_option(&claude));
    // The child ran the agent the plan names, with its model and permission mode, and
    // its loop has the plan's limits and promise.
    let argv = fs::read_to_string(p.ctl.join("argv")).unwrap();
    assert!(argv.contains("\n--model\nopus-test\n"), "{argv}");
    assert!(argv.contains("\n--permission-mode\nplan\n"), "{argv}");
    let state: Value = serde_json::from_str(
        &fs::read_to_string(p.worktree("alpha").join(".claude/pagent-pipeline.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(state["budget"], written["budget"], "{state}");
    assert_eq!(state["max_iterations"], 7, "{state}");
    assert_eq!(
        state["stages"][0]["exit_when"]["promise_in_output"], "SHIPPED",
        "{state}"
    );
    assert_eq!(state["status"], "complete", "{state}");
}

/// The file lies in the project: a plan changed after its parent wrote it (a hostile
/// repository, another task's agent), or one outside the plans folder, starts nothing.
#[test]
fn issue_31_item_2_a_child_takes_its_plan_only_as_its_parent_wrote_it() {
    let p = Parallel::new("");
    let plan = ".claude/pagent/parallel/alpha.json";
    p.env.write(
        plan,
        &json!({
            "version": 1,
            "agent": {"agent": "claude", "command": "touch pwned", "agent_bin": null,
                "agent_args": [], "permission_mode": "acceptEdits", "iteration_timeout": 60,
                "idle_timeout": 60, "retries": 0, "retry_delay": 1, "outage_wait": 1,
                "limit_wait": 1, "limit_margin": 1, "no_limit_wait": true, "sandbox": false},
            "budget": {},
            "checkpoint": false,
            "start": {"task": "t", "promise": "DONE", "max_iterations": 1, "trust": true,
                "force": true}
        })
        .to_string(),
    );
    let digest = "0".repeat(64);
    for (file, why) in [
        (plan, "changed after pagent parallel wrote it"),
        ("../alpha.json", "is not a file of .claude/pagent/parallel"),
        (
            ".claude/pagent/alpha.json",
            "is not a file of .claude/pagent/parallel",
        ),
    ] {
        let out = p
            .env
            .cmd(&[
                "loop",
                "--json",
                "--worktree",
                "alpha",
                "--child-plan",
                file,
                "--child-plan-sha256",
                &digest,
            ])
            .run();
        assert_eq!(out.code, Some(1), "{out}");
        assert!(
            out.stdout.contains(why) || out.stderr.contains(why),
            "{out}"
        );
        assert!(!p.env.root.join("pwned").exists());
        assert!(!p.worktree("alpha").exists(), "{out}");
    }
}

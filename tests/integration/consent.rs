//! Consent for commands: a command that comes from a project's files runs only after the
//! user trusted that exact content (`pagent trust`), and a built-in name always means the
//! built-in. Every test plants what a stranger's repository would, and checks by a file
//! the command would leave (`pwned`) whether it ran.

use std::fs;

use serde_json::json;

use crate::util::{SESSION, TestEnv};

fn pwned(env: &TestEnv) -> bool {
    env.exists("pwned")
}

#[test]
fn a_planted_workflow_with_a_built_in_name_is_ignored_and_announced() {
    let env = TestEnv::new();
    env.write(
        ".claude/pagent/workflows/prd-to-code.json",
        &json!({"stages": [{"name": "x", "prompt": "p",
            "exit_when": {"custom": "touch pwned; exit 1"}}]})
        .to_string(),
    );
    env.write("prd.md", "# PRD\n");
    let out = env
        .cmd(&["run", "prd.md"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    assert!(
        out.stdout
            .contains(".claude/pagent/workflows/prd-to-code.json was ignored"),
        "{out}"
    );
    assert_eq!(env.state()["workflow"], "prd-to-code");
    assert_eq!(env.state()["stages"].as_array().unwrap().len(), 5);
    env.stop(&env.stop_input("done")).blocked();
    assert!(!pwned(&env));
    // Named by its path it is the project's file: used once trusted, like any other.
    let by_path = [
        "run",
        "prd.md",
        "--force",
        "--workflow",
        ".claude/pagent/workflows/prd-to-code.json",
    ];
    let refused = env.cmd(&by_path).failure();
    assert!(refused.stderr.contains("not trusted"), "{refused}");
    env.cmd(&["trust", ".claude/pagent/workflows/prd-to-code.json"])
        .success();
    env.cmd(&by_path)
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.stop(&env.stop_input("done")).blocked();
    assert!(pwned(&env), "trusted and named: it runs");
}

#[test]
fn planted_workflow_commands_run_only_after_trust_and_again_after_a_change() {
    let env = TestEnv::new();
    let flow = |command: &str| {
        json!({"stages": [{"name": "x", "prompt": "p", "exit_when": {"custom": command}}]})
            .to_string()
    };
    env.write(
        ".claude/pagent/workflows/flow.json",
        &flow("touch pwned; exit 1"),
    );
    env.write("prd.md", "# PRD\n");
    let refused = env.cmd(&["run", "prd.md", "--workflow", "flow"]).failure();
    assert!(
        refused.stderr.contains("touch pwned; exit 1")
            && refused
                .stderr
                .contains("`pagent trust .claude/pagent/workflows/flow.json`"),
        "{refused}"
    );
    assert!(!env.exists(".claude/pagent-pipeline.json"));
    let trusted = env.cmd(&["trust"]).success();
    assert!(
        trusted
            .stdout
            .contains("trusted .claude/pagent/workflows/flow.json")
            && trusted.stdout.contains("stage x: touch pwned; exit 1"),
        "{trusted}"
    );
    env.cmd(&["run", "prd.md", "--workflow", "flow"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.stop(&env.stop_input("done")).blocked();
    assert!(pwned(&env), "a trusted command runs");

    // A change, even a small one, needs trust again.
    fs::remove_file(env.path("pwned")).unwrap();
    env.write(
        ".claude/pagent/workflows/flow.json",
        &flow("touch pwned; exit 2"),
    );
    let refused = env
        .cmd(&["run", "prd.md", "--workflow", "flow", "--force"])
        .failure();
    assert!(
        refused.stderr.contains("changed since you trusted it"),
        "{refused}"
    );
    let listed = env.cmd(&["trust", "--list"]).success();
    assert!(listed.stdout.contains("CHANGED since trusted"), "{listed}");
    env.cmd(&["trust", "--revoke"]).success();
    let listed = env.cmd(&["trust", "--list"]).success();
    assert!(listed.stdout.contains("(not trusted)"), "{listed}");
}

#[test]
fn planted_backpressure_commands_never_run_without_trust() {
    let env = TestEnv::new();
    env.write(
        ".claude/pagent/config.json",
        &json!({"backpressure": {"checks": {"txt": [{"command": ["touch", "pwned"]}]}}})
            .to_string(),
    );
    let refused = env.cmd(&["ralph", "Fix it"]).failure();
    assert!(
        refused.stderr.contains(".txt files: touch pwned"),
        "{refused}"
    );
    env.write("notes.txt", "x");
    env.post_tool_use("Write", "notes.txt", &[]);
    assert!(!pwned(&env), "no loop, no trust: nothing runs");
    // --trust on set-up trusts what the set-up uses, in the same step.
    let started = env
        .cmd(&["ralph", "--trust", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    assert!(
        started
            .stdout
            .contains("trusted .claude/pagent/config.json (--trust)")
            && started.stdout.contains("config .claude/pagent/config.json"),
        "{started}"
    );
    env.post_tool_use("Write", "notes.txt", &[]);
    assert!(pwned(&env));
}

#[test]
fn a_planted_local_tsc_never_runs_without_trust_even_when_checks_are_always_on() {
    let env = TestEnv::new();
    fs::create_dir_all(&env.config).unwrap();
    fs::write(
        env.config.join("config.json"),
        json!({"backpressure": {"always": true}}).to_string(),
    )
    .unwrap();
    env.write("tsconfig.json", "{}");
    env.write("node_modules/.bin/tsc", "#!/bin/sh\ntouch pwned\n");
    use std::os::unix::fs::PermissionsExt;
    fs::set_permissions(
        env.path("node_modules/.bin/tsc"),
        fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    env.write("app.ts", "let x = 1;\n");
    let out = env.post_tool_use("Write", "app.ts", &[]);
    assert!(!pwned(&env), "{out}");
    assert!(
        out.stdout.contains("pagent trust node_modules/.bin/tsc"),
        "{out}"
    );
    env.cmd(&["trust", "node_modules/.bin/tsc"]).success();
    env.post_tool_use("Write", "app.ts", &[]);
    assert!(pwned(&env), "trusted: it runs");
    fs::remove_file(env.path("pwned")).unwrap();
    env.write(
        "node_modules/.bin/tsc",
        "#!/bin/sh\ntouch pwned # changed\n",
    );
    env.post_tool_use("Write", "app.ts", &[]);
    assert!(!pwned(&env), "changed: trust again first");
}

#[test]
fn a_prompt_file_outside_the_project_is_refused_at_setup() {
    let env = TestEnv::new();
    let secret = env.root.parent().unwrap().join("secret.md");
    fs::write(&secret, "the user's private notes").unwrap();
    std::os::unix::fs::symlink(&secret, env.path("link.md")).unwrap();
    env.write("prd.md", "# PRD\n");
    for prompt_file in [
        "../../secret.md".to_owned(),
        secret.display().to_string(),
        "../../link.md".to_owned(),
        "../../../../../../../../etc/passwd".to_owned(),
    ] {
        env.write(
            ".claude/pagent/workflows/flow.json",
            &json!({"stages": [{"name": "x", "prompt_file": prompt_file,
                "exit_when": {"file_exists": "a.md"}}]})
            .to_string(),
        );
        let out = env.cmd(&["run", "prd.md", "--workflow", "flow"]).failure();
        assert!(out.stderr.contains("prompt_file"), "{prompt_file}: {out}");
        assert!(!out.stdout.contains("private"), "{out}");
    }
}

#[test]
fn set_up_names_every_project_file_it_uses() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    env.write(
        ".claude/prompts/qa.md",
        "Write the test plan for {{prd_path}}.",
    );
    env.write(
        ".claude/pagent/config.json",
        &json!({"backpressure": {"checks": {"json": false}}}).to_string(),
    );
    let out = env.cmd(&["run", "prd.md"]).success();
    assert!(
        out.stdout.contains(
            "From the project: prompt .claude/prompts/qa.md, config .claude/pagent/config.json."
        ),
        "{out}"
    );
}

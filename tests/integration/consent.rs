//! Consent for commands: a command that comes from a project's files runs only after the
//! user trusted that exact content (`pagent trust`), and a built-in name always means the
//! built-in. Every test plants what a stranger's repository would, and checks by a file
//! the command would leave (`pwned`) whether it ran.

use std::fs;

use serde_json::json;

use crate::util::{SESSION, Said, TestEnv, assert_text, prompt_elided};

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
    let mut said = Said::new();
    said.say("pagent run prd.md", &prompt_elided(&out.stdout));
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
    said.say(&by_path.join(" "), &refused.stderr);
    assert_text!(said.text());
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
    let mut said = Said::new();
    said.say("pagent run prd.md --workflow flow", &refused.stderr);
    assert!(!env.exists(".claude/pagent-pipeline.json"));
    let trusted = env.cmd(&["trust"]).success();
    said.say("pagent trust", &trusted.stdout);
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
    assert!(!pwned(&env), "{refused}");
    said.say(
        "after a change: pagent run prd.md --workflow flow",
        &refused.stderr,
    );
    let listed = env.cmd(&["trust", "--list"]).success();
    said.say("pagent trust --list", &listed.stdout);
    let revoked = env.cmd(&["trust", "--revoke"]).success();
    said.say("pagent trust --revoke", &revoked.stdout);
    let listed = env.cmd(&["trust", "--list"]).success();
    said.say("pagent trust --list", &listed.stdout);
    assert_text!(said.text());
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
    let mut said = Said::new();
    said.say("pagent ralph 'Fix it'", &refused.stderr);
    env.write("notes.txt", "x");
    env.post_tool_use("Write", "notes.txt", &[]);
    assert!(!pwned(&env), "no loop, no trust: nothing runs");
    // --trust on set-up trusts what the set-up uses, in the same step.
    let started = env
        .cmd(&["ralph", "--trust", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    said.say("pagent ralph --trust 'Fix it'", &started.stdout);
    assert_text!(said.text());
    env.post_tool_use("Write", "notes.txt", &[]);
    assert!(pwned(&env));
}

/// A planted TypeScript package: `pwned` is what its `lib/tsc.js` does when node runs it.
fn plant_typescript(env: &TestEnv, lib: &str) {
    env.write("tsconfig.json", "{}");
    env.write(
        "node_modules/typescript/package.json",
        r#"{"name": "typescript", "bin": {"tsc": "./bin/tsc"}}"#,
    );
    env.write(
        "node_modules/typescript/bin/tsc",
        "#!/usr/bin/env node\nrequire('../lib/tsc.js');\n",
    );
    env.write("node_modules/typescript/lib/tsc.js", lib);
    env.write(
        "node_modules/.bin/tsc",
        "#!/bin/sh\nexec node ../typescript/bin/tsc \"$@\"\n",
    );
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
    plant_typescript(&env, "require('fs').writeFileSync('pwned', '');\n");
    env.write("app.ts", "let x = 1;\n");
    let out = env.post_tool_use("Write", "app.ts", &[]);
    assert!(!pwned(&env), "{out}");
    assert_text!(out.system_message().unwrap());
    env.cmd(&["trust", "node_modules/typescript"]).success();
    env.post_tool_use("Write", "app.ts", &[]);
    assert!(pwned(&env), "trusted: it runs");
    fs::remove_file(env.path("pwned")).unwrap();
    env.write(
        "node_modules/typescript/lib/tsc.js",
        "require('fs').writeFileSync('pwned', ''); // changed\n",
    );
    env.post_tool_use("Write", "app.ts", &[]);
    assert!(!pwned(&env), "changed: trust again first");
}

/// Finding 5: trusting `node_modules/.bin/tsc` hashed the two-line stub, so a later
/// change to the package's own files ran untrusted. Trust now covers the package: a
/// change to a file `tsc` loads (here a module its script requires, not the script)
/// needs trust again, while a change to its README does not.
#[test]
fn finding_5_trusting_tsc_covers_the_files_it_executes_not_the_stub() {
    let env = TestEnv::new();
    fs::create_dir_all(&env.config).unwrap();
    fs::write(
        env.config.join("config.json"),
        json!({"backpressure": {"always": true}}).to_string(),
    )
    .unwrap();
    plant_typescript(&env, "require('./_tsc.js');\n");
    env.write("node_modules/typescript/lib/_tsc.js", "// the compiler\n");
    env.write("node_modules/typescript/README.md", "docs\n");
    env.write("app.ts", "let x = 1;\n");
    env.cmd(&["trust", "node_modules/.bin/tsc"]).success();
    env.write("node_modules/typescript/README.md", "other docs\n");
    let out = env.post_tool_use("Write", "app.ts", &[]);
    assert!(!out.stdout.contains("not trusted"), "{out}");
    env.write(
        "node_modules/typescript/lib/_tsc.js",
        "require('fs').writeFileSync('pwned', '');\n",
    );
    let out = env.post_tool_use("Write", "app.ts", &[]);
    assert!(
        !pwned(&env),
        "a changed module of the trusted package ran: {out}"
    );
    let listed = env.cmd(&["trust", "--list"]).success();
    assert_text!(listed.stdout);
}

/// Finding 5, cargo: trusting `Cargo.toml` left `build.rs`, `.cargo/config.toml` and
/// `rust-toolchain.toml` out. Each of them, changed or planted after trust, now needs
/// trust again before `cargo check` runs.
#[test]
fn finding_5_trusting_a_crate_covers_its_build_script_cargo_config_and_toolchain() {
    let env = TestEnv::new();
    fs::create_dir_all(&env.config).unwrap();
    fs::write(
        env.config.join("config.json"),
        json!({"backpressure": {"always": true}}).to_string(),
    )
    .unwrap();
    let cargo = env.fake_tool("bin-cargo", "cargo", ": > \"$PAGENT_FILE.cargo-ran\"");
    let path = crate::backpressure::path_of(&[&cargo]);
    env.write(
        "Cargo.toml",
        "[package]\nname = \"x\"\nversion = \"0.1.0\"\n",
    );
    env.write("src/main.rs", "fn main() {}\n");
    env.cmd(&["trust", "Cargo.toml"]).success();
    let ran = |env: &TestEnv| {
        let _ = fs::remove_file(env.path("src/main.rs.cargo-ran"));
        env.post_tool_use("Write", "src/main.rs", &[("PATH", &path)]);
        env.exists("src/main.rs.cargo-ran")
    };
    assert!(ran(&env), "trusted: cargo check runs");
    for (rel, text) in [
        ("build.rs", "fn main() { /* planted */ }\n"),
        (
            ".cargo/config.toml",
            "[build]\nrustc-wrapper = \"./evil\"\n",
        ),
        (
            "rust-toolchain.toml",
            "[toolchain]\npath = \"./evil-toolchain\"\n",
        ),
    ] {
        env.write(rel, text);
        assert!(!ran(&env), "{rel} planted after trust: cargo check ran");
        env.cmd(&["trust", "Cargo.toml"]).success();
        assert!(ran(&env), "{rel}: trusted again, it runs");
    }
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
    assert_text!(prompt_elided(&out.stdout));
}

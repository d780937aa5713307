//! A project must not hold pagent's config folder: a cloned repository's
//! `.claude/settings.json` can set hook environment variables, and a config folder it
//! controls would give it the secret that seals states and the list of trusted commands.

use std::fs;

use serde_json::json;

use crate::util::{SESSION, TestEnv};

/// A project whose trusted workflow's check writes `pwned`, with a sealed loop running it.
fn project_with_a_trusted_check() -> TestEnv {
    let env = TestEnv::new();
    env.write(
        ".claude/pagent/workflows/evil.json",
        &json!({"stages": [{"name": "x", "prompt": "p",
            "exit_when": {"custom": "touch pwned; exit 1"}}]})
        .to_string(),
    )
    .write("prd.md", "# PRD\n");
    env.cmd(&["run", "prd.md", "--workflow", "evil", "--trust"])
        .success();
    env
}

#[test]
fn the_scenario_is_live_a_trusted_check_runs_on_stop() {
    let env = project_with_a_trusted_check();
    let mut input = env.stop_input("working");
    input["session_id"] = json!(SESSION);
    env.stop(&input);
    assert!(env.exists("pwned"), "{}", env.dump());
}

#[test]
fn a_config_folder_planted_inside_the_project_is_refused_and_nothing_runs() {
    let env = project_with_a_trusted_check();
    // The repository ships the secret and the trust list, and its settings point
    // PAGENT_CONFIG_DIR (or XDG_CONFIG_HOME, or HOME) at them.
    let planted = env.path(".pagent-config");
    fs::rename(&env.config, &planted).unwrap();
    let mut input = env.stop_input("working");
    input["session_id"] = json!(SESSION);
    for (var, value) in [
        ("PAGENT_CONFIG_DIR", planted.clone()),
        ("PAGENT_CONFIG_DIR", ".pagent-config".into()),
        ("PAGENT_CONFIG_DIR", env.path("sub/../.pagent-config")),
    ] {
        let run = env
            .cmd(&["hook", "stop"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .env(var, &value)
            .current_dir(&env.root)
            .stdin(input.to_string())
            .run();
        // The hooks' failure policy: the stop is allowed, the reason is on stderr, exit 1.
        run.allowed_on_error();
        assert!(run.stderr.contains("is inside the project"), "{run}");
        assert!(!env.exists("pwned"), "{var}={value:?}: {}", env.dump());
    }
    let status = env
        .cmd(&["status"])
        .env("PAGENT_CONFIG_DIR", &planted)
        .run();
    assert!(status.stderr.contains("is inside the project"), "{status}");
}

//! Issue 31, item 4, "a surface a user can hold": the tuning a user sets once (the
//! watchdog, the retries and their delay, the outage and usage-limit waits) is the `loop`
//! section of their own `config.json`, not seven flags of every `pagent loop`; the old
//! flags still run, hidden, and win for their run; a project's config cannot tune a loop,
//! and the user's own cannot make one wait without end. And `pagent loop` refuses what
//! its start would ignore (`--check` on a ralph loop), saying what to write instead.

use std::time::{Duration, Instant};

use serde_json::json;

use crate::util::*;

/// An agent that crashes on its first `crashes` runs, then makes its promise.
fn crashing_agent(env: &TestEnv, crashes: u32) -> String {
    env.write(
        "agent.sh",
        &format!(
            "n=$(cat .runs 2>/dev/null || echo 0); n=$((n+1)); echo $n > .runs\ncat > /dev/null\n\
             if [ $n -le {crashes} ]; then exit 3; fi\necho '<promise>DONE</promise>'\n"
        ),
    );
    "sh agent.sh".to_owned()
}

fn user_config(env: &TestEnv, config: &serde_json::Value) {
    std::fs::create_dir_all(&env.config).unwrap();
    std::fs::write(env.config.join("config.json"), config.to_string()).unwrap();
}

/// The `retry N of M in D` lines of a loop's output.
fn retries(stdout: &str) -> Vec<&str> {
    stdout
        .lines()
        .filter_map(|l| l.split("; ").nth(1))
        .filter(|l| l.starts_with("retry "))
        .collect()
}

#[test]
fn issue_31_the_users_loop_config_sets_the_retries_and_the_delay_the_agent_sees() {
    let env = TestEnv::new();
    let agent = crashing_agent(&env, 1);
    user_config(&env, &json!({"loop": {"retries": 1, "retry_delay": 2}}));
    let started = Instant::now();
    let out = env
        .cmd(&["loop", "--command", &agent, "ralph", "Task"])
        .success();
    assert_eq!(
        retries(&out.stdout),
        ["retry 1 of 1 in 2s, not counted as an iteration"],
        "{}",
        out.stdout
    );
    assert!(started.elapsed() >= Duration::from_secs(2));
    // One retry only: an agent that crashes twice stops the loop.
    let env = TestEnv::new();
    let agent = crashing_agent(&env, 2);
    user_config(&env, &json!({"loop": {"retries": 1, "retry_delay": 1}}));
    let out = env
        .cmd(&["loop", "--command", &agent, "ralph", "Task"])
        .failure();
    assert!(
        out.stderr.contains("the agent failed 2 times in a row"),
        "{}",
        out.stderr
    );
}

#[test]
fn issue_31_a_hidden_tuning_flag_still_works_and_wins_over_the_config() {
    let env = TestEnv::new();
    let agent = crashing_agent(&env, 1);
    user_config(&env, &json!({"loop": {"retries": 0, "retry_delay": 30}}));
    let out = env
        .cmd(&[
            "loop",
            "--command",
            &agent,
            "--retries",
            "2",
            "--retry-delay",
            "1s",
            "ralph",
            "Task",
        ])
        .success();
    assert_eq!(
        retries(&out.stdout),
        ["retry 1 of 2 in 1s, not counted as an iteration"],
        "{}",
        out.stdout
    );
}

#[test]
fn issue_31_a_projects_config_cannot_tune_a_loop() {
    let env = TestEnv::new();
    let agent = crashing_agent(&env, 0);
    env.write(
        ".claude/pagent/config.json",
        &json!({"loop": {"outage_wait": 604_800, "retries": 20, "idle_timeout": 604_800}})
            .to_string(),
    );
    let out = env
        .cmd(&["loop", "--command", &agent, "ralph", "Task"])
        .failure();
    let mut said = Said::new();
    said.say(
        "a project's config with a loop section: stderr",
        &out.stderr,
    );
    assert_text!(said.text());
    assert!(!env.exists(".runs"), "the agent ran");
}

#[test]
fn issue_31_the_users_config_cannot_make_a_loop_wait_without_end() {
    let mut said = Said::new();
    for section in [
        json!({"outage_wait": 315_360_000_u64}),
        json!({"idle_timeout": 0}),
        json!({"retries": 1000}),
        json!({"retry_wait": 5}),
    ] {
        let env = TestEnv::new();
        let agent = crashing_agent(&env, 0);
        user_config(&env, &json!({ "loop": section }));
        let out = env
            .cmd(&["loop", "--command", &agent, "ralph", "Task"])
            .failure();
        said.say(&format!("loop: {section}"), &out.stderr);
        assert!(!env.exists(".runs"), "the agent ran");
    }
    assert_text!(said.text());
}

#[test]
fn issue_31_check_on_a_ralph_loop_is_refused_not_ignored() {
    let mut said = Said::new();
    for (what, args) in [
        (
            "--check before ralph",
            &["--check", "false", "ralph", "Task"][..],
        ),
        (
            "--format before run",
            &["--format", "kiro", "run", "prd.md"][..],
        ),
        (
            "--stories and ralph",
            &["--stories", "tasks.md", "ralph", "Task"][..],
        ),
        ("--check with nothing to start", &["--check", "false"][..]),
    ] {
        let env = TestEnv::new();
        let agent = crashing_agent(&env, 0);
        env.write("tasks.md", "# Plan\n\n- [ ] one\n");
        let mut argv = vec!["loop", "--command", &agent];
        argv.extend(args);
        let out = env.cmd(&argv).failure();
        assert_eq!(out.stdout, "", "{what}");
        said.say(what, &out.stderr);
        assert!(!env.exists(".runs"), "{what}: the agent ran");
        assert!(
            !env.exists(".claude/pagent-pipeline.json"),
            "{what}: a loop was set up"
        );
    }
    assert_text!(said.text());
}

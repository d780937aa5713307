//! `pagent loop --json`: the event stream scripts and `pagent parallel` read, one JSON
//! object per line, from real agent streams (a recorded Codex run) to the last word.

use serde_json::Value;

use crate::util::*;

#[test]
fn json_ends_with_a_finished_event_when_the_retries_run_out() {
    let env = TestEnv::new();
    env.write("agent.sh", "exit 7\n");
    let out = env
        .cmd(&[
            "loop",
            "--json",
            "--command",
            "sh agent.sh",
            "--retries",
            "0",
            "ralph",
            "Task",
        ])
        .failure();
    let last: Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["event"], "finished", "{out}");
    assert_eq!(last["outcome"], "error");
    // Issue 30, §2: the failure's class, in the event and first in its words.
    assert_eq!(last["failure"], "crash", "{last}");
    assert!(
        last["reason"].as_str().unwrap().starts_with(
            "agent crash or bad exit: the agent exited with code 7; the agent failed once"
        ),
        "{last}"
    );
}

/// A stand-in for `codex exec --json -` that prints a real Codex 0.169.0 stream (a shell
/// tool reported started and completed, the model-metadata notice) and checks its stdin.
fn fake_codex(env: &TestEnv) -> String {
    env.write(
        "codex-tool.jsonl",
        include_str!("../fixtures/agents/codex-0.169.0/tool.jsonl"),
    );
    env.write(
        "fake-codex",
        "#!/bin/sh\n[ \"$*\" = 'exec --json -' ] || exit 9\ncat > /dev/null\ncat codex-tool.jsonl\n",
    );
    std::fs::set_permissions(
        env.path("fake-codex"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    env.path("fake-codex").display().to_string()
}

#[test]
fn json_tells_each_codex_tool_once_and_its_notice_as_a_warning() {
    let env = TestEnv::new();
    let codex = fake_codex(&env);
    let out = env
        .cmd(&[
            "loop",
            "--json",
            "--agent",
            "codex",
            "--agent-bin",
            &codex,
            "ralph",
            "Task",
        ])
        .success();
    let events: Vec<Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let of = |name: &str| -> Vec<&Value> { events.iter().filter(|e| e["event"] == name).collect() };
    let tools = of("tool");
    assert_eq!(tools.len(), 1, "{}", out.stdout);
    assert_eq!(tools[0]["name"], "shell");
    assert_eq!(
        tools[0]["summary"],
        "printf '%s' 'written by the mock model'\\''s tool call …"
    );
    let warnings = of("warning");
    assert_eq!(warnings.len(), 1, "{}", out.stdout);
    assert!(
        warnings[0]["text"]
            .as_str()
            .unwrap()
            .starts_with("Model metadata for `mock-model` not found"),
        "{}",
        out.stdout
    );
    assert!(of("retry").is_empty(), "{}", out.stdout);
    assert_eq!(events.last().unwrap()["outcome"], "complete");
}

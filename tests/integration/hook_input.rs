//! The Stop hook fed the payloads captured from Claude Code 2.1.197, 2.1.330 and 2.1.332
//! (the oldest supported, the newest before it, the newest proven).

use serde_json::Value;

use crate::util::*;

const VERSIONS: [&str; 3] = ["2.1.197", "2.1.330", "2.1.332"];

fn fixture_lines(version: &str, name: &str) -> Vec<Value> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/fixtures/claude-code-{version}"))
        .join(name);
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

#[test]
fn the_captured_stop_payloads_drive_a_ralph_loop() {
    for version in VERSIONS {
        let env = TestEnv::new();
        env.cmd(&["ralph", "Create hello.txt"]).success();
        let inputs = fixture_lines(version, "stop_hook_stdin.jsonl");
        let (last, before) = inputs.split_last().unwrap();
        // The captured payloads name another folder as cwd; CLAUDE_PROJECT_DIR wins, as in
        // a real hook.
        let reason = env.stop(&before[0]).blocked();
        assert!(reason.ends_with("Create hello.txt"), "{version}: {reason}");
        assert_eq!(env.state()["session_id"], before[0]["session_id"]);
        for input in &before[1..] {
            env.stop(input).blocked();
        }
        let said = last["last_assistant_message"].as_str().unwrap();
        assert!(
            said.contains("<promise>DONE</promise>"),
            "{version}: {said}"
        );
        // The models of the older captures wrote the promise mid-line ("Finished.
        // <promise>DONE</promise>"), which no longer counts (issue 10); on a line of its
        // own it does (2.1.332's capture has it so).
        let own_line = said.ends_with("\n<promise>DONE</promise>");
        assert_eq!(own_line, version == "2.1.332", "{version}: {said}");
        let mut last = last.clone();
        if !own_line {
            env.stop(&last).blocked();
            last["last_assistant_message"] = "Finished.\n<promise>DONE</promise>".into();
        }
        assert!(
            env.stop(&last).allowed().unwrap().contains("complete"),
            "{version}"
        );
    }
}

#[test]
fn the_plugin_payloads_without_a_promise_keep_blocking() {
    for version in VERSIONS {
        let env = TestEnv::new();
        env.cmd(&["ralph", "--no-progress-limit", "0", "Task"])
            .success();
        for input in fixture_lines(version, "plugin_stop_hook_stdin.jsonl") {
            env.stop(&input).blocked();
        }
        assert_eq!(
            env.state()["iterations"],
            serde_json::json!([3]),
            "{version}"
        );
    }
}

/// The plugin registers pagent for exactly the events of the protocol's table, each with
/// the subcommand the table names (so clap, the fast path and `hooks/hooks.json` read
/// one list).
#[test]
fn issue_31_hooks_json_registers_every_event_of_the_table_with_its_subcommand() {
    use pagent_protocol::HookEvent;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("hooks/hooks.json");
    let json: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let hooks = json["hooks"].as_object().unwrap();
    let mut registered: Vec<&str> = hooks.keys().map(String::as_str).collect();
    registered.sort_unstable();
    let mut table: Vec<&str> = HookEvent::ALL.iter().map(|e| e.name()).collect();
    table.sort_unstable();
    assert_eq!(registered, table);
    for event in HookEvent::ALL {
        for group in hooks[event.name()].as_array().unwrap() {
            for hook in group["hooks"].as_array().unwrap() {
                assert_eq!(
                    hook["args"],
                    serde_json::json!(["hook", event.subcommand()]),
                    "{}",
                    event.name()
                );
            }
        }
    }
}

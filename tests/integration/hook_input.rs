//! The Stop hook fed the payloads captured from Claude Code 2.1.197 and 2.1.330, the two
//! ends of the supported range.

use serde_json::Value;

use crate::util::*;

const VERSIONS: [&str; 2] = ["2.1.197", "2.1.330"];

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
        // The captured payloads name another folder as cwd; CLAUDE_PROJECT_DIR wins, as in
        // a real hook.
        let reason = env.stop(&inputs[0]).blocked();
        assert!(reason.ends_with("Create hello.txt"), "{version}: {reason}");
        assert_eq!(env.state()["session_id"], inputs[0]["session_id"]);
        // The captured models wrote the promise mid-line ("Finished. <promise>DONE</promise>"),
        // which no longer counts (issue 10); on a line of its own it does.
        let said = inputs[1]["last_assistant_message"].as_str().unwrap();
        assert!(
            said.contains("<promise>DONE</promise>"),
            "{version}: {said}"
        );
        env.stop(&inputs[1]).blocked();
        let mut own_line = inputs[1].clone();
        own_line["last_assistant_message"] = "Finished.
<promise>DONE</promise>"
            .into();
        assert!(
            env.stop(&own_line).allowed().unwrap().contains("complete"),
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

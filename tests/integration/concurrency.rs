//! Many hooks at once on one state: no lost update, never a torn file.

use std::io::Write;
use std::process::{Command, Stdio};

use crate::util::*;

#[test]
fn thirty_two_simultaneous_stops_each_count_once() {
    const HOOKS: usize = 32;
    let env = TestEnv::new();
    env.cmd(&[
        "ralph",
        "--max-iterations",
        "1000",
        "--no-progress-limit",
        "0",
        "Fix it",
    ])
    .success();
    let input = env.stop_input("working").to_string();
    // Start every process first, then release them together by writing their stdin.
    let mut children: Vec<_> = (0..HOOKS)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_pagent"))
                .args(["hook", "stop"])
                .env("CLAUDE_PROJECT_DIR", &env.root)
                .env("PAGENT_CONFIG_DIR", &env.config)
                .env_remove("CLAUDE_CODE_SESSION_ID")
                .stdin(Stdio::piped())
                .stdout(Stdio::piped())
                .stderr(Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in &mut children {
        child
            .stdin
            .take()
            .unwrap()
            .write_all(input.as_bytes())
            .unwrap();
    }
    let mut iterations_seen = Vec::new();
    for child in children {
        let out = child.wait_with_output().unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{stdout}\n{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let decision: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        let reason = decision["reason"].as_str().unwrap();
        let n: u32 = reason
            .split("iteration ")
            .nth(1)
            .unwrap()
            .split(' ')
            .next()
            .unwrap()
            .parse()
            .unwrap();
        iterations_seen.push(n);
    }
    iterations_seen.sort_unstable();
    let expected: Vec<u32> = (2..=HOOKS as u32 + 1).collect();
    assert_eq!(
        iterations_seen, expected,
        "each hook must see its own iteration"
    );
    assert_eq!(
        env.state()["iterations"],
        serde_json::json!([HOOKS as u32 + 1])
    );
    let log = env.read(".claude/pagent/events.jsonl");
    assert_eq!(
        log.lines()
            .filter(|l| l.contains("\"action\":\"block\""))
            .count(),
        HOOKS
    );
    assert!(
        log.lines()
            .all(|l| serde_json::from_str::<serde_json::Value>(l).is_ok())
    );
}

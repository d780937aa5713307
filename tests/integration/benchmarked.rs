//! The configurations `scripts/bench.sh` times, each proven to do what it is timed doing
//! (issue 31, item 6: the script only times; these were its checks, in shell and Python,
//! before). The other checks it ran are tests elsewhere: a loop's Stop blocks
//! (`ralph.rs`), the captured transcripts read from their end (`ralph.rs`), a huge
//! transcript read in bounded time and memory (`budgets.rs`), the launcher's order
//! (`launcher.rs`), the no-state hooks' stdout (`safety.rs`, `backpressure.rs`).

use std::fs;

use serde_json::{Value, json};

use crate::util::*;

/// A ralph loop owned by `SESSION`.
fn ralph(env: &TestEnv, args: &[&str]) {
    let mut all = vec!["ralph"];
    all.extend(args);
    env.cmd(&all)
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
}

/// A Stop input without `last_assistant_message`: the hook reads `transcript`.
fn stop_reading(env: &TestEnv, transcript: &std::path::Path) -> Value {
    json!({"session_id": SESSION, "transcript_path": transcript, "cwd": env.root,
           "hook_event_name": "Stop", "stop_hook_active": true})
}

/// A session's history of `bytes` or more: turns of a user's question, a tool result and
/// an answer, as Claude Code writes them.
fn history(bytes: usize) -> String {
    let mut out = String::with_capacity(bytes + 4096);
    let mut turn = 0;
    while out.len() < bytes {
        turn += 1;
        let text = format!("Turn {turn}: {}", "the parser reads the file. ".repeat(20));
        for line in [
            transcript_line_user(&format!("Look at part {turn}."), false),
            transcript_line_tool_result(&text.repeat(4)),
            transcript_line_text(&format!("msg_{turn}"), &text),
        ] {
            out.push_str(&line);
            out.push('\n');
        }
    }
    out
}

#[test]
fn the_no_state_hooks_print_nothing_and_write_nothing_in_the_project_or_the_config_folder() {
    let env = TestEnv::new();
    env.write("hello.txt", "hello world\n");
    let hello = env.path("hello.txt");
    // As Claude Code 2.1.197 sends a Write: the contents twice.
    let write = json!({"session_id": SESSION, "cwd": env.root, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": {"file_path": hello, "content": "hello world\n"},
        "tool_response": {"type": "create", "filePath": hello, "content": "hello world\n"}});
    let stop = env.stop_input("Done for now.");
    for (hook, input) in [("stop", stop), ("post-tool-use", write)] {
        let run = env
            .bin(&["hook", hook])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .stdin(input.to_string())
            .run();
        assert_eq!((run.code, run.stdout.as_str()), (Some(0), ""), "{run}");
    }
    assert!(!env.exists(".claude"), "{}", env.dump());
    let config: Vec<_> = fs::read_dir(&env.config)
        .map(|d| d.map(|e| e.unwrap().file_name()).collect())
        .unwrap_or_default();
    assert!(
        config.is_empty(),
        "the no-state hooks wrote into the config folder: {config:?}"
    );
}

#[test]
fn a_promise_appended_to_a_large_transcript_ends_the_loop_the_hook_reads() {
    let env = TestEnv::new();
    ralph(&env, &["--promise", "DONE", "Fix the bug"]);
    let transcript = env.home.join("large.jsonl");
    let mut text = history(8 << 20);
    text.push_str(&transcript_line_text(
        "msg_last",
        "Iteration 9: still failing, not done.",
    ));
    text.push('\n');
    fs::write(&transcript, &text).unwrap();
    let input = stop_reading(&env, &transcript);
    env.stop(&input).blocked();
    text.push_str(&transcript_line_text(
        "msg_done",
        "All fixed.\n<promise>DONE</promise>",
    ));
    text.push('\n');
    fs::write(&transcript, &text).unwrap();
    let out = env.stop(&input);
    assert!(out.allowed().unwrap().contains("complete"), "{out}");
    assert_eq!(env.state()["status"], "complete", "{}", env.dump());
}

/// The last message follows an Edit of a large file, whose result line (the whole
/// original file, as Claude Code writes it) the reader going backwards must read to its
/// start: the promise quoted in the file never counts, the one in the message does.
#[test]
fn the_last_message_after_an_eight_megabyte_tool_result_line_is_read_whole() {
    let env = TestEnv::new();
    ralph(&env, &["--promise", "DONE", "Fix the bug"]);
    let transcript = env.home.join("long-line.jsonl");
    let file = format!(
        "{}\n<promise>DONE</promise>\n",
        "x = 1\n".repeat((8 << 20) / 6)
    );
    let lines = |last: &str| {
        [
            transcript_line_user("Fix the bug", false),
            transcript_line_text("msg_edit", "Editing the file."),
            transcript_line_tool_result(&file),
            transcript_line_text("msg_edit", last),
        ]
        .join("\n")
            + "\n"
    };
    let input = stop_reading(&env, &transcript);
    fs::write(&transcript, lines("Edited; the tests still fail.")).unwrap();
    env.stop(&input).blocked();
    fs::write(&transcript, lines("Edited.\n<promise>DONE</promise>")).unwrap();
    let out = env.stop(&input);
    assert!(out.allowed().unwrap().contains("complete"), "{out}");
}

#[test]
fn a_json_check_passes_a_valid_file_with_or_without_its_contents_and_names_the_broken_ones_line() {
    let env = TestEnv::new();
    ralph(&env, &["Fix the data"]);
    let rows: Vec<String> = (0..2000)
        .map(|i| format!("  {{\"id\": {i}, \"name\": \"row {i}\"}}"))
        .collect();
    let valid = format!("[\n{}\n]\n", rows.join(",\n"));
    let broken = format!("[\n{},\n]\n", rows.join(",\n"));
    env.write("data.json", &valid).write("broken.json", &broken);
    let payload = |rel: &str, contents: Option<&str>| {
        let path = env.path(rel);
        let mut input = json!({"session_id": SESSION, "cwd": env.root,
            "hook_event_name": "PostToolUse", "tool_name": "Write",
            "tool_input": {"file_path": path}, "tool_response": {"type": "create", "filePath": path}});
        if let Some(contents) = contents {
            input["tool_input"]["content"] = json!(contents);
            input["tool_response"]["content"] = json!(contents);
        }
        env.cmd(&["hook", "post-tool-use"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .stdin(input.to_string())
            .run()
    };
    assert_eq!(payload("data.json", Some(&valid)).context(), None);
    assert_eq!(payload("data.json", None).context(), None);
    let context = payload("broken.json", Some(&broken)).context().unwrap();
    assert!(
        context.contains("broken.json") && context.contains("line 2002"),
        "{context}"
    );
    let checks = env.actions().iter().filter(|a| *a == "check").count();
    assert_eq!(checks, 3, "one check event per run: {:?}", env.actions());
}

#[test]
fn pagent_loop_completes_after_exactly_one_and_after_exactly_eleven_iterations() {
    for n in [1_usize, 11] {
        let env = TestEnv::new();
        env.write(
            "agent.sh",
            &format!(
                "cat >/dev/null\nif [ \"${{PAGENT_ITERATION:-0}}\" -ge {n} ]; then \
                 echo '<promise>DONE</promise>'; else echo 'Not done yet.'; fi\n"
            ),
        );
        let max = (n + 10).to_string();
        env.cmd(&[
            "loop",
            "--quiet",
            "--command",
            "sh agent.sh",
            "ralph",
            "--max-iterations",
            &max,
            "--no-progress-limit",
            "0",
            "Fix the bug",
        ])
        .success();
        let state = env.state();
        assert_eq!(
            (&state["status"], &state["iterations"]),
            (&json!("complete"), &json!([n])),
            "{}",
            env.dump()
        );
        let mut expected = vec!["ralph".to_owned()];
        expected.extend(std::iter::repeat_n("block".to_owned(), n - 1));
        expected.push("complete".to_owned());
        assert_eq!(env.actions(), expected, "done at {n}");
    }
}

/// Both conditions of an `all` are evaluated, and the feedback names what is missing: the
/// line count of architecture.md, and the file count of src/, which stops counting at
/// its minimum once it is reached.
#[test]
fn an_unmet_all_condition_reports_the_line_count_and_a_file_count_stopped_at_its_minimum() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n\nBuild the thing.\n")
        .write_lines("architecture.md", 10);
    for i in 0..20 {
        env.write(&format!("src/mod{i}.rs"), "pub fn f() {}\n");
    }
    let workflow = json!({"name": "bench", "description": "one stage: an architecture and the code",
        "stages": [{"name": "build",
            "prompt": "Write architecture.md (at least 50 lines), then the code under src/.",
            "exit_when": {"all": [{"file_exists": "architecture.md", "min_lines": 50},
                                  {"directory_exists": "src", "min_files": 3}]}}]});
    let path = env.home.join("workflow.json");
    fs::write(&path, workflow.to_string()).unwrap();
    env.cmd(&["run", "--workflow", path.to_str().unwrap(), "prd.md"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.stop(&env.stop_input("Still working on it.")).blocked();
    let state = env.read(".claude/pagent-pipeline.json");
    assert!(
        state.contains("architecture.md 10/50 lines, src/ 3+/3 files"),
        "{state}"
    );
}

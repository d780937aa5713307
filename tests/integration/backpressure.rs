//! `pagent hook post-tool-use`: checks of edited files while a loop is active.

use std::ffi::OsStr;
use std::path::Path;

use serde_json::json;

use crate::util::*;

/// A ralph loop owned by `SESSION`.
pub(crate) fn active() -> TestEnv {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env
}

/// A PATH holding only `dirs` (and nothing of the machine's).
pub(crate) fn path_of(dirs: &[&Path]) -> std::ffi::OsString {
    std::env::join_paths(dirs).unwrap()
}

pub(crate) fn check_events(env: &TestEnv) -> Vec<String> {
    env.events()
        .into_iter()
        .filter(|e| e["action"] == "check")
        .map(|e| format!("{} ({} ms)", e["detail"].as_str().unwrap(), e["ms"]))
        .collect()
}

#[test]
fn without_a_loop_the_hook_exits_at_once() {
    let env = TestEnv::new();
    env.write("bad.json", "{");
    for stdin in [&b""[..], b"garbage"] {
        let out = env
            .cmd(&["hook", "post-tool-use"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .stdin(stdin.to_vec())
            .run();
        assert_eq!(
            (out.code, out.stdout.as_str(), out.stderr.as_str()),
            (Some(0), "", ""),
            "{out}"
        );
    }
    assert_eq!(env.post_tool_use("Write", "bad.json", &[]).context(), None);
    assert!(
        !env.exists(".claude/pagent"),
        "the inactive path wrote files"
    );
}

/// 100,000 nested levels used to overflow the stack and abort the hook (YAML); each
/// built-in parser now reports the depth as a finding the model reads.
#[test]
fn deeply_nested_files_are_a_finding_not_a_crash() {
    let env = active();
    let deep = 100_000;
    let cases = [
        (
            "deep.json",
            "[".repeat(deep),
            "deep.json: line 1, column 256: nested deeper than 255 levels",
        ),
        (
            "deep.toml",
            format!("a = {}", "[".repeat(deep)),
            "deep.toml: line 1, column",
        ),
        (
            "flow.yaml",
            "[".repeat(deep),
            "flow.yaml: line 1, column 256: nested deeper than 255 levels",
        ),
        (
            "block.yml",
            format!("top:\n{}", "- ".repeat(deep)),
            "block.yml: line 2, column",
        ),
    ];
    let mut said = Said::new();
    for (file, content, expected) in cases {
        env.write(file, &content);
        let out = env.post_tool_use("Write", file, &[]);
        let context = out
            .context()
            .unwrap_or_else(|| panic!("{file}: no feedback\n{out}"));
        // The finding names the place (the snapshot holds the words).
        assert!(context.contains(expected), "{file}: {context}");
        said.say(file, &context);
    }
    assert_text!(said.text());
}

#[test]
fn builtin_parsers_report_line_and_column() {
    let env = active();
    let cases = [
        (
            "data.json",
            "{\n  \"a\": 1,\n  \"b\": tru\n}\n",
            "data.json: line 4, column 1",
        ),
        (
            "Cargo.toml",
            "[package]\nname = \"x\nversion = 1\n",
            "Cargo.toml: line 2, column 10",
        ),
        (
            "ci.yml",
            "jobs:\n  build: 1\n    steps: 2\n",
            "ci.yml: line 3, column 10",
        ),
        ("nb.ipynb", "{\"cells\": [}", "nb.ipynb: line 1, column 12"),
    ];
    let mut said = Said::new();
    for (file, content, expected) in cases {
        env.write(file, content);
        let tool = if file.ends_with(".ipynb") {
            "NotebookEdit"
        } else {
            "Write"
        };
        let context = env
            .post_tool_use(tool, file, &[])
            .context()
            .unwrap_or_else(|| panic!("{file}: no feedback"));
        // The line and column are right (the snapshot holds the words).
        assert!(context.contains(expected), "{file}: {context}");
        said.say(&format!("{tool} {file}"), &context);
    }
    assert_text!(said.text());
    for (file, content) in [
        ("data.json", "{\"a\": 1}"),
        ("Cargo.toml", "[package]\nname = \"x\"\n"),
        ("ci.yml", "a: [1, 2]\n"),
        ("nb.ipynb", "{}"),
    ] {
        env.write(file, content);
        assert_eq!(
            env.post_tool_use("Edit", file, &[]).context(),
            None,
            "{file}"
        );
    }
    let events = check_events(&env);
    assert!(
        events
            .iter()
            .any(|e| e.starts_with("JSON syntax data.json: failed (")),
        "{events:?}"
    );
    assert!(
        events
            .iter()
            .any(|e| e.starts_with("YAML syntax ci.yml: passed (")),
        "{events:?}"
    );
}

#[test]
fn only_edit_tools_of_the_owning_session_of_a_sealed_loop_are_checked() {
    let env = active();
    env.write("bad.json", "{");
    assert!(
        env.post_tool_use("MultiEdit", "bad.json", &[])
            .context()
            .is_some()
    );
    assert_eq!(env.post_tool_use("Read", "bad.json", &[]).context(), None);
    assert_eq!(env.post_tool_use("Bash", "bad.json", &[]).context(), None);
    // Another session.
    let input = json!({"session_id": "other", "cwd": env.root, "tool_name": "Write", "tool_input": {"file_path": env.path("bad.json")}});
    let out = env
        .cmd(&["hook", "post-tool-use"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(input.to_string())
        .run();
    assert_eq!(out.context(), None);
    // A file outside the project.
    let outside = tempfile::NamedTempFile::with_suffix(".json").unwrap();
    std::fs::write(outside.path(), "{").unwrap();
    let input = json!({"session_id": SESSION, "cwd": env.root, "tool_name": "Write", "tool_input": {"file_path": outside.path()}});
    let out = env
        .cmd(&["hook", "post-tool-use"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(input.to_string())
        .run();
    assert_eq!(out.context(), None);
    // An unsealed (edited) state.
    let mut state = env.state();
    state["max_iterations"] = json!(999);
    env.set_state(&state);
    assert_eq!(env.post_tool_use("Write", "bad.json", &[]).context(), None);
}

#[test]
fn project_config_overrides_checks_and_a_slow_check_times_out() {
    let env = TestEnv::new();
    env.write(
        ".claude/pagent/config.json",
        &json!({"backpressure": {"checks": {
            "json": false,
            "py": [{"name": "slow lint", "command": ["sleep", "5"], "timeout": 1}],
            "txt": [{"command": ["grep", "-n", "TODO", "{file}"], "fail_on_output": true}]
        }}})
        .to_string(),
    );
    let refused = env.cmd(&["ralph", "Fix it"]).failure();
    let mut said = Said::new();
    said.say("pagent ralph 'Fix it'", &refused.stderr);
    env.cmd(&["trust"]).success();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.write("bad.json", "{");
    assert_eq!(
        env.post_tool_use("Write", "bad.json", &[]).context(),
        None,
        "json checks are off"
    );
    env.write("a.py", "x = 1\n");
    let baseline = env.baseline();
    let started = std::time::Instant::now();
    let context = env.post_tool_use("Write", "a.py", &[]).context().unwrap();
    // The 1 s timeout, then the kill: under the 5 s the lint would run unstopped.
    baseline.assert_within(
        started
            .elapsed()
            .saturating_sub(std::time::Duration::from_secs(1)),
        30,
        std::time::Duration::from_secs(3),
        "a hook whose lint timed out",
    );
    said.say("after a write of a.py", &context);
    env.write("notes.txt", "done\nTODO: tests\n");
    let context = env
        .post_tool_use("Write", "notes.txt", &[])
        .context()
        .unwrap();
    said.say("after a write of notes.txt", &context);
    assert_text!(said.text());
    // The settings were sealed into the state at set-up.
    assert_eq!(env.state()["backpressure"]["checks"]["json"], json!(false));
}

#[test]
fn a_workflow_can_configure_checks_but_not_always() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    let stage = json!({"name": "a", "prompt": "p", "exit_when": {"file_exists": "x"}});
    env.write(
        "flow.json",
        &json!({"backpressure": {"checks": {"json": false}}, "stages": [stage]}).to_string(),
    );
    env.cmd(&["run", "prd.md", "--workflow", "flow.json"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.write("bad.json", "{");
    assert_eq!(env.post_tool_use("Write", "bad.json", &[]).context(), None);
    env.write(
        "flow.json",
        &json!({"backpressure": {"always": true}, "stages": [stage]}).to_string(),
    );
    let out = env
        .cmd(&["run", "prd.md", "--workflow", "flow.json", "--force"])
        .failure();
    let mut said = Said::new();
    said.say("a workflow with backpressure.always", &out.stderr);
    env.write(
        ".claude/pagent/config.json",
        &json!({"backpressure": {"always": true}}).to_string(),
    );
    let out = env.cmd(&["ralph", "--force", "x"]).failure();
    said.say("a project config with backpressure.always", &out.stderr);
    assert_text!(said.text());
}

#[test]
fn the_users_config_can_turn_checks_on_without_a_loop() {
    let env = TestEnv::new();
    std::fs::create_dir_all(&env.config).unwrap();
    std::fs::write(
        env.config.join("config.json"),
        json!({"backpressure": {"always": true}}).to_string(),
    )
    .unwrap();
    env.write("bad.json", "[1,");
    let context = env
        .post_tool_use("Write", "bad.json", &[])
        .context()
        .unwrap();
    assert_text!(context);
}

#[test]
fn status_shows_the_last_checks() {
    let env = active();
    env.write("bad.json", "{");
    env.post_tool_use("Write", "bad.json", &[]);
    env.write("ok.toml", "a = 1\n");
    env.post_tool_use("Write", "ok.toml", &[]);
    let status = env.cmd(&["status"]).success().stdout;
    assert_text!(status);
    let json: serde_json::Value = env.status();
    assert_eq!(json["checks"].as_array().unwrap().len(), 2, "{json}");
    let _ = OsStr::new("");
}

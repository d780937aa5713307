//! `pagent hook post-tool-use`: checks of edited files while a loop is active.

use std::ffi::OsStr;
use std::path::Path;

use serde_json::json;

use crate::util::*;

/// A ralph loop owned by `SESSION`.
fn active() -> TestEnv {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env
}

/// A PATH holding only `dirs` (and nothing of the machine's).
fn path_of(dirs: &[&Path]) -> std::ffi::OsString {
    std::env::join_paths(dirs).unwrap()
}

fn check_events(env: &TestEnv) -> Vec<String> {
    env.read(".claude/pagent/events.jsonl")
        .lines()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
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
    for (file, content, expected) in cases {
        env.write(file, &content);
        let out = env.post_tool_use("Write", file, &[]);
        let context = out
            .context()
            .unwrap_or_else(|| panic!("{file}: no feedback\n{out}"));
        assert!(context.contains(expected), "{file}: {context}");
        assert!(context.contains("nested deeper than"), "{file}: {context}");
    }
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
        assert!(
            context.starts_with(&format!(
                "pagent checked {file} after your edit and found problems"
            )),
            "{context}"
        );
        assert!(context.contains(expected), "{file}: {context}");
    }
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
fn python_is_compiled_when_present_and_skipped_when_absent() {
    let env = active();
    env.write("app.py", "def f(:\n    pass\n");
    let context = env.post_tool_use("Write", "app.py", &[]).context().unwrap();
    assert!(
        context.contains("python3 -m py_compile failed"),
        "{context}"
    );
    assert!(context.contains("SyntaxError"), "{context}");
    env.write("app.py", "def f():\n    pass\n");
    assert_eq!(env.post_tool_use("Write", "app.py", &[]).context(), None);
    assert!(
        !env.exists("__pycache__"),
        "py_compile left byte code in the project"
    );

    let empty = env.home.join("empty-bin");
    std::fs::create_dir_all(&empty).unwrap();
    env.write("app.py", "def f(:\n");
    let path = path_of(&[&empty]);
    assert_eq!(
        env.post_tool_use("Write", "app.py", &[("PATH", &path)])
            .context(),
        None
    );
    assert!(
        check_events(&env)
            .last()
            .unwrap()
            .contains("skipped: python3 is not installed")
    );
}

#[test]
fn shell_scripts_get_bash_n_then_shellcheck_if_installed() {
    let env = active();
    env.write("run.sh", "if true; then\n  echo hi\n");
    let bash_only = env.fake_tool("bin-bash", "bash", "exec /bin/bash \"$@\"");
    let context = env
        .post_tool_use("Write", "run.sh", &[("PATH", &path_of(&[&bash_only]))])
        .context()
        .unwrap();
    assert!(context.contains("bash -n failed"), "{context}");
    assert!(context.contains("syntax error"), "{context}");
    assert!(!context.contains("shellcheck"), "{context}");

    env.write("run.sh", "echo $1\n");
    let with_shellcheck = env.fake_tool(
        "bin-bash",
        "shellcheck",
        "echo \"$3:1:6: note: Double quote to prevent globbing [SC2086]\"; exit 1",
    );
    let context = env
        .post_tool_use(
            "Write",
            "run.sh",
            &[("PATH", &path_of(&[&with_shellcheck]))],
        )
        .context()
        .unwrap();
    assert!(context.contains("shellcheck -f gcc failed"), "{context}");
    assert!(
        context.contains("run.sh:1:6: note: Double quote"),
        "{context}"
    );
}

#[test]
fn typescript_needs_a_tsconfig_and_a_local_compiler() {
    let env = active();
    env.write("web/src/app.ts", "let x: number = 'a';\n");
    assert_eq!(
        env.post_tool_use("Write", "web/src/app.ts", &[]).context(),
        None,
        "no tsconfig: skipped"
    );
    env.write("web/tsconfig.json", "{}");
    assert_eq!(
        env.post_tool_use("Write", "web/src/app.ts", &[]).context(),
        None,
        "no local tsc: skipped"
    );
    env.write("web/node_modules/.bin/tsc", "#!/bin/sh\necho \"src/app.ts(1,5): error TS2322: Type 'string' is not assignable (cwd $(basename \"$PWD\"), args $*)\"\nexit 2\n");
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(
        env.path("web/node_modules/.bin/tsc"),
        std::fs::Permissions::from_mode(0o755),
    )
    .unwrap();
    // The project's own tsc is its code: skipped, said once, until trusted.
    let untrusted = env.post_tool_use("Write", "web/src/app.ts", &[]);
    assert!(
        !untrusted.stdout.contains("additionalContext"),
        "{untrusted}"
    );
    assert!(
        untrusted
            .stdout
            .contains("Run `pagent trust web/node_modules/.bin/tsc` to allow it"),
        "{untrusted}"
    );
    let again = env.post_tool_use("Write", "web/src/app.ts", &[]);
    assert!(again.stdout.is_empty(), "said once: {again}");
    env.cmd(&["trust", "web/node_modules/.bin/tsc"]).success();
    let context = env
        .post_tool_use("Write", "web/src/app.ts", &[])
        .context()
        .unwrap();
    assert!(context.contains("error TS2322"), "{context}");
    assert!(
        context.contains("(cwd web, args --noEmit --pretty false)"),
        "{context}"
    );
}

#[test]
fn rust_files_get_cargo_check_in_their_crate() {
    let env = active();
    env.write("notes/scratch.rs", "fn main() { let x: u32 = \"a\"; }\n");
    assert_eq!(
        env.post_tool_use("Write", "notes/scratch.rs", &[])
            .context(),
        None,
        "no Cargo.toml: skipped"
    );
    let fake = env.fake_tool(
        "bin-cargo",
        "cargo",
        "echo \"src/main.rs:1:26: error[E0308]: mismatched types (in ${PWD##*/}: $*)\"; exit 101",
    );
    env.write(
        "crate/Cargo.toml",
        "[package]\nname = \"demo\"\nversion = \"0.1.0\"\nedition = \"2021\"\n",
    );
    env.write("crate/src/main.rs", "fn main() { let x: u32 = \"a\"; }\n");
    // cargo check runs the crate's build scripts: not before the user trusts it.
    let untrusted = env.post_tool_use(
        "Write",
        "crate/src/main.rs",
        &[("PATH", &path_of(&[&fake]))],
    );
    assert!(
        !untrusted.stdout.contains("additionalContext"),
        "{untrusted}"
    );
    assert!(
        untrusted
            .stdout
            .contains("Run `pagent trust crate/Cargo.toml` to allow it"),
        "{untrusted}"
    );
    env.cmd(&["trust", "crate/Cargo.toml"]).success();
    let context = env
        .post_tool_use(
            "Write",
            "crate/src/main.rs",
            &[("PATH", &path_of(&[&fake]))],
        )
        .context()
        .unwrap();
    assert!(
        context.contains(
            "error[E0308]: mismatched types (in crate: check --quiet --message-format short)"
        ),
        "{context}"
    );
}

#[test]
fn go_files_get_gofmt_and_go_vet_in_a_module() {
    let env = active();
    let bin = env.fake_tool("bin-go", "gofmt", "echo \"$2\"");
    env.fake_tool(
        "bin-go",
        "go",
        "echo \"./main.go:3:2: fmt.Printf format %d has arg of wrong type\"; exit 1",
    );
    env.write("svc/main.go", "package main\nfunc main(){}\n");
    let context = env
        .post_tool_use("Write", "svc/main.go", &[("PATH", &path_of(&[&bin]))])
        .context()
        .unwrap();
    assert!(
        context.contains("gofmt -l failed:\ngofmt -l reported:"),
        "{context}"
    );
    assert!(!context.contains("go vet"), "no go.mod, no vet: {context}");
    env.write("svc/go.mod", "module svc\n");
    let context = env
        .post_tool_use("Write", "svc/main.go", &[("PATH", &path_of(&[&bin]))])
        .context()
        .unwrap();
    assert!(
        context.contains("go vet . failed:\n./main.go:3:2: fmt.Printf format"),
        "{context}"
    );
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
    assert!(
        refused.stderr.contains(".py files: sleep 5") && refused.stderr.contains("pagent trust"),
        "{refused}"
    );
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
    let started = std::time::Instant::now();
    let context = env.post_tool_use("Write", "a.py", &[]).context().unwrap();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
    assert!(
        context
            .contains("slow lint did not finish within 1 s and was stopped, so a.py is unchecked"),
        "{context}"
    );
    env.write("notes.txt", "done\nTODO: tests\n");
    let context = env
        .post_tool_use("Write", "notes.txt", &[])
        .context()
        .unwrap();
    assert!(context.contains("2:TODO: tests"), "{context}");
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
    assert!(out.stderr.contains("backpressure.always"), "{out}");
    env.write(
        ".claude/pagent/config.json",
        &json!({"backpressure": {"always": true}}).to_string(),
    );
    let out = env.cmd(&["ralph", "--force", "x"]).failure();
    assert!(
        out.stderr
            .contains("backpressure.always is only honoured in your own config.json"),
        "{out}"
    );
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
    assert!(context.contains("bad.json: line 1, column 3"), "{context}");
}

#[test]
fn status_shows_the_last_checks() {
    let env = active();
    env.write("bad.json", "{");
    env.post_tool_use("Write", "bad.json", &[]);
    env.write("ok.toml", "a = 1\n");
    env.post_tool_use("Write", "ok.toml", &[]);
    let status = env.cmd(&["status"]).success().stdout;
    assert!(
        status.contains("checks: JSON syntax bad.json: failed"),
        "{status}"
    );
    assert!(status.contains("TOML syntax ok.toml: passed"), "{status}");
    let json: serde_json::Value =
        serde_json::from_str(&env.cmd(&["status", "--json"]).success().stdout).unwrap();
    assert_eq!(json["checks"].as_array().unwrap().len(), 2, "{json}");
    let _ = OsStr::new("");
}

//! A cloned repository is hostile, and processes are the easiest way in (issue 19): no
//! planted file may run because pagent started a process in the project. Each test
//! plants what a repository could carry (a `py_compile.py`, a `typing.py`, a `./sh`, a
//! `./git`, a loader in `node_modules`), runs what a user or Claude Code would run, and
//! checks that nothing planted ran while the real checks still did their work.

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::time::{Duration, Instant};

use serde_json::json;

use crate::backpressure::active;
use crate::util::{SESSION, TestEnv};
use pagent_door::testing;

/// Planted programs and modules leave this file when they run.
fn pwned(env: &TestEnv) -> bool {
    env.exists("pwned") || env.exists("sub/pwned")
}

fn executable(env: &TestEnv, rel: &str, script: &str) {
    env.write(rel, &format!("#!/bin/sh\n{script}\n"));
    fs::set_permissions(env.path(rel), fs::Permissions::from_mode(0o755)).unwrap();
}

/// `PATH` as a careless shell profile has it: the current folder first.
fn dot_path() -> std::ffi::OsString {
    let mut path = std::ffi::OsString::from(".:");
    path.push(std::env::var_os("PATH").unwrap());
    path
}

/// Finding 1: the built-in Python check ran `python3 -m py_compile` in the project root,
/// and `-m` put the root first on `sys.path`: the project's `py_compile.py` (or any module
/// the standard one imports, such as `typing.py`) ran on the first `.py` edit.
#[test]
fn finding_1_a_planted_py_compile_or_typing_module_is_never_imported() {
    let env = active();
    for dir in ["", "sub/"] {
        for module in ["py_compile", "typing", "importlib"] {
            env.write(
                &format!("{dir}{module}.py"),
                "open(__file__.rsplit('/', 1)[0] + '/pwned', 'w').write('x')\n",
            );
        }
    }
    env.write("sub/app.py", "def f(:\n    pass\n");
    let context = env
        .post_tool_use("Write", "sub/app.py", &[])
        .context()
        .unwrap();
    assert!(!pwned(&env), "a planted module was imported: {context}");
    assert!(
        context.contains("SyntaxError"),
        "the check still ran: {context}"
    );
    env.write("sub/app.py", "def f():\n    pass\n");
    assert_eq!(
        env.post_tool_use("Write", "sub/app.py", &[]).context(),
        None
    );
    assert!(!pwned(&env));
    assert!(!env.exists("sub/__pycache__") && !env.exists("__pycache__"));
}

/// Finding 4: with `.` (or an empty entry) on `PATH`, `sh -c`, the checkers and the
/// programs a check's shell looks up were the project's own `./sh`, `./python3`, `./git`.
#[test]
fn finding_4_a_path_with_dot_never_runs_the_projects_programs() {
    let env = TestEnv::new();
    for name in ["sh", "python3", "bash", "shellcheck", "git"] {
        executable(&env, name, "touch pwned; exit 1");
    }
    env.write("prd.md", "# PRD\n");
    env.write(
        ".claude/pagent/workflows/w.json",
        &json!({"stages": [{"name": "s", "prompt": "p",
            "exit_when": {"custom": "git --version >/dev/null; echo checked; exit 1", "timeout": 10}}]})
        .to_string(),
    );
    env.cmd(&["run", "prd.md", "--workflow", "w", "--trust"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    // The real binary, whose children would search the PATH it was given.
    let stop = env
        .bin(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .env("PATH", dot_path())
        .stdin(env.stop_input("working").to_string())
        .run();
    assert!(stop.blocked().contains("checked"), "{stop}");
    for file in ["a.py", "a.sh"] {
        env.write(file, "x = 1\n");
        let input = json!({"session_id": SESSION, "cwd": env.root, "hook_event_name": "PostToolUse",
            "tool_name": "Write", "tool_input": {"file_path": env.path(file)}});
        env.bin(&["hook", "post-tool-use"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .env("PATH", dot_path())
            .stdin(input.to_string())
            .run()
            // A hook that failed before its checkers ran would pass the test below.
            .answered();
    }
    assert!(!pwned(&env), "a planted program ran");
}

/// Finding 4, `pagent loop`: its `--command` agent runs through `sh`, which is `/bin/sh`
/// by path, never the project's `./sh`, and the agent's own `PATH` has no `.`.
#[test]
fn finding_4_a_loop_command_never_runs_the_projects_sh() {
    let env = TestEnv::new();
    executable(&env, "sh", "touch pwned; exit 1");
    executable(&env, "git", "touch pwned; exit 1");
    let out = env
        .cmd(&[
            "loop",
            "--command",
            "git --version >/dev/null 2>&1; echo \"PATH=$PATH\"; echo '<promise>DONE</promise>'",
            "ralph",
            "--no-progress-limit",
            "0",
            "task",
        ])
        .env("PATH", dot_path())
        .run();
    assert_eq!(out.code, Some(0), "{out}");
    assert!(!pwned(&env), "{out}");
    let log = fs::read_dir(env.path(".claude/pagent/runs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.extension().is_some_and(|x| x == "log"))
        .unwrap();
    let log = fs::read_to_string(log).unwrap();
    assert!(log.contains("PATH=/"), "{log}");
    assert!(!log.contains("PATH=.:") && !log.contains(":.:"), "{log}");
}

/// Finding 10: a check whose child calls `setsid` leaves the process group, survives the
/// group kill and keeps the output pipe open; the check's whole output was lost. What it
/// printed before it was stopped now reaches the feedback, and the hook still returns
/// soon after the check's timeout.
#[test]
fn finding_10_a_setsid_child_holding_the_pipe_keeps_the_checks_output() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    env.write(
        ".claude/pagent/workflows/w.json",
        &json!({"stages": [{"name": "s", "prompt": "p", "exit_when": {
            "custom": "echo started; printf 'the failing test is %s\\n' test_parse >&2; setsid sh -c 'echo $$ > escaped.pid; exec sleep 30' & sleep 30",
            "timeout": 1}}]})
        .to_string(),
    );
    env.cmd(&["run", "prd.md", "--workflow", "w", "--trust"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let baseline = env.baseline();
    let started = Instant::now();
    let stop = env.stop(&env.stop_input("working"));
    let took = started.elapsed();
    if let Ok(pid) = fs::read_to_string(env.path("escaped.pid")) {
        // The test's own escaped grandchild.
        testing::signal(pid.trim().parse().unwrap(), testing::SIGKILL);
    }
    // The reason quotes the command too, whose `%s` keeps it from holding this line:
    // only the check's own output can.
    let reason = stop.blocked();
    assert!(
        reason.contains("the failing test is test_parse"),
        "{reason}"
    );
    // The 1 s timeout, the kill and a moment's drain: far from the 30 s the escaped
    // sleep holds the pipe.
    baseline.assert_within(
        took.saturating_sub(Duration::from_secs(1)),
        100,
        Duration::from_secs(7),
        "a hook whose check left a setsid child",
    );
}

/// A trusted TypeScript may load only its own files: real TypeScript 5 requires the
/// project's `source-map-support` when `NODE_ENV=development`, so trusting `tsc` would
/// run a loader planted beside it in `node_modules`. The check runs, the loader does not.
#[test]
fn a_trusted_tsc_never_loads_a_loader_planted_in_node_modules() {
    let env = TestEnv::new();
    fs::create_dir_all(&env.config).unwrap();
    fs::write(
        env.config.join("config.json"),
        json!({"backpressure": {"always": true}}).to_string(),
    )
    .unwrap();
    env.write("tsconfig.json", "{}");
    env.write(
        "node_modules/typescript/package.json",
        r#"{"name": "typescript", "bin": {"tsc": "./bin/tsc"}}"#,
    );
    env.write(
        "node_modules/typescript/bin/tsc",
        "#!/usr/bin/env node\nrequire('../lib/tsc.js');\n",
    );
    // What TypeScript 5's lib/_tsc.js does, in short.
    env.write(
        "node_modules/typescript/lib/tsc.js",
        "if (/^development$/i.test(process.env.NODE_ENV)) { try { require('source-map-support').install(); } catch {} }\n\
         console.log('app.ts(1,5): error TS2322: checked'); process.exit(2);\n",
    );
    env.write(
        "node_modules/source-map-support/index.js",
        "require('fs').writeFileSync('pwned', ''); exports.install = () => {};\n",
    );
    env.write("app.ts", "let x: number = 'a';\n");
    env.cmd(&["trust", "node_modules/typescript"]).success();
    let input = json!({"session_id": SESSION, "cwd": env.root, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": {"file_path": env.path("app.ts")}});
    let out = env
        .bin(&["hook", "post-tool-use"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .env("NODE_ENV", "development")
        .stdin(input.to_string())
        .run();
    assert!(
        out.context().unwrap().contains("error TS2322: checked"),
        "{out}"
    );
    assert!(!pwned(&env), "the planted loader ran: {out}");
}

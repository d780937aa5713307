//! Issue 30, §5's second finding: `PAGENT_DASHBOARD_TOKEN`, the user's long-lived
//! dashboard token, reached every agent and check pagent started. Nothing secret of
//! pagent's may reach a child: each kind of start here runs a child that writes down its
//! whole environment, with the token in pagent's own, and every file must lack it (and
//! hold a variable set beside it, so the files prove the environment was inherited).
//! Every command runs as the real binary: a child of an in-process command would inherit
//! the test's environment, not the one the test gives pagent.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::json;

use crate::util::*;

const TOKEN: &str = "secret-dashboard-token-0123456789abcdefghij";
/// Set beside the token: every child must have it, or the test proves nothing.
const BESIDE: (&str, &str) = ("SECRETS_TEST_INHERITED", "yes");

/// Where the children write their environments, and the shell line that writes one.
struct Dumps(PathBuf);

impl Dumps {
    fn new(env: &TestEnv) -> Dumps {
        let dir = env.home.join("dumps");
        fs::create_dir_all(&dir).unwrap();
        Dumps(dir)
    }

    /// `env > DIR/NAME-PID.env`: a child's whole environment.
    fn line(&self, name: &str) -> String {
        format!("env > {}/{name}-$$.env", self.0.display())
    }

    /// Every dump of `name`, checked: there is one, none holds the token, each holds the
    /// variable set beside it.
    fn check(&self, name: &str) {
        let dumps: Vec<PathBuf> = fs::read_dir(&self.0)
            .unwrap()
            .map(|e| e.unwrap().path())
            .filter(|p| {
                p.file_name()
                    .unwrap()
                    .to_string_lossy()
                    .starts_with(&format!("{name}-"))
            })
            .collect();
        assert!(!dumps.is_empty(), "no child {name} ran");
        for dump in dumps {
            let text = fs::read_to_string(&dump).unwrap();
            assert!(
                !text.contains(TOKEN),
                "{name} got the dashboard token:\n{text}"
            );
            assert!(
                text.contains(&format!("{}={}", BESIDE.0, BESIDE.1)),
                "{name} did not inherit pagent's environment:\n{text}"
            );
        }
    }
}

/// `pagent ARGS` as the real binary with the token (and the variable beside it) in its
/// environment, `dir` first on `PATH`.
fn pagent(env: &TestEnv, args: &[&str], dir: Option<&Path>) -> TestCommand {
    let mut command = env
        .bin(args)
        .env("PAGENT_DASHBOARD_TOKEN", TOKEN)
        .env(BESIDE.0, BESIDE.1);
    if let Some(dir) = dir {
        command = command.env(
            "PATH",
            format!("{}:{}", dir.display(), std::env::var("PATH").unwrap()),
        );
    }
    command
}

/// A git on `PATH` that writes its environment down, then is the real git.
fn recording_git(env: &TestEnv, dumps: &Dumps) -> PathBuf {
    let real = String::from_utf8(
        std::process::Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    env.fake_tool(
        "tools",
        "git",
        &format!("{}\nexec {} \"$@\"", dumps.line("git"), real.trim()),
    )
}

/// `pagent loop` in a worktree: its `--setup` command, the agent, `git push` (and the
/// `git config` pagent reads before it), and `gh pr create`.
#[test]
fn issue_30_no_pagent_secret_reaches_a_loops_setup_agent_git_or_gh() {
    let env = TestEnv::new();
    let dumps = Dumps::new(&env);
    crate::git::git(&env.root, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    env.write("README.md", "hello\n");
    crate::git::git(&env.root, &["add", "README.md"]);
    crate::git::git(&env.root, &["commit", "-q", "-m", "start"]);
    let origin = env.home.join("origin.git");
    git2::Repository::init_bare(&origin).unwrap();
    crate::git::git(
        &env.root,
        &["remote", "add", "origin", origin.to_str().unwrap()],
    );
    let tools = recording_git(&env, &dumps);
    env.fake_tool(
        "tools",
        "gh",
        &format!("{}\necho https://example.invalid/pull/1", dumps.line("gh")),
    );
    let agent = format!(
        "cat > /dev/null; {}; echo '<promise>DONE</promise>'",
        dumps.line("agent")
    );
    let setup = dumps.line("setup");
    let out = pagent(
        &env,
        &[
            "loop",
            "--worktree",
            "w",
            "--setup",
            &setup,
            "--command",
            &agent,
            "--pr",
            "ralph",
            "Task",
        ],
        Some(&tools),
    )
    .run();
    assert_eq!(out.code, Some(0), "{out}");
    for name in ["setup", "agent", "git", "gh"] {
        dumps.check(name);
    }
}

/// A stage's exit condition that is a command, in `pagent loop` and in a session's Stop
/// hook.
#[test]
fn issue_30_no_pagent_secret_reaches_an_exit_condition_check() {
    let env = TestEnv::new();
    let dumps = Dumps::new(&env);
    env.write("prd.md", "# PRD\n");
    env.write(
        "flow.json",
        &json!({"name": "flow", "stages": [{"name": "one", "prompt": "Do it.",
            "exit_when": {"custom": format!("{}; exit 0", dumps.line("check"))}}]})
        .to_string(),
    );
    let agent = format!("cat > /dev/null; {}", dumps.line("agent"));
    let out = pagent(
        &env,
        &[
            "loop",
            "--command",
            &agent,
            "run",
            "prd.md",
            "--workflow",
            "flow.json",
            "--trust",
        ],
        None,
    )
    .run();
    assert_eq!(out.code, Some(0), "{out}");
    dumps.check("check");
    dumps.check("agent");
}

/// The reviewer the Stop hook starts for a `review` condition.
#[test]
fn issue_30_no_pagent_secret_reaches_a_reviewer() {
    let env = TestEnv::new();
    let dumps = Dumps::new(&env);
    let reviewer = env.fake_tool(
        "tools",
        "review.sh",
        &format!(
            "cat > /dev/null; {}; echo '{{\"met\": true, \"missing\": []}}'",
            dumps.line("reviewer")
        ),
    );
    env.cmd(&[
        "ralph",
        "Parse the input",
        "--review",
        "a test for the empty input",
        "--reviewer-command",
        &reviewer.join("review.sh").display().to_string(),
    ])
    .env("CLAUDE_CODE_SESSION_ID", SESSION)
    .success();
    let stop = pagent(&env, &["hook", "stop"], None)
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(env.stop_input("Done.\n<promise>DONE</promise>").to_string())
        .run();
    assert!(stop.allowed().is_some(), "{stop}");
    dumps.check("reviewer");
}

/// A backpressure check the project configured (trusted), after an edit.
#[test]
fn issue_30_no_pagent_secret_reaches_a_backpressure_check() {
    let env = TestEnv::new();
    let dumps = Dumps::new(&env);
    env.write(
        ".claude/pagent/config.json",
        &json!({"backpressure": {"checks": {
            "txt": [{"command": ["sh", "-c", dumps.line("backpressure")]}]
        }}})
        .to_string(),
    );
    env.cmd(&["trust"]).success();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.write("notes.txt", "hello\n");
    let input = json!({
        "session_id": SESSION, "cwd": env.root, "hook_event_name": "PostToolUse",
        "tool_name": "Write", "tool_input": {"file_path": env.path("notes.txt")},
        "tool_response": {"type": "update"},
    });
    pagent(&env, &["hook", "post-tool-use"], None)
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(input.to_string())
        .run()
        .answered();
    dumps.check("backpressure");
}

/// The user's notifier, started (through the detached helper) when a loop ends.
#[test]
fn issue_30_no_pagent_secret_reaches_the_notifier() {
    let env = TestEnv::new();
    let dumps = Dumps::new(&env);
    let notifier = env.fake_tool("tools", "notify.sh", &dumps.line("notifier"));
    fs::create_dir_all(&env.config).unwrap();
    fs::write(
        env.config.join("config.json"),
        json!({"notify": {"command": [notifier.join("notify.sh"), "{status}"]}}).to_string(),
    )
    .unwrap();
    env.cmd(&["ralph", "Fix it"]).success();
    let stop = pagent(&env, &["hook", "stop"], None)
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(env.stop_input("Done.\n<promise>DONE</promise>").to_string())
        .run();
    assert!(stop.allowed().is_some(), "{stop}");
    wait_for(Duration::from_secs(20), "the notifier", || {
        fs::read_dir(&dumps.0).unwrap().next().is_some()
    });
    // The notifier writes as it runs: wait for its last line.
    wait_for(Duration::from_secs(20), "the notifier's whole dump", || {
        fs::read_dir(&dumps.0)
            .unwrap()
            .all(|e| fs::read_to_string(e.unwrap().path()).is_ok_and(|t| t.contains(BESIDE.0)))
    });
    dumps.check("notifier");
}

/// `pagent parallel`'s loops (each a child `pagent loop`) and their agents.
#[test]
fn issue_30_no_pagent_secret_reaches_parallels_loops_or_their_agents() {
    let env = TestEnv::new();
    let dumps = Dumps::new(&env);
    crate::git::git(&env.root, &["symbolic-ref", "HEAD", "refs/heads/main"]);
    env.write("README.md", "hello\n");
    crate::git::git(&env.root, &["add", "README.md"]);
    crate::git::git(&env.root, &["commit", "-q", "-m", "start"]);
    env.write("tasks.txt", "one: do one\ntwo: do two\n");
    let agent = format!(
        "cat > /dev/null; {}; echo '<promise>DONE</promise>'",
        dumps.line("agent")
    );
    let out = pagent(&env, &["parallel", "tasks.txt", "--command", &agent], None).run();
    assert_eq!(out.code, Some(0), "{out}");
    dumps.check("agent");
}

/// `pagent dashboard`'s browser opener, given the page of the user's own token.
#[test]
fn issue_30_no_pagent_secret_reaches_the_browser_opener() {
    let env = TestEnv::new();
    let dumps = Dumps::new(&env);
    let tools = env.fake_tool("tools", "xdg-open", &dumps.line("opener"));
    let mut child = pagent(&env, &["dashboard"], Some(&tools))
        .env("DISPLAY", ":0")
        .command()
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    wait_for(Duration::from_secs(20), "the browser opener", || {
        fs::read_dir(&dumps.0)
            .unwrap()
            .any(|e| fs::read_to_string(e.unwrap().path()).is_ok_and(|t| t.contains(BESIDE.0)))
    });
    let _ = child.kill();
    let _ = child.wait();
    dumps.check("opener");
}

/// `pagent install`'s `claude plugin ...` calls.
#[test]
fn issue_30_no_pagent_secret_reaches_claude_plugin_at_install() {
    let env = TestEnv::new();
    let dumps = Dumps::new(&env);
    let claude = env.fake_tool(
        "tools",
        "claude",
        &format!(
            "{}\ncase \"$*\" in *'--json') echo '[]' ;; esac",
            dumps.line("claude")
        ),
    );
    let claude = claude.join("claude").display().to_string();
    let out = pagent(
        &env,
        &[
            "install",
            "--claude",
            &claude,
            "--from",
            env!("CARGO_MANIFEST_DIR"),
        ],
        None,
    )
    .env("PAGENT_MARKETPLACE_DIR", env.home.join("marketplace"))
    .env("CLAUDE_CONFIG_DIR", env.home.join(".claude"))
    .run();
    assert_eq!(out.code, Some(0), "{out}");
    dumps.check("claude");
}

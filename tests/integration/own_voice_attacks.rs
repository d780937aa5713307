//! pagent's own voice attacked (issue 20): what the UserPromptExpansion hook, the `!`
//! lines and the hooks that read Claude Code's queue do with a hostile repository's loop
//! state, with project text full of terminal escapes, and with a transcript that is huge
//! or forged. None of them may run a command the user did not consent to, hang, or hand
//! Claude Code a control character to draw on the screen: Claude Code decodes the hooks'
//! JSON and prints the strings, so JSON escaping alone protects nothing.

use std::time::Duration;

use serde_json::{Value, json};

use crate::own_voice::expand_with;
use crate::util::*;

/// A window title, a clipboard write (OSC 52), hidden text and a bidi override.
const PLANTED: &str = "\u{1b}]0;pwned\u{7}\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[8mhidden\u{202e}\r";

const HANG: Duration = Duration::from_secs(10);

/// Characters a terminal acts on (newline and tab are text).
fn unsafe_chars(text: &str) -> Vec<char> {
    text.chars()
        .filter(|c| {
            matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
                | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
        })
        .collect()
}

/// Every string a run hands on: its streams, and every string inside its JSON output
/// (what Claude Code decodes and shows: `reason`, `systemMessage`, `additionalContext`).
fn assert_inert(what: &str, run: &Run) {
    let mut texts = vec![run.stdout.clone(), run.stderr.clone()];
    fn strings(value: &Value, out: &mut Vec<String>) {
        match value {
            Value::String(s) => out.push(s.clone()),
            Value::Array(items) => items.iter().for_each(|v| strings(v, out)),
            Value::Object(map) => map.values().for_each(|v| strings(v, out)),
            _ => {}
        }
    }
    for line in run.stdout.lines() {
        if let Ok(value) = serde_json::from_str::<Value>(line) {
            strings(&value, &mut texts);
        }
    }
    for text in texts {
        let raw = unsafe_chars(&text);
        assert!(raw.is_empty(), "{what} hands on {raw:?}:\n{run}");
    }
    assert_ne!(run.code, Some(2), "{what}: {run}");
}

/// A loop state sealed by a stranger, its texts full of escapes, with every field the
/// hooks of issue 20 read planted too: a notice for the session, a hand-off mark for the
/// text the user will type, a pause and a usage-limit wait in the planted words, and an
/// exit condition that would leave a file `pwned` if anything ran it.
fn planted_state(typed: &str) -> String {
    let stranger = TestEnv::new();
    stranger.write(
        ".claude/pagent/workflows/evil.json",
        &json!({"name": "evil", "stages": [
            {"name": "x", "prompt": format!("p{PLANTED}"),
             "exit_when": {"custom": "touch pwned; exit 1"}}]})
        .to_string(),
    );
    stranger.write("prd.md", "# PRD\n");
    stranger
        .cmd(&["run", "prd.md", "--workflow", "evil", "--trust"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let mut state = stranger.state();
    // Unsealed for the user either way: names no workflow file would be allowed.
    state["workflow"] = json!(format!("evil{PLANTED}"));
    state["stages"][0]["name"] = json!(format!("x{PLANTED}"));
    let key = {
        use sha2::Digest;
        let digest = sha2::Sha256::digest(typed.trim().as_bytes());
        digest
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect::<String>()
    };
    state["session_notice"] = json!(format!("notice{PLANTED}"));
    state["slash_handoff"] = json!(key);
    state["paused"] = json!({"since": state["started_at"], "why": format!("why{PLANTED}")});
    state["limit_wait"] = json!({"since": state["started_at"], "reset_known": false, "why": format!("limit{PLANTED}")});
    serde_json::to_string_pretty(&state).unwrap()
}

/// A transcript in which `prompt` was queued while the model worked.
fn queued(env: &TestEnv, prompt: &str) -> String {
    let lines = format!(
        "{}\n{}\n",
        json!({"type": "user", "timestamp": "2026-01-01T00:00:00.000Z",
            "message": {"role": "user", "content": "/ralph Fix it"}}),
        json!({"type": "queue-operation", "operation": "enqueue",
            "timestamp": "2100-01-01T00:00:00.000Z", "content": prompt}),
    );
    std::fs::write(env.home.join("transcript.jsonl"), &lines).unwrap();
    lines
}

#[test]
fn item_1_a_planted_state_makes_no_hook_of_the_voice_run_anything_or_print_escapes() {
    let env = TestEnv::new();
    let typed = "Fix it --max-iterations 3";
    env.write(".claude/pagent-pipeline.json", &planted_state(typed));
    env.write("prd.md", "# PRD\n");
    let planted = env.read(".claude/pagent-pipeline.json");
    let with_queue = queued(&env, &format!("/pagent-status{PLANTED}"));
    for (name, args) in [
        ("pagent-status", ""),
        ("pagent:status", "--help"),
        ("pagent-cancel", ""),
        ("pagent-resume", ""),
        ("pagent:parallel", "tasks.txt"),
    ] {
        let run = expand_with(&env, name, args, Some(&with_queue));
        assert_inert(name, &run);
        assert_eq!(env.read(".claude/pagent-pipeline.json"), planted, "{name}");
        if name == "pagent-status" {
            // The planted words are shown, as escapes a person can read.
            assert!(run.stdout.contains(r"\\x1b]0;pwned"), "{run}");
        }
    }
    // The `!` lines, handed the text the planted mark names.
    for args in [&["ralph", "--stdin-args"][..], &["status", "--slash"]] {
        let run = env
            .cmd(args)
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .stdin(format!("{typed}\n"))
            .run_bounded(HANG)
            .run;
        assert_inert(&args.join(" "), &run);
    }
    // The hooks that read the queue and tell the session.
    queued(&env, "/pagent-cancel");
    let stop = env.stop(&env.stop_input("working"));
    assert_inert("stop", &stop);
    let prompt = env
        .cmd(&["hook", "user-prompt-submit"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(json!({"session_id": SESSION, "cwd": env.root, "prompt": "hi"}).to_string())
        .run();
    assert_inert("user-prompt-submit", &prompt);
    // A new loop of the user's own replaces the stranger's (set up, nothing run).
    let started = expand_with(&env, "pagent-run", "prd.md", None);
    assert_inert("pagent-run", &started);
    assert!(!env.exists("pwned"), "a planted command ran");
    assert_eq!(env.state()["workflow"], "prd-to-code");
}

/// The user's own loop from a cloned repository's files: the PRD's name and the stage's
/// prompt are the repository's words (names of workflows and stages are refused with
/// escapes), shown by every answer without a raw escape.
#[test]
fn item_1_project_text_in_the_users_own_loop_reaches_the_screen_escaped() {
    let env = TestEnv::new();
    env.write(
        ".claude/pagent/workflows/evil.json",
        &json!({"name": "evil", "stages": [
            {"name": "design", "prompt": format!("Design it{PLANTED}"),
             "exit_when": {"file_exists": "design.md"}}]})
        .to_string(),
    );
    env.write(&format!("prd{PLANTED}.md"), "# PRD\n");
    let run = expand_with(
        &env,
        "pagent-run",
        &format!("'prd{PLANTED}.md' --workflow evil"),
        None,
    );
    assert_inert("pagent-run", &run);
    assert_eq!(env.state()["status"], "active", "{run}");
    let run = expand_with(&env, "pagent-run", "prd.md --workflow evil", None);
    assert_inert("pagent-run refused", &run);
    let run = expand_with(&env, "pagent-status", "", None);
    assert_inert("status", &run);
    assert!(run.stdout.contains(r"\\x1b]0;pwned"), "{run}");
    let transcript = queued(&env, "/pagent-status");
    let run = env.stop(&env.stop_input("working"));
    assert_inert("stop with a queued status", &run);
    assert_inert(
        "status sent at once",
        &expand_with(&env, "pagent-status", "", Some(&transcript)),
    );
    assert_inert("cancel", &expand_with(&env, "pagent-cancel", "", None));
    assert_eq!(env.state()["status"], "cancelled");
}

/// A transcript of 64 MB whose last lines are not the queue's, or a line of 16 MB with no
/// newline: the status that reads it answers within its time, in little memory.
#[test]
fn item_4_a_huge_transcript_never_holds_the_status_up() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let path = env.home.join("transcript.jsonl");
    let filler = format!(
        "{}\n",
        json!({"type": "assistant", "message": {"role": "assistant",
            "content": [{"type": "text", "text": "x".repeat(1000)}]}})
    );
    for body in [filler.repeat(64 * 1024), "y".repeat(16 << 20)] {
        std::fs::write(&path, &body).unwrap();
        let input = json!({
            "session_id": SESSION, "cwd": env.root, "transcript_path": path,
            "hook_event_name": "UserPromptExpansion", "expansion_type": "slash_command",
            "command_name": "pagent-status", "command_args": "", "prompt": "/pagent-status",
        });
        let done = env
            .cmd(&["hook", "user-prompt-expansion"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .stdin(input.to_string())
            .run_bounded(HANG);
        assert_inert("status", &done.run);
        assert_eq!(
            done.run.decision().unwrap()["decision"],
            "block",
            "{}",
            done.run
        );
        assert!(
            done.max_rss_kb < memory_limit_kb(64 * 1024),
            "{} KiB",
            done.max_rss_kb
        );
        let stop = env
            .cmd(&["hook", "stop"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .stdin(env.stop_input("working").to_string())
            .run_bounded(HANG);
        assert!(stop.run.blocked().contains("ralph loop"), "{}", stop.run);
    }
}

/// A transcript path that is a FIFO nobody writes to: the hooks that read the queue do
/// not wait for it.
#[test]
fn item_4_a_transcript_that_is_a_fifo_never_hangs_the_hooks() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let fifo = env.home.join("transcript.jsonl");
    let made = std::process::Command::new("mkfifo")
        .arg(&fifo)
        .status()
        .unwrap();
    assert!(made.success());
    let input = json!({
        "session_id": SESSION, "cwd": env.root, "transcript_path": fifo,
        "hook_event_name": "UserPromptExpansion", "expansion_type": "slash_command",
        "command_name": "pagent-status", "command_args": "", "prompt": "/pagent-status",
    });
    let done = env
        .cmd(&["hook", "user-prompt-expansion"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(input.to_string())
        .run_bounded(HANG);
    assert_eq!(done.run.code, Some(0), "{}", done.run);
    let stop = env
        .cmd(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(env.stop_input("working").to_string())
        .run_bounded(HANG);
    assert_ne!(stop.run.code, Some(2), "{}", stop.run);
}

/// Odd arguments typed after a command, through the hook as Claude Code hands them over:
/// `--` makes the rest the task (`--help` included), a quoted value after `=` is the
/// option's, `-h` is help, quotes group a PRD's name; whatever is not understood is an
/// error that starts nothing.
#[test]
fn item_3_odd_arguments_reach_the_loop_as_typed() {
    let env = TestEnv::new();
    let started = |args: &str| {
        let run = expand_with(&env, "ralph", args, None);
        assert_inert(args, &run);
        assert!(crate::own_voice::answer(&run).is_ok(), "{args}: {run}");
        let state = env.state();
        env.cmd(&["cancel"]).success();
        state
    };
    let state = started("-- Explain what --help prints");
    assert_eq!(state["stages"][0]["prompt"], "Explain what --help prints");
    let state = started("--max-iterations 3 -- Drop --force and --help from deploy.sh");
    assert_eq!(
        state["stages"][0]["prompt"],
        "Drop --force and --help from deploy.sh"
    );
    assert_eq!(state["max_iterations"], 3);
    let state = started("Fix \"the parser\" --promise=\"ALL DONE\"");
    assert_eq!(state["stages"][0]["prompt"], "Fix \"the parser\"");
    assert_eq!(
        state["stages"][0]["exit_when"]["promise_in_output"],
        "ALL DONE"
    );
    for (args, says) in [
        ("Fix it -h", "Usage: /ralph"),
        ("--", "pagent: error:"),
        ("Fix it --max-iterations -3", "pagent: error:"),
        (
            "Fix it --max-iterations 3 --max-iterations 4",
            "pagent: error:",
        ),
    ] {
        let run = expand_with(&env, "ralph", args, None);
        assert_inert(args, &run);
        let shown = crate::own_voice::answer(&run).unwrap_err();
        assert!(shown.contains(says), "{args}: {shown}");
        assert!(!shown.contains("error: error"), "{args}: {shown}");
        assert_eq!(env.state()["status"], "cancelled", "{args} started a loop");
    }
    env.write("my prd.md", "# PRD\n");
    let run = expand_with(&env, "pagent-run", "\"my prd.md\" --max-iterations 2", None);
    assert!(crate::own_voice::answer(&run).is_ok(), "{run}");
    assert_eq!(env.state()["prd_path"], "my prd.md");
    let run = expand_with(&env, "pagent-run", "prd.md -- --help", None);
    let shown = crate::own_voice::answer(&run).unwrap_err();
    assert!(shown.starts_with("pagent: error:"), "{shown}");
}

//! pagent's own voice in Claude Code (issue 20): the UserPromptExpansion hook's answers,
//! the `!` lines' hand-off, what the prompt hook leaves alone, one rule for replacing a
//! loop, a terminal's cancel told to the session (commands typed during a turn are
//! `during_turn.rs`'s). Every text the user or the model reads here is a whole
//! snapshot (paths, times and ids filtered); the real CLIs are driven in the e2e suite.

use serde_json::{Value, json};

use crate::util::snapshot::regex_escape;
use crate::util::*;

pub fn filters(env: &TestEnv) -> Vec<(String, String)> {
    // The project as the Windows build names it under Wine (scripts/test.sh), too.
    let wine = format!("Z:{}", env.root.display()).replace('/', "\\");
    vec![
        (
            regex_escape(&env.root.display().to_string()),
            "[PROJECT]".into(),
        ),
        (regex_escape(&wine), "[PROJECT]".into()),
        (r"\b\d+s\b".into(), "[ELAPSED]".into()),
        (r"\b\d+m\d\ds\b".into(), "[ELAPSED]".into()),
        // What the logs take varies with what they record, and whether a run's log exists
        // yet is a race: that line has its own snapshots (`status::`).
        (r"(?m)^logs: .*$".into(), "logs: [LOGS]".into()),
    ]
}

/// A snapshot of `$value` named `$name`, with [`filters`] for `$env`'s project (shared
/// with `during_turn.rs`).
macro_rules! snapshot {
    ($env:expr, $name:expr, $value:expr) => {
        let filters = $crate::own_voice::filters($env);
        let filters: Vec<(&str, &str)> = filters
            .iter()
            .map(|(a, b)| (a.as_str(), b.as_str()))
            .collect();
        insta::with_settings!({filters => filters}, {
            insta::assert_snapshot!($name, $value);
        });
    };
}
pub(crate) use snapshot;

/// `pagent hook user-prompt-expansion` for the command `name` typed with `args`.
fn expand(env: &TestEnv, name: &str, args: &str) -> Run {
    expand_with(env, name, args, None)
}

pub fn expand_with(env: &TestEnv, name: &str, args: &str, transcript: Option<&str>) -> Run {
    let mut input = json!({
        "session_id": SESSION,
        "cwd": env.root,
        "hook_event_name": "UserPromptExpansion",
        "expansion_type": "slash_command",
        "command_name": name,
        "command_args": args,
        "prompt": format!("/{name} {args}").trim_end(),
    });
    if let Some(lines) = transcript {
        let path = env.home.join("transcript.jsonl");
        std::fs::write(&path, lines).unwrap();
        input["transcript_path"] = json!(path);
    }
    env.cmd(&["hook", "user-prompt-expansion"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(input.to_string())
        .run()
}

/// The hook's answer: `Ok(line shown)` when the command expands, `Err(text)` for a block.
pub fn answer(run: &Run) -> Result<Option<String>, String> {
    assert_eq!(run.code, Some(0), "{run}");
    let Some(output) = run.decision() else {
        return Ok(None);
    };
    if output["decision"] == "block" {
        assert!(output.get("systemMessage").is_none(), "{run}");
        return Err(output["reason"].as_str().unwrap().to_owned());
    }
    Ok(output["systemMessage"].as_str().map(str::to_owned))
}

#[test]
fn item_1_status_and_cancel_are_answered_by_the_hook_itself() {
    let env = TestEnv::new();
    let status = answer(&expand(&env, "pagent-status", "")).unwrap_err();
    snapshot!(&env, "expansion_status_no_loop", status);
    env.cmd(&["ralph", "Fix the parser"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    // At rest, the session's running loop: the status says nobody works on it.
    let status = answer(&expand(&env, "pagent:status", "")).unwrap_err();
    snapshot!(&env, "expansion_status_at_rest", status);
    assert_eq!(env.state().get("paused"), None);
    let cancel = answer(&expand(&env, "ralph-cancel", "")).unwrap_err();
    snapshot!(&env, "expansion_cancel", cancel);
    assert_eq!(env.state()["status"], "cancelled");
    let again = answer(&expand(&env, "pagent-cancel", "")).unwrap_err();
    assert!(
        again.starts_with("pagent: no active loop to cancel (the last one, ralph, was cancelled"),
        "{again}"
    );
    // Arguments where none are taken: an error, nothing done.
    env.cmd(&["ralph", "--force", "Again"]).success();
    let error = answer(&expand(&env, "pagent-cancel", "now please")).unwrap_err();
    snapshot!(&env, "expansion_cancel_with_arguments", error);
    assert_eq!(env.state()["status"], "active");
    for name in ["pagent-status", "pagent:cancel", "pagent-resume"] {
        let help = answer(&expand(&env, name, "--help")).unwrap_err();
        assert!(help.ends_with(&format!("Usage: /{name}")), "{help}");
    }
    assert_eq!(env.state()["status"], "active");
}

#[test]
fn item_1_a_loop_set_up_by_the_hook_is_handed_to_the_model_by_the_bang_line() {
    let env = TestEnv::new();
    let text = "Fix it's \"parser\" --max-iterations 4";
    let shown = answer(&expand(&env, "ralph", text)).unwrap().unwrap();
    snapshot!(&env, "expansion_ralph_started", shown);
    let state = env.state();
    assert_eq!(state["session_id"], SESSION);
    assert_eq!(state["stages"][0]["prompt"], "Fix it's \"parser\"");
    assert!(state["slash_handoff"].is_string());
    // The command's `!` line, with the same text: the model's part, no second set-up.
    let out = env
        .cmd(&["ralph", "--stdin-args"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .stdin(format!("{text}\n"))
        .success();
    snapshot!(&env, "bang_ralph_handed_off", out.stdout);
    let after = env.state();
    assert_eq!(after["loop_id"], state["loop_id"]);
    assert_eq!(after.get("slash_handoff"), None);
    // A pipeline the same way.
    env.write("prd.md", "# PRD\n");
    let shown = answer(&expand(&env, "pagent-run", "prd.md --max-stages 2 --force")).unwrap();
    snapshot!(&env, "expansion_run_replaced", shown.unwrap());
    let out = env
        .cmd(&["run", "--stdin-args"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .stdin("prd.md --max-stages 2 --force\n")
        .success();
    assert!(
        out.stdout.starts_with("Work on one stage at a time."),
        "{out}"
    );
    assert!(!out.stdout.contains("pagent: started"), "{out}");
}

#[test]
fn item_1_errors_and_help_are_shown_and_start_nothing() {
    let env = TestEnv::new();
    for (name, args, snap) in [
        ("pagent-run", "missing.md", "expansion_run_missing_prd"),
        ("ralph", "--help", "expansion_ralph_help"),
        ("pagent:run", "--help", "expansion_run_help"),
        (
            "ralph",
            "Fix it --max-iteration 2",
            "expansion_ralph_misspelt",
        ),
        (
            "ralph",
            "Fix it --max-cost 1e3",
            "expansion_ralph_refused_cost",
        ),
        ("ralph", "Fix it --max-iterations 0", "expansion_ralph_zero"),
        ("ralph", "", "expansion_ralph_no_task"),
    ] {
        let text = answer(&expand(&env, name, args)).unwrap_err();
        snapshot!(&env, snap, text);
        assert!(!env.exists(".claude/pagent-pipeline.json"), "{name} {args}");
    }
    // Commands that are not pagent's, or an input without a name: untouched.
    assert_eq!(answer(&expand(&env, "compact", "")), Ok(None));
    let out = env
        .cmd(&["hook", "user-prompt-expansion"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin("{}")
        .run();
    assert_eq!((out.code, out.stdout.as_str()), (Some(0), ""), "{out}");
}

#[test]
fn item_3_slash_errors_say_error_once_without_help_advice() {
    let env = TestEnv::new();
    for text in [
        "Fix it --max-iteration 2",
        "Fix it --max-cost 1e3",
        "Fix it --max-iterations 0",
    ] {
        let out = env.cmd(&["ralph", "--stdin-args"]).stdin(text).success();
        assert_eq!(out.stdout.matches("error").count(), 1, "{out}");
        assert!(!out.stdout.contains("--help"), "{out}");
        assert!(out.stdout.ends_with("Nothing was started.\n"), "{out}");
    }
    let out = env
        .cmd(&["run", "--stdin-args"])
        .stdin("prd.md --max-stages zero")
        .success();
    assert_eq!(
        out.stdout,
        "pagent: error: invalid value 'zero' for --max-stages: invalid digit found in string\nNothing was started.\n"
    );
    // A shell's usage errors are clap's own, once.
    let out = env
        .cmd(&["ralph", "--max-iterations", "0", "Fix"])
        .failure();
    assert_eq!(out.stderr.matches("error").count(), 1, "{out}");
}

#[test]
fn item_1_the_prompt_hook_never_pauses_for_pagents_commands_or_claude_codes_own_prompts() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let prompt = |text: &str| {
        env.cmd(&["hook", "user-prompt-submit"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .stdin(json!({"session_id": SESSION, "cwd": env.root, "prompt": text}).to_string())
            .run()
    };
    for text in [
        "/pagent-status",
        "/pagent:status",
        "/pagent-cancel now",
        "<task-notification>\n<task-id>b4jptpqcw</task-id>",
        "Your claude.ai usage limit has reset. Continue the task you were working on when the limit was reached; do not repeat work that is already complete.",
    ] {
        let run = prompt(text);
        assert_eq!((run.code, run.stdout.as_str()), (Some(0), ""), "{run}");
        assert_eq!(env.state().get("paused"), None, "{text:?}");
    }
    prompt("What is 2+2?");
    assert!(env.state()["paused"].is_object());
}

#[test]
fn item_7_replacing_a_loop_needs_force_from_a_slash_command_and_a_shell_alike() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "First"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    // The same session, from a shell and from the slash command: refused, nothing changed.
    let out = env
        .cmd(&["ralph", "Second"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .failure();
    assert!(out.stderr.contains("or add --force to replace it"), "{out}");
    let refused = answer(&expand(&env, "ralph", "Second")).unwrap_err();
    snapshot!(&env, "expansion_ralph_refused_without_force", refused);
    assert_eq!(env.state()["stages"][0]["prompt"], "First");
    // With --force: announced, and the old loop's end is logged.
    let out = env
        .cmd(&["ralph", "--force", "Second"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    assert!(
        out.stdout
            .starts_with("pagent: replaced the active ralph loop (iteration 1 of 25, started"),
        "{out}"
    );
    let shown = answer(&expand(&env, "ralph", "Third --force"))
        .unwrap()
        .unwrap();
    assert!(
        shown.starts_with("pagent: replaced the active ralph loop"),
        "{shown}"
    );
    let log = env.read(".claude/pagent/events.jsonl");
    let replaced: Vec<Value> = log
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|e| e["detail"] == "replaced by a new loop (--force)")
        .collect();
    assert_eq!(replaced.len(), 2, "{log}");
    assert_eq!(env.state()["stages"][0]["prompt"], "Third");
}

#[test]
fn item_10_a_cancel_from_a_terminal_is_told_to_the_session_once() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.cmd(&["cancel"]).success();
    // The session's next prompt hears of it (a Stop would too, whichever comes first).
    let run = env
        .cmd(&["hook", "user-prompt-submit"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(json!({"session_id": SESSION, "cwd": env.root, "prompt": "hi"}).to_string())
        .run();
    let output: Value = serde_json::from_str(run.stdout.trim()).unwrap();
    snapshot!(
        &env,
        "prompt_hook_tells_a_terminal_cancel",
        output["systemMessage"].as_str().unwrap()
    );
    assert_eq!(env.stop(&env.stop_input("hi")).allowed(), None);
    // Cancelled from the session itself: nothing to tell.
    env.cmd(&["ralph", "--force", "Again"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.cmd(&["cancel"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    assert_eq!(env.stop(&env.stop_input("hi")).allowed(), None);
}

#[test]
fn item_12_a_re_prompt_is_additional_context_not_a_block() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let output = env.stop(&env.stop_input("Working.")).decision().unwrap();
    let keys: Vec<&str> = output
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(keys, ["hookSpecificOutput", "systemMessage"]);
    assert_eq!(output["hookSpecificOutput"]["hookEventName"], "Stop");
    snapshot!(
        &env,
        "stop_re_prompt_context",
        output["hookSpecificOutput"]["additionalContext"]
            .as_str()
            .unwrap()
    );
}

#[test]
fn item_1_parallel_shows_its_help_errors_and_plan_line_itself() {
    let env = TestEnv::new();
    let help = answer(&expand(&env, "pagent:parallel", "--help")).unwrap_err();
    assert!(
        help.contains("Usage: /pagent:parallel TASKS_FILE [OPTIONS]"),
        "{help}"
    );
    let error = answer(&expand(&env, "pagent:parallel", "tasks.txt -j 0")).unwrap_err();
    assert!(
        error.starts_with("pagent: error: invalid value '0' for --jobs: 0 is not in 1..=64"),
        "{error}"
    );
    let error = answer(&expand(&env, "pagent:parallel", "missing.txt")).unwrap_err();
    assert!(error.starts_with("pagent: error: "), "{error}");
    assert!(error.ends_with("Nothing was started."), "{error}");
    env.write("tasks.txt", "docs: Write the docs\ntests: Add the tests\n");
    let shown = answer(&expand(&env, "pagent:parallel", "tasks.txt -j 2"))
        .unwrap()
        .unwrap();
    assert_eq!(
        shown,
        "pagent parallel: 2 tasks from tasks.txt, 2 at a time; Claude starts them in the background."
    );
}

#[test]
fn item_2_the_help_of_the_commands_without_arguments_and_the_status_line_without_the_hook() {
    let env = TestEnv::new();
    let helps: Vec<String> = ["pagent-status", "pagent-cancel", "pagent-resume"]
        .iter()
        .map(|name| answer(&expand(&env, name, "--help")).unwrap_err())
        .collect();
    snapshot!(
        &env,
        "expansion_helps_without_arguments",
        helps.join("\n\n")
    );
    env.cmd(&["ralph", "Fix it"]).success();
    let out = env.cmd(&["status", "--slash"]).success();
    snapshot!(&env, "bang_status_without_the_hook", out.stdout);
}

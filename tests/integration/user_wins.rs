//! The person at the keyboard (issue 10): a message typed in the loop's session pauses
//! it, `pagent resume` goes on, status never resumes; quiet re-prompts point at
//! `pagent prompt`, and a compaction brings the full prompt back; a failing check of an
//! edited file holds completion back.

use serde_json::json;

use crate::util::*;

fn typed(env: &TestEnv, session: &str, prompt: &str) -> Run {
    let input = json!({"session_id": session, "cwd": env.root, "hook_event_name": "UserPromptSubmit", "prompt": prompt});
    env.cmd(&["hook", "user-prompt-submit"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(input.to_string())
        .success()
}

#[test]
fn a_message_typed_in_the_loops_session_pauses_it_until_resume() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    // Another session's prompt and pagent's own commands leave it running.
    for (session, prompt) in [("other", "hello"), (SESSION, "/pagent:cancel now")] {
        let out = typed(&env, session, prompt);
        assert!(out.stdout.is_empty(), "{out}");
        assert!(env.state()["paused"].is_null(), "{prompt}");
    }
    let out = typed(&env, SESSION, "What is 2+2?");
    assert!(out.stdout.is_empty(), "the prompt is never blocked: {out}");
    assert_eq!(env.state()["paused"]["why"], "you wrote a message");
    let message = env.stop(&env.stop_input("4")).allowed().unwrap();
    assert_eq!(
        message,
        "pagent: paused the Ralph loop because you wrote a message. /pagent:resume continues it, /pagent:cancel ends it."
    );
    // Said once; no iteration counted; status shows it and does not resume.
    assert_eq!(env.stop(&env.stop_input("more")).allowed(), None);
    typed(&env, SESSION, "/pagent:status");
    let mut said = Said::new();
    said.say("pagent status", &env.cmd(&["status"]).success().stdout);
    assert_eq!(env.status()["iterations"], 1);
    assert_eq!(env.stop(&env.stop_input("more")).allowed(), None);
    // Another session cannot resume it; its own can.
    let out = env
        .cmd(&["resume"])
        .env("CLAUDE_CODE_SESSION_ID", "other")
        .failure();
    said.say("pagent resume, from another session", &out.stderr);
    let out = env
        .cmd(&["resume"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    said.say("pagent resume, from its own", &out.stdout);
    assert!(env.state()["paused"].is_null());
    let reason = env.stop(&env.stop_input("working")).blocked();
    said.say("the next stop", &reason);
    assert_text!(said.text());
}

#[test]
fn re_prompts_are_quiet_until_the_context_is_compacted() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\nA todo app.\n");
    env.cmd(&["run", "prd.md"]).success();
    let full = env.read(".claude/pagent/prompt.md");
    assert!(full.starts_with("# Stage: architect"), "{full}");
    let out = env.cmd(&["prompt"]).success();
    assert!(out.stdout.contains(full.trim_end()), "{out}");
    let reason = env.stop(&env.stop_input("working")).blocked();
    assert!(!reason.contains("# Stage: architect"), "{reason}");
    assert!(
        reason.ends_with("`pagent prompt` prints them, and they are in .claude/pagent/prompt.md.")
    );
    // SessionStart other than compact changes nothing; a compaction brings the prompt back once.
    for (event, source) in [("SessionStart", "startup"), ("PreCompact", "")] {
        let input = json!({"session_id": SESSION, "cwd": env.root, "hook_event_name": event, "source": source});
        env.cmd(&["hook", "compact"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .stdin(input.to_string())
            .success();
        assert_eq!(
            env.state()["full_prompt_due"] == true,
            event == "PreCompact"
        );
    }
    env.write("notes.txt", "changed\n");
    let reason = env.stop(&env.stop_input("working")).blocked();
    assert!(reason.contains("# Stage: architect"), "{reason}");
    env.write("notes.txt", "changed again\n");
    let reason = env.stop(&env.stop_input("working")).blocked();
    assert!(!reason.contains("# Stage: architect"), "{reason}");
    // The next stage's prompt is written when the stage begins.
    env.write_lines("architecture.md", 60);
    let reason = env.stop(&env.stop_input("done")).blocked();
    assert!(reason.contains("# Stage: qa"), "{reason}");
    assert!(
        env.read(".claude/pagent/prompt.md")
            .starts_with("# Stage: qa")
    );
}

/// Issue 10: `complete` was logged beside `python3 -m py_compile src/routes.py: failed`.
#[test]
fn a_loop_does_not_complete_while_an_edited_files_check_fails() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix the routes"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.write("config.json", "{\"a\": 1,}\n");
    let out = env.post_tool_use("Write", "config.json", &[]);
    assert_text!(out.context().unwrap());
    assert_eq!(
        env.state()["failing_checks"]["config.json"]["checks"],
        "JSON syntax"
    );
    let promise = "Done.\n<promise>DONE</promise>";
    let reason = env.stop(&env.stop_input(promise)).blocked();
    assert!(
        reason.contains("- the latest check of config.json failed (JSON syntax)"),
        "{reason}"
    );
    env.stop(&env.stop_input(promise)).blocked();
    // Fixed and checked again: the promise completes the loop.
    env.write("config.json", "{\"a\": 1}\n");
    env.post_tool_use("Edit", "config.json", &[]);
    assert!(env.state()["failing_checks"].is_null());
    let message = env.stop(&env.stop_input(promise)).allowed().unwrap();
    assert!(message.contains("complete"), "{message}");
}

/// The prompt hook runs on every prompt of every session: without a loop it reads
/// nothing, prints nothing and writes nothing; with bad input it fails open (never 2).
#[test]
fn the_prompt_hook_is_silent_without_a_loop_and_never_blocks() {
    let env = TestEnv::new();
    let out = env
        .cmd(&["hook", "user-prompt-submit"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin("not json at all")
        .success();
    assert!(out.stdout.is_empty() && out.stderr.is_empty(), "{out}");
    assert!(!env.exists(".claude"), "{out}");
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let out = env
        .cmd(&["hook", "user-prompt-submit"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin("not json at all")
        .run();
    out.allowed_on_error();
    assert!(env.state()["paused"].is_null());
}

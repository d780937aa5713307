//! What a loop says about what happened outside its iterations (issue 30, §3 and §4):
//! Claude Code's cap on a turn's continuations, a pause's real reason, the levers' words
//! for each driver, a quit session, a cancel typed in a second session, and the old
//! loop's notice under a new loop. The real clients are driven in
//! `tests/e2e/interactive/session.rs` and `tests/e2e/scenarios/cap.rs`.

use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};

use crate::own_voice::{answer, snapshot};
use crate::util::*;

const OTHER: &str = "0b7e2c55-8a43-4c27-9a55-0f6c0c1d1e77";

/// A transcript of a turn that calls no tool: the model's answers, one line each.
fn no_tool_transcript(env: &TestEnv, answers: usize) {
    let lines: Vec<String> = (0..answers)
        .map(|i| transcript_line_text(&format!("m{i}"), "Still thinking."))
        .collect();
    std::fs::write(env.home.join("transcript.jsonl"), lines.join("\n") + "\n").unwrap();
}

/// The Stop of `SESSION` after `answers` answers that called no tool, `continued` as
/// Claude Code's `stop_hook_active` says, under the cap `cap` (unset: the default).
fn stop_in_turn(env: &TestEnv, answers: usize, continued: bool, cap: Option<&str>) -> Run {
    no_tool_transcript(env, answers);
    let mut input = env.stop_input("Still thinking.");
    input["stop_hook_active"] = json!(continued);
    let mut command = env
        .cmd(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(input.to_string());
    if let Some(cap) = cap {
        command = command.env("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", cap);
    }
    command.run()
}

/// Issue 30, §3: the continuation Claude Code would drop pauses the loop instead, and
/// the screen (the Stop's `systemMessage`), `status`, `status --all`, the dashboard's row
/// and the notifier all say why and what to type.
#[test]
fn item_3_claude_codes_cap_pauses_the_loop_and_every_place_says_so() {
    let env = TestEnv::new();
    let out_file = env.home.join("notified.txt");
    let tools = env.fake_tool(
        "bin",
        "fake-notify",
        &format!("printf '%s|%s\\n' \"$1\" \"$2\" > {}", out_file.display()),
    );
    std::fs::create_dir_all(&env.config).unwrap();
    std::fs::write(
        env.config.join("config.json"),
        format!(
            r#"{{"notify": {{"command": ["{}/fake-notify", "{{status}}", "{{message}}"]}}}}"#,
            tools.display()
        ),
    )
    .unwrap();
    env.cmd(&["ralph", "--no-progress-limit", "0", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    // Claude Code 2.1.197 and 2.1.332 both drop the 3rd continuation in a row under a
    // cap of 2: pagent makes two, then pauses.
    assert!(stop_in_turn(&env, 1, false, Some("2")).continues());
    assert!(stop_in_turn(&env, 2, true, Some("2")).continues());
    let said = stop_in_turn(&env, 3, true, Some("2"))
        .allowed()
        .expect("the pause is said on screen");
    let mut text = Said::new();
    text.say("on screen (Stop says)", &said);
    text.say("pagent status", &env.cmd(&["status"]).success().stdout);
    let all: Value =
        serde_json::from_str(&env.cmd(&["status", "--all", "--json"]).success().stdout).unwrap();
    text.say(
        "the dashboard's row (paused_because, go_on)",
        &format!("{}\n{}", all[0]["paused_because"], all[0]["go_on"]),
    );
    let notified = wait_until(Duration::from_secs(20), out_file.display(), || {
        std::fs::read_to_string(&out_file)
            .ok()
            .filter(|t| t.ends_with('\n'))
    });
    text.say("the notifier", &notified);
    snapshot!(&env, "item_3_cap_said_everywhere", text.text());
    assert_eq!(env.state()["paused"]["told"], true);
    // The session's next stop is the user's: allowed, silently, nothing counted (the 4th
    // iteration is the one /pagent:resume hands the model).
    assert_eq!(stop_in_turn(&env, 4, true, Some("2")).allowed(), None);
    assert_eq!(env.state()["iterations"], json!([4]));
}

/// A tool call between two continuations starts Claude Code's count afresh, and pagent's:
/// a loop that works never pauses on the cap.
#[test]
fn item_3_a_turn_with_a_tool_call_is_never_paused() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "--no-progress-limit", "0", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let path = env.home.join("transcript.jsonl");
    let tool = json!({"type": "assistant", "message": {"id": "t", "role": "assistant",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "Write", "input": {}}]}});
    for i in 0..6 {
        let mut lines = vec![transcript_line_text(&format!("a{i}"), "Working.")];
        if i % 2 == 1 {
            lines.insert(0, tool.to_string());
        }
        let mut old = std::fs::read_to_string(&path).unwrap_or_default();
        old.push_str(&(lines.join("\n") + "\n"));
        std::fs::write(&path, old).unwrap();
        let mut input = env.stop_input("Working.");
        input["stop_hook_active"] = json!(i > 0);
        let run = env
            .cmd(&["hook", "stop"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .env("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "1")
            .stdin(input.to_string())
            .run();
        // Under a cap of 1, only a stop right after a tool call (or the first of the
        // prompt) may continue; the others would be dropped.
        assert!(run.continues() || i % 2 == 0, "stop {i}: {run}");
        if !run.continues() {
            assert!(
                env.state()["paused"]["why"]
                    .as_str()
                    .unwrap()
                    .contains("last turn")
            );
            return;
        }
    }
    panic!("two continuations in a row without a tool call were not paused");
}

/// Issue 30, §4 (a): a loop paused from the dashboard or with `pagent pause` says so, not
/// "you wrote a message".
#[test]
fn item_a_a_loop_paused_from_a_terminal_or_the_dashboard_says_who_paused_it() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.cmd(&["pause"]).success();
    let status = env.cmd(&["status"]).success().stdout;
    assert!(
        status.contains("paused because you paused it (`pagent pause`): /pagent:resume in its Claude Code session continues it"),
        "{status}"
    );
    assert!(!status.contains("you wrote a message"), "{status}");
}

/// Issue 30, §4 (a): resume and cancel of a `pagent loop` loop answer in its own words:
/// no Esc, no "Claude can stop now".
#[test]
fn item_a_resume_and_cancel_of_a_pagent_loop_loop_say_no_session_words() {
    let env = TestEnv::new();
    env.write(
        "agent.sh",
        "cat > /dev/null\n\"$PAGENT_EXE\" pause > /dev/null\necho working\n",
    );
    let mut child = env
        .cmd(&[
            "loop",
            "--command",
            "sh agent.sh",
            "ralph",
            "--no-progress-limit",
            "0",
            "Task",
        ])
        .env("PAGENT_EXE", pagent_bin())
        .command()
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .unwrap();
    let mut lines = Lines::of(child.stdout.take().unwrap());
    let waiting = "waiting for `pagent resume`";
    lines.wait_for(Duration::from_secs(20), waiting, |l| l.contains(waiting));
    let mut said = Said::new();
    said.say("pagent status", &env.cmd(&["status"]).success().stdout);
    said.say("pagent resume", &env.cmd(&["resume"]).success().stdout);
    lines.wait_for(Duration::from_secs(20), waiting, |l| l.contains(waiting));
    said.say("pagent cancel", &env.cmd(&["cancel"]).success().stdout);
    let status = child.wait().unwrap();
    assert_eq!(status.code(), Some(130));
    let text = said.text().to_owned();
    for session_words in ["Esc", "Claude can stop", "/pagent:"] {
        assert!(!text.contains(session_words), "{session_words}: {text}");
    }
    snapshot!(&env, "item_a_pagent_loop_words", &text);
}

/// The SessionEnd hook's input for `session`.
fn session_end(env: &TestEnv, session: &str, reason: &str) -> Run {
    let run = env
        .cmd(&["hook", "session-end"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(
            json!({"session_id": session, "cwd": env.root, "hook_event_name": "SessionEnd",
                "reason": reason})
            .to_string(),
        )
        .run();
    assert_eq!((run.code, run.stdout.as_str()), (Some(0), ""), "{run}");
    run
}

/// `pagent hook user-prompt-expansion` of `/name` typed in `session`.
fn expand_in(env: &TestEnv, session: &str, name: &str) -> Run {
    let input = json!({
        "session_id": session, "cwd": env.root, "hook_event_name": "UserPromptExpansion",
        "expansion_type": "slash_command", "command_name": name, "command_args": "",
        "prompt": format!("/{name}"),
    });
    env.cmd(&["hook", "user-prompt-expansion"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(input.to_string())
        .run()
}

/// Issue 30, §4 (d): the loop of a session that was quit is not "active" with nothing to
/// drive it: it waits, paused, status says how to go on, a terminal's resume says the
/// same instead of resuming into nothing, and another session may take it over.
#[test]
fn item_d_a_quit_sessions_loop_says_nothing_drives_it_and_how_to_go_on() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    // Another session's end touches nothing.
    session_end(&env, OTHER, "other");
    assert_eq!(env.state().get("paused"), None);
    session_end(&env, SESSION, "prompt_input_exit");
    let mut said = Said::new();
    said.say("pagent status", &env.cmd(&["status"]).success().stdout);
    said.say(
        "pagent resume (a terminal)",
        &env.cmd(&["resume"]).success().stdout,
    );
    assert_eq!(env.state()["paused"]["session_gone"], true);
    // The session is resumed (`claude --resume`): its first command finds it back (2.1.197
    // runs the expansion hook first), its first stop says why the loop waits.
    let status = answer(&expand_in(&env, SESSION, "pagent:status")).unwrap_err();
    assert!(!status.contains("claude --resume"), "{status}");
    said.say("/pagent:status in the resumed session", &status);
    assert_eq!(env.state()["paused"].get("session_gone"), None);
    said.say(
        "the resumed session's next stop",
        &env.stop(&env.stop_input("Hello again.")).allowed().unwrap(),
    );
    // Quit and resumed again; the prompt hook finds it back too.
    session_end(&env, SESSION, "other");
    let back = env
        .cmd(&["hook", "user-prompt-submit"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(json!({"session_id": SESSION, "cwd": env.root, "prompt": "hi"}).to_string())
        .run();
    assert_eq!(back.code, Some(0), "{back}");
    assert_eq!(env.state()["paused"].get("session_gone"), None);
    // Quit again, and taken over by a second session of the project.
    session_end(&env, SESSION, "other");
    let taken = answer(&expand_in(&env, OTHER, "pagent:resume"))
        .unwrap()
        .unwrap();
    said.say("/pagent:resume in a second session", &taken);
    assert_eq!(env.state()["session_id"], OTHER);
    assert_eq!(env.state().get("paused"), None);
    snapshot!(&env, "item_d_quit_session", said.text());
    assert_eq!(
        env.actions(),
        ["ralph", "pause", "paused", "pause", "pause", "resume"]
    );
}

/// Issue 30, §4 (d): `/pagent-cancel` typed in a second session of the project does not
/// end the first session's loop: it says how to; once the first session was quit it may,
/// and the first session, if resumed, is told truly where the cancel came from.
#[test]
fn item_d_a_cancel_typed_in_a_second_session_is_refused_and_says_how() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    let mut said = Said::new();
    let refused = answer(&expand_in(&env, OTHER, "pagent-cancel")).unwrap_err();
    said.say("/pagent-cancel in a second session", &refused);
    assert_eq!(env.state()["status"], "active");
    // The `!` line without the hook, and a command a second session's model runs: the same.
    let bang = env
        .cmd(&["cancel"])
        .env("CLAUDE_CODE_SESSION_ID", OTHER)
        .success();
    assert_eq!(bang.stdout.trim(), refused);
    assert_eq!(env.state()["status"], "active");
    // The first session was quit: nobody to ask.
    session_end(&env, SESSION, "other");
    let done = answer(&expand_in(&env, OTHER, "pagent-cancel")).unwrap_err();
    said.say("/pagent-cancel in a second session, the first quit", &done);
    assert_eq!(env.state()["status"], "cancelled");
    said.say(
        "the first session, resumed, at its next stop",
        &env.stop(&env.stop_input("hi")).allowed().unwrap(),
    );
    snapshot!(&env, "item_d_second_session_cancel", said.text());
}

/// Issue 30, §4 (c): after `pagent cancel` from a terminal while the session is idle, a
/// new `/ralph` in that session shows its start line alone: the old loop's notice is
/// cleared unsaid (Claude Code 2.1.330 runs the prompt hook before the set-up). Any other
/// prompt hears it, without "Claude may stop", which only a Stop says.
#[test]
fn item_c_a_new_loops_set_up_clears_the_old_loops_notice_unsaid() {
    let env = TestEnv::new();
    let prompt = |text: &str| {
        env.cmd(&["hook", "user-prompt-submit"])
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .stdin(json!({"session_id": SESSION, "cwd": env.root, "prompt": text}).to_string())
            .run()
    };
    for new_loop in [
        "/ralph Tidy the docs",
        "/pagent:run prd.md",
        "/pagent:ralph x",
    ] {
        env.cmd(&["ralph", "--force", "Fix it"])
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .success();
        env.cmd(&["cancel"]).success();
        assert_eq!(prompt(new_loop).system_message(), None, "{new_loop}");
        assert_eq!(env.state().get("session_notice"), None, "{new_loop}");
    }
    env.cmd(&["ralph", "--force", "Fix it"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    env.cmd(&["cancel"]).success();
    assert_eq!(
        prompt("What changed?").system_message().as_deref(),
        Some(
            "pagent: the Ralph loop (iteration 1 of 25) was cancelled from a terminal (`pagent cancel`)."
        )
    );
}

//! Claude Code's cap on a turn's continuations (issue 30, §3), in `claude -p` with a
//! model that never calls a tool: Claude Code drops the 9th continuation in a row (or the
//! one past `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`, from the environment or settings' `env`),
//! so pagent pauses the loop at that stop and says so, instead of a continuation that
//! would be dropped while the loop read "active". A tool call starts the count afresh.

use super::*;

/// Replies that never call a tool and never make the promise.
fn talk(n: usize) -> Vec<Reply> {
    (0..n)
        .map(|i| Reply::text(&format!("Still thinking, turn {i}.")))
        .collect()
}

const TASK: &str = "/pagent:ralph Think it through --max-iterations 30 --no-progress-limit 0";

/// The pause the last Stop said (its `systemMessage`), and the state after it.
fn paused_by_the_cap(run: &crate::harness::ClaudeRun, e2e: &E2e, cap: u32) -> String {
    let outputs = run.stop_hook_outputs();
    let last = outputs.last().unwrap();
    assert!(last.get("hookSpecificOutput").is_none(), "{last}");
    let said = last["systemMessage"].as_str().unwrap().to_owned();
    let (turns, times) = if cap == 1 {
        ("turn".to_owned(), "once".to_owned())
    } else {
        (format!("{cap} turns"), format!("{cap} times"))
    };
    assert_eq!(
        said,
        format!(
            "pagent: paused the Ralph loop because Claude called no tool in its last {turns}, \
             and Claude Code ends a turn that a hook continued {times} in a row without one \
             (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP). /pagent:resume continues it, /pagent:cancel \
             ends it."
        )
    );
    // Every continuation pagent made reached the model; none was dropped.
    assert_eq!(outputs.len(), cap as usize + 1);
    assert_eq!(e2e.mock.requests().len(), cap as usize + 1);
    let state = e2e.state();
    assert!(
        state["paused"]["why"]
            .as_str()
            .unwrap()
            .contains("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP"),
        "{state}"
    );
    // Claude Code's own warning never came: pagent did not make the continuation it drops.
    for shown in run.shown() {
        assert!(!shown.contains("A hook blocked the turn"), "{shown}");
    }
    said
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn item_3_the_ninth_continuation_without_a_tool_call_pauses_the_loop_and_says_so() {
    let e2e = E2e::start(talk(12));
    let run = e2e.claude(TASK).run();
    assert_eq!(run.code, Some(0));
    paused_by_the_cap(&run, &e2e, 8);
    let status = e2e.pagent(&["status"]);
    let status = String::from_utf8_lossy(&status.stdout);
    // `claude -p` ended with the run: its SessionEnd says nothing drives the loop now.
    let flat = status.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("pagent ralph loop · paused · 10 iterations")
            && flat.contains(
                "paused because Claude called no tool in its last 8 turns, and Claude Code \
                 ends a turn that a hook continued 8 times in a row without one \
                 (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP), and then its Claude Code session was \
                 quit: `claude --resume "
            ),
        "{status}"
    );
}

/// The cap Claude Code keeps is the one of its environment, which its hooks inherit:
/// set when it starts, or in the user's settings (`env`); 0 removes it.
#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn item_3_the_cap_of_claude_codes_environment_or_settings_is_the_one_kept() {
    let e2e = E2e::start(talk(6));
    let run = e2e
        .claude(TASK)
        .env("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "3")
        .run();
    paused_by_the_cap(&run, &e2e, 3);

    let e2e = E2e::start(talk(6));
    std::fs::create_dir_all(e2e.home.join(".claude")).unwrap();
    std::fs::write(
        e2e.home.join(".claude/settings.json"),
        json!({"env": {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "2"}}).to_string(),
    )
    .unwrap();
    let run = e2e.claude(TASK).run();
    paused_by_the_cap(&run, &e2e, 2);

    // No cap: pagent continues past 8 and the loop ends on its own limit.
    let e2e = E2e::start(talk(12));
    let run = e2e
        .claude("/pagent:ralph Think it through --max-iterations 11 --no-progress-limit 0")
        .env("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "0")
        .run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 11);
    assert_eq!(e2e.status()["status"], "gave_up");
}

/// A tool call between two continuations starts Claude Code's count afresh, and
/// pagent's: the pause comes 8 continuations after the last tool call, not before.
#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn item_3_a_tool_call_starts_the_count_afresh() {
    let e2e = E2e::start_with(|e2e| {
        let mut replies = talk(5);
        replies.push(Reply::write(&e2e.path("notes.md"), "A note.\n"));
        replies.extend(talk(12));
        replies
    });
    let run = e2e.claude(TASK).run();
    assert_eq!(run.code, Some(0));
    // 5 answers, the Write, the answer after it, then 8 continuations: 15 requests, and
    // the 9th continuation after the tool call is the one paused.
    assert_eq!(e2e.mock.requests().len(), 15);
    assert!(e2e.path("notes.md").exists());
    let state = e2e.state();
    assert!(
        state["paused"]["why"]
            .as_str()
            .unwrap()
            .contains("in its last 8 turns"),
        "{state}"
    );
}

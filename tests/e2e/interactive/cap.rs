//! Claude Code's cap on a turn's continuations, on the screen a user has (issue 30, §3):
//! an 80x24 terminal, a model that never calls a tool. Claude Code ends the turn after 8
//! continuations in a row whatever the Stop hook says, and 2.1.197 shows nothing when it
//! does: the session sat idle while the loop read "active". pagent pauses the loop at
//! that stop instead and says so on screen, with what to type; `/pagent:resume` goes on.

use super::*;
use crate::mock::Gate;
use crate::tmux::{count, flat};

/// The line pagent shows at the stop Claude Code's cap would have ended.
const PAUSED: &str = "Stop says: pagent: paused the Ralph loop because Claude called no tool in \
                      its last 8 turns, and Claude Code ends a turn that a hook continued 8 \
                      times in a row without one (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP). \
                      /pagent:resume continues it, /pagent:cancel ends it.";

#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_3_claude_codes_cap_is_said_on_screen_and_resume_goes_on() {
    // Nine answers without a tool (the first, then one per continuation), held until the
    // test has seen the loop at work; after the resume, the promise.
    let gate = Gate::new();
    let mut replies: Vec<Reply> = (0..9)
        .map(|i| Reply::text(&format!("Still thinking, turn {i}.")))
        .collect();
    replies[8] = replies[8].clone().after(&gate);
    replies.push(done());
    replies.push(pong());
    let e2e = E2e::start(replies);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    ui.type_line("/ralph Think it through --max-iterations 30 --no-progress-limit 0");
    ui.wait_until("the eighth continuation", |_| {
        e2e.mock.requests().len() == 9
    });
    assert_eq!(e2e.status()["status"], "active");
    gate.open();
    let screen = ui.wait_for(PAUSED);
    // Claude Code's own warning never comes: pagent made no continuation for it to drop.
    assert_eq!(count(&screen, "A hook blocked the turn"), 0, "{screen}");
    assert_eq!(e2e.mock.requests().len(), 9);
    let status = e2e.status();
    assert_eq!(status["paused"], true, "{status}");
    let shown = String::from_utf8_lossy(&e2e.pagent(&["status"]).stdout).into_owned();
    assert!(
        flat(&shown).contains(
            "paused because Claude called no tool in its last 8 turns, and Claude Code ends a \
             turn that a hook continued 8 times in a row without one \
             (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP): /pagent:resume in its Claude Code session \
             continues it"
        ),
        "{shown}"
    );

    ui.type_line("/pagent:resume");
    ui.wait_for("UserPromptExpansion says: pagent: resumed the Ralph loop.");
    ui.wait_for("Stop says: pagent: ralph complete");
    assert_eq!(e2e.status()["status"], "complete");
    assert_eq!(e2e.mock.requests().len(), 10);
    ping(&ui, &e2e, 10);
}

/// The cap Claude Code was started with is the one pagent keeps and says.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_3_the_cap_claude_code_was_started_with_is_the_one_said() {
    let mut replies: Vec<Reply> = (0..3)
        .map(|i| Reply::text(&format!("Still thinking, turn {i}.")))
        .collect();
    replies.push(pong());
    let e2e = E2e::start(replies);
    let ui = Tmux::with(&e2e)
        .size(80, 24)
        .env("CLAUDE_CODE_STOP_HOOK_BLOCK_CAP", "2")
        .start();
    ui.type_line("/ralph Think it through --no-progress-limit 0");
    let screen = ui.wait_for(
        "Stop says: pagent: paused the Ralph loop because Claude called no tool in its last 2 \
         turns, and Claude Code ends a turn that a hook continued 2 times in a row without one \
         (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP).",
    );
    assert_eq!(count(&screen, "A hook blocked the turn"), 0, "{screen}");
    assert_eq!(e2e.mock.requests().len(), 3);
    ping(&ui, &e2e, 3);
}

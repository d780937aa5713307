//! Esc, a question, status, resume and cancel, and what a re-prompt and a stage change
//! look like (items 1 and 12).

use super::*;
use crate::mock::Gate;
use crate::tmux::flat;

/// Waits until the loop's first reply (a `sleep 20` tool call) runs, then presses Esc:
/// the turn ends without a Stop, so the loop stays active.
pub fn interrupt_the_tool(ui: &Tmux, e2e: &E2e) {
    ui.wait_until("the tool to start", |s| {
        e2e.mock.requests().len() == 1 && flat(s).contains("sleep 20")
    });
    ui.wait_until("the sleep to run", |_| sleeping(e2e));
    ui.key("Escape");
    ui.wait_for("Interrupted");
    assert_eq!(e2e.status()["status"], "active");
}

/// Whether a `sleep 20` runs in the test's project (the tool Claude Code started).
pub fn sleeping(e2e: &E2e) -> bool {
    let Ok(entries) = std::fs::read_dir("/proc") else {
        return false;
    };
    entries.flatten().any(|entry| {
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let cwd = std::fs::read_link(entry.path().join("cwd")).unwrap_or_default();
        cmdline.starts_with(b"sleep\x0020") && cwd.starts_with(&e2e.project)
    })
}

/// Esc, then an unrelated question: it is answered, the loop's task does not come back,
/// and the loop says it is paused; /pagent:status shows it paused and changes nothing;
/// /pagent:resume goes on, with pagent's own line on screen.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn after_esc_a_question_pauses_the_loop_and_resume_continues_it() {
    let e2e = E2e::start(vec![
        Reply::bash("sleep 20"),
        Reply::text("2 + 2 = 4."),
        Reply::text("Picking the parser up again."),
        done(),
    ]);
    let ui = Tmux::start(&e2e);
    ui.type_line("/ralph Refactor the parser");
    interrupt_the_tool(&ui, &e2e);
    ui.type_line("What is 2+2?");
    let screen = ui.wait_for(
        "Stop says: pagent: paused the Ralph loop because you wrote a message. /pagent:resume \
         continues it, /pagent:cancel ends it.",
    );
    assert!(screen.contains("2 + 2 = 4."), "{screen}");
    assert!(e2e.mock.told_text(1).contains("What is 2+2?"));
    assert!(e2e.status()["paused"].as_bool().unwrap());

    ui.type_line("/pagent:status");
    ui.wait_for("pagent ralph loop · paused");
    assert!(e2e.status()["paused"].as_bool().unwrap());
    assert_eq!(
        e2e.mock.requests().len(),
        2,
        "status never sets the loop going"
    );

    ui.type_line("/pagent:resume");
    ui.wait_for("UserPromptExpansion says: pagent: resumed the Ralph loop.");
    let screen = ui.wait_for("Stop says: pagent: ralph complete");
    assert!(
        flat(&screen).contains("pagent · ralph loop · iteration 2 of 25"),
        "{screen}"
    );
    assert_eq!(e2e.status()["status"], "complete");
    assert_eq!(e2e.mock.requests().len(), 4);
}

/// Esc, then status and cancel, answered by pagent itself: status says Claude is not on
/// the loop now and changes nothing (it never pauses); cancel ends the loop; neither
/// makes a model turn.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_1_status_and_cancel_are_answered_by_pagent_without_a_model_turn() {
    let e2e = E2e::start(vec![Reply::bash("sleep 20"), pong()]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    ui.type_line("/ralph Refactor the parser");
    interrupt_the_tool(&ui, &e2e);
    ui.type_line("/pagent-status");
    ui.wait_for("UserPromptExpansion operation blocked by hook: pagent ralph loop · active");
    ui.wait_for(
        "Claude is not working on it now: /pagent:resume sets it going again, /pagent:cancel \
         ends it.",
    );
    assert_eq!(e2e.status()["paused"], false);
    ui.type_line("/pagent:cancel");
    ui.wait_for("pagent: cancelled the Ralph loop after 1 iteration.");
    assert_eq!(e2e.status()["status"], "cancelled");
    ui.type_line("/pagent-cancel");
    ui.wait_for("pagent: no active loop to cancel (the last one, ralph, was cancelled");
    ping(&ui, &e2e, 1);
}

/// No "error" or "problem" wording for pagent's re-prompts, and no status-bar notice.
fn no_error_wording(screen: &str) {
    for error in [
        "Stop hook error",
        "reported a problem",
        "blocking error",
        "stop hook problem",
    ] {
        assert!(!screen.contains(error), "{error}: {screen}");
    }
}

/// A re-prompt and a stage change reach the model as Stop feedback that Claude Code shows
/// as feedback ("Stop hook says" / "Stop hook feedback"), never as an error, with
/// pagent's one line beside it; a re-prompt of the same stage shows no stage prompt, a
/// stage change shows the next stage's (the model must read it, and no form hides it).
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_12_re_prompts_and_stage_changes_are_feedback_not_errors() {
    // Each reply after a re-prompt waits until the test has read the screen.
    let (quiet, stage) = (Gate::new(), Gate::new());
    let e2e = E2e::start_with(|e2e| {
        let design: String = (1..=60).map(|n| format!("Design line {n}.\n")).collect();
        vec![
            Reply::text("Sketched the design."),
            Reply::write(&e2e.path("architecture.md"), &design).after(&quiet),
            Reply::text("Designed."),
            Reply::text("Planning the tests.").after(&stage),
            Reply::text("Still planning."),
        ]
    });
    e2e.write("prd.md", "# Todo\nA command-line todo list.\n");
    let ui = Tmux::start(&e2e);
    ui.type_line("/pagent-run prd.md --max-stages 2 --max-iterations 2");
    ui.wait_for("UserPromptExpansion says: pagent: started the prd-to-code pipeline");
    // A re-prompt of the same stage: where the loop is and what is missing, no prompt.
    let screen = ui.wait_for(
        "Stop says: pagent: stage architect not done, iteration 2 of 2: architecture.md does \
         not exist yet",
    );
    let shown = flat(&screen);
    assert!(
        shown.contains("Stop hook says: pagent · stage 1 of 2: architect · iteration 2 of 2")
            || shown.contains(
                "Stop hook feedback: pagent · stage 1 of 2: architect · iteration 2 of 2"
            ),
        "{screen}"
    );
    assert!(shown.contains("`pagent prompt` prints them"), "{screen}");
    no_error_wording(&screen);
    quiet.open();
    // A stage change: the next stage's whole prompt, as feedback.
    let screen = ui.wait_for("pagent · stage 2 of 2: qa · iteration 1 of 2");
    ui.wait_for("You are the QA");
    no_error_wording(&screen);
    stage.open();
    let screen = ui.wait_for("Stop says: pagent: gave up");
    no_error_wording(&screen);
    // The architect's prompt reached the model at set-up and never the screen.
    assert!(
        e2e.mock
            .all_text(0)
            .contains("You are the software architect")
    );
    assert!(
        !screen.contains("You are the software architect"),
        "{screen}"
    );
}

//! The interactive terminal UI (issue 10): the real CLI under tmux, driven by typed keys,
//! asserting on the screen a user sees. `claude -p` cannot show what a person lives with:
//! the start line, the re-prompt screens, Esc, pausing, resuming, errors.
//!
//! The mock model obeys the commands' instructions through `Reply::Echo` ("begin your
//! reply with the line that starts with `pagent: started`"); everything else on the
//! screen is Claude Code's own rendering of what pagent returned.

use std::time::Duration;

use crate::harness::E2e;
use crate::mock::Reply;
use crate::tmux::{Tmux, lines_starting};

const START: &str = "pagent: started";

fn done() -> Reply {
    Reply::text("Done.\n<promise>DONE</promise>")
}

/// Both names start a loop, and the user sees the start line with the limits; a set-up
/// error shows pagent's sentence, not Claude Code's "Shell command failed" block.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn ralph_by_both_names_shows_the_start_line_and_errors_are_sentences() {
    let e2e = E2e::start(vec![
        Reply::Echo(START.into()),
        done(),
        Reply::Echo(START.into()),
        done(),
        Reply::Echo("pagent: error:".into()),
    ]);
    let ui = Tmux::start(&e2e);
    ui.type_line("/ralph Fix the parser --max-iterations 4");
    ui.wait_for("ralph complete");
    ui.type_line("/pagent:ralph Tidy the docs --no-progress-limit 0");
    let screen = ui.wait_until("two loops complete", |s| {
        lines_starting(s, "Stop says: pagent: ralph complete") == 2
    });
    assert!(
        screen.contains(
            "pagent: started a Ralph loop: up to 4 iterations, giving up after 3 turns in a row that change no file. \
             To stop it: Esc, then /pagent:cancel."
        ),
        "{screen}"
    );
    assert!(
        screen.contains(
            "pagent: started a Ralph loop: up to 25 iterations. To stop it: Esc, then /pagent:cancel."
        ),
        "{screen}"
    );
    ui.type_line("/pagent-run missing.md");
    let screen = ui.wait_for("pagent: error: the PRD missing.md does not exist");
    assert!(!screen.contains("Shell command failed"), "{screen}");
    assert!(!screen.contains("PAGENT_ARGS_7f3c9d"), "{screen}");
    assert_eq!(e2e.mock.requests().len(), 5);
}

/// A re-prompt of the same stage shows where the loop is and what is missing, not the
/// stage's whole prompt again.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn a_re_prompt_screen_shows_no_full_stage_prompt() {
    let e2e = E2e::start(vec![
        Reply::Echo(START.into()),
        Reply::text("Sketched the design."),
        Reply::text("Still sketching."),
    ]);
    e2e.write("prd.md", "# Todo\nA command-line todo list.\n");
    let ui = Tmux::start(&e2e);
    ui.type_line("/pagent-run prd.md --max-stages 1 --max-iterations 3");
    let screen = ui.wait_for("Stop says: pagent: gave up");
    assert!(
        screen.contains("pagent: started the prd-to-code pipeline"),
        "{screen}"
    );
    assert!(
        // "Stop hook error: <reason>" on 2.1.197; newer clients fold it under "Ran 1 stop hook".
        screen.contains("pagent · stage 1 of 1: architect · iteration 2 of 3"),
        "{screen}"
    );
    assert!(
        screen.contains("Stop says: pagent: stage architect not done, iteration 2 of 3: architecture.md does not exist yet"),
        "{screen}"
    );
    assert!(screen.contains("`pagent prompt` prints them"), "{screen}");
    // The stage prompt reached the model (set-up output) but is never on the screen.
    assert!(
        e2e.mock
            .all_text(0)
            .contains("You are the software architect")
    );
    assert!(
        !screen.contains("You are the software architect"),
        "{screen}"
    );
    assert!(!screen.contains("# Stage: architect"), "{screen}");
}

/// Starts a ralph loop whose second iteration runs `sleep 30`, and interrupts it with Esc
/// once the tool runs; the loop is still active (Esc does not reach any hook).
fn loop_interrupted_by_esc(ui: &Tmux, e2e: &E2e) {
    ui.type_line("/ralph Refactor the parser");
    ui.wait_for("Bash(sleep 30)");
    ui.wait_until("the tool to run", |_| e2e.mock.requests().len() >= 2);
    std::thread::sleep(Duration::from_millis(500));
    ui.key("Escape");
    ui.wait_for("Interrupted");
    assert_eq!(e2e.status()["status"], "active");
}

/// Esc, then an unrelated question: it is answered, the loop's task does not come back,
/// and the loop says it is paused; /pagent:status shows it paused; /pagent:resume goes on.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn after_esc_a_question_pauses_the_loop_and_resume_continues_it() {
    let e2e = E2e::start(vec![
        Reply::Echo(START.into()),
        Reply::bash("sleep 30"),
        Reply::text("2 + 2 = 4."),
        Reply::Echo("pagent ralph loop".into()),
        Reply::Echo("pagent: resumed".into()),
        done(),
    ]);
    let ui = Tmux::start(&e2e);
    loop_interrupted_by_esc(&ui, &e2e);
    ui.type_line("What is 2+2?");
    let screen = ui.wait_for(
        "Stop says: pagent: paused the Ralph loop because you wrote a message. /pagent:resume continues it, /pagent:cancel ends it.",
    );
    assert!(screen.contains("2 + 2 = 4."), "{screen}");
    // Answered, and nothing after it: no re-prompt with the loop's task.
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(e2e.mock.requests().len(), 3, "{screen}");
    assert!(e2e.mock.told_text(2).contains("What is 2+2?"));
    assert_eq!(lines_starting(&ui.screen(), "Stop hook error"), 1);

    ui.type_line("/pagent:status");
    let screen = ui.wait_for("pagent ralph loop · paused");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(
        e2e.mock.requests().len(),
        4,
        "status never resumes:\n{screen}"
    );
    assert!(e2e.status()["paused"].as_bool().unwrap());

    ui.type_line("/pagent:resume");
    ui.wait_for("pagent: resumed the Ralph loop. To stop it: Esc, then /pagent:cancel.");
    let screen = ui.wait_for("Stop says: pagent: ralph complete");
    assert!(
        screen.contains("Stop hook error: pagent · ralph loop · iteration 3 of 25"),
        "{screen}"
    );
    assert_eq!(e2e.status()["status"], "complete");
}

/// Esc, then status and cancel: status reports without resuming, cancel ends the loop.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn after_esc_status_and_cancel_work() {
    let e2e = E2e::start(vec![
        Reply::Echo(START.into()),
        Reply::bash("sleep 30"),
        Reply::Echo("pagent ralph loop".into()),
        Reply::Echo("pagent: cancelled".into()),
    ]);
    let ui = Tmux::start(&e2e);
    loop_interrupted_by_esc(&ui, &e2e);
    ui.type_line("/pagent-status");
    let screen = ui.wait_for("pagent ralph loop · paused");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(
        e2e.mock.requests().len(),
        3,
        "status never resumes:\n{screen}"
    );
    ui.type_line("/pagent:cancel");
    let screen = ui.wait_for("pagent: cancelled the Ralph loop");
    std::thread::sleep(Duration::from_secs(1));
    assert_eq!(e2e.mock.requests().len(), 4, "{screen}");
    assert_eq!(e2e.status()["status"], "cancelled");
}

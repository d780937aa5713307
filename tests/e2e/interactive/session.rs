//! What a session's loop says about the world outside the session (issue 30, §4): a
//! cancel from a terminal while the session is idle, Esc after a queued status, a session
//! that was quit, and a cancel typed in a second session of the same project.

use super::*;
use crate::tmux::{count, flat};

/// `pagent cancel` from a terminal while the session sits idle, then a new `/ralph`: the
/// new loop's start line stands alone; the old loop's "was cancelled" notice is not
/// shown under it (the user cancelled it themselves, and a new loop has begun).
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_c_a_terminal_cancel_while_idle_leaves_no_notice_under_the_next_ralph() {
    let e2e = E2e::start(vec![Reply::bash("sleep 20"), done(), pong()]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    ui.type_line("/ralph Refactor the parser");
    super::pause::interrupt_the_tool(&ui, &e2e);
    let out = e2e.pagent_as(None, &["cancel"]);
    assert!(out.status.success(), "{out:?}");
    ui.type_line("/ralph Tidy the docs");
    ui.wait_for("UserPromptExpansion says: pagent: started a Ralph loop: up to 25 iterations");
    let screen = ui.wait_for("Stop says: pagent: ralph complete");
    assert_eq!(count(&screen, "was cancelled"), 0, "{screen}");
    assert_eq!(count(&screen, "Claude may stop"), 0, "{screen}");
    ping(&ui, &e2e, 2);
}

/// Esc stays an interrupt (§4 b): a `/pagent-status` queued while the tool runs, then
/// Esc. Both clients send the queued status right after the interrupt; pagent used to
/// take it for 2.1.330's send-now and tell the model to go on, so Esc did not stop the
/// work, and a cancel typed next came one stop later and was answered twice. Now the
/// status is shown at rest, no model turn follows, and a cancel typed next ends the loop
/// at once, answered once.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_b_esc_after_a_queued_status_stays_an_interrupt() {
    // A model turn after Esc would take the pong meant for the ping.
    let e2e = E2e::start(vec![Reply::bash("sleep 20"), pong()]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    ui.type_line("/ralph Refactor the parser");
    ui.wait_until("the sleep to run", |s| {
        flat(s).contains("sleep 20") && super::pause::sleeping(&e2e)
    });
    ui.type_line("/pagent-status");
    ui.wait_for("Press up to edit queued messages");
    ui.key("Escape");
    ui.wait_for(
        "Claude is not working on it now: /pagent:resume sets it going again, /pagent:cancel \
         ends it.",
    );
    assert_eq!(e2e.status()["status"], "active");
    ui.type_line("/pagent-cancel");
    let screen =
        ui.wait_for("pagent: cancelled the Ralph loop after 1 iteration. Claude can stop now.");
    assert_eq!(e2e.status()["status"], "cancelled");
    ping(&ui, &e2e, 1);
    let screen = format!("{screen}\n{}", ui.screen());
    assert_eq!(
        count(&ui.screen(), "pagent: cancelled the Ralph loop"),
        1,
        "{screen}"
    );
}

/// A quit session's loop (§4 d): `/exit` with the loop active (Esc left it so). The
/// loop no longer reads "active" with nothing to drive it: status says it waits and how
/// to go on; `claude --resume ID`, then `/pagent:resume`, goes on with it.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_d_a_quit_sessions_loop_says_nothing_drives_it_and_resume_goes_on() {
    let e2e = E2e::start(vec![Reply::bash("sleep 20"), done(), pong()]);
    let session = {
        let ui = Tmux::start_sized(&e2e, 80, 24);
        ui.type_line("/ralph Refactor the parser");
        super::pause::interrupt_the_tool(&ui, &e2e);
        ui.type_line("/exit");
        // Not the screen's: the CLI (and its tmux server) may be gone already.
        pagent_test_support::wait::wait_until(crate::tmux::WAIT, "the session's end", || {
            (e2e.state()["paused"]["session_gone"] == true).then_some(())
        });
        e2e.state()["session_id"].as_str().unwrap().to_owned()
    };
    let status = String::from_utf8_lossy(&e2e.pagent(&["status"]).stdout).into_owned();
    assert!(
        flat(&status).contains("pagent ralph loop · paused · 1 iteration · ")
            && flat(&status).contains(&format!(
            "paused because its Claude Code session was quit: `claude --resume {session}` in {}, \
             then /pagent:resume, goes on with it (nothing drives it until then)",
            e2e.project.display()
        )),
        "{status}"
    );
    let ui = Tmux::with(&e2e)
        .size(80, 24)
        .args(&["--resume", &session])
        .start();
    ui.type_line("/pagent:resume");
    ui.wait_for("UserPromptExpansion says: pagent: resumed the Ralph loop.");
    ui.wait_for("Stop says: pagent: ralph complete");
    assert_eq!(e2e.status()["status"], "complete");
    assert_eq!(e2e.state()["session_id"], session.as_str());
}

/// A cancel typed in a second session of the project (§4 d) does not end the first
/// session's loop: pagent says whose it is and how to cancel it. A cancel from a terminal
/// then is told to the first session as coming from a terminal.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_d_a_cancel_typed_in_a_second_session_is_refused_and_says_how() {
    let e2e = E2e::start(vec![Reply::bash("sleep 20"), pong()]);
    let first = Tmux::start_sized(&e2e, 80, 24);
    first.type_line("/ralph Refactor the parser");
    super::pause::interrupt_the_tool(&first, &e2e);
    let owner = e2e.state()["session_id"].as_str().unwrap().to_owned();
    let second = Tmux::start_sized(&e2e, 80, 24);
    second.type_line("/pagent-cancel");
    second.wait_for(&format!(
        "pagent: the Ralph loop belongs to another Claude Code session ({owner}), so it was \
         not cancelled from here: type /pagent:cancel in that session, or run `pagent cancel` \
         in a terminal to end it anyway."
    ));
    assert_eq!(e2e.status()["status"], "active");
    assert_eq!(e2e.mock.requests().len(), 1, "no model turn");
    let out = e2e.pagent_as(None, &["cancel"]);
    assert!(out.status.success(), "{out:?}");
    first.type_line("ping");
    first.wait_for(
        "UserPromptSubmit says: pagent: the Ralph loop (iteration 1 of 25) was cancelled from \
         a terminal (`pagent cancel`).",
    );
    first.wait_for("pong");
    assert_eq!(count(&first.screen(), "the dashboard"), 0);
}

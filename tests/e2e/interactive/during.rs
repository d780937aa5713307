//! What the user does while Claude works (items 4 and 10): a status or cancel typed then
//! waits in Claude Code's queue until the turn ends, and a loop's turn ends only with the
//! loop; pagent's Stop hook reads the queue at the next stop and acts at once. A cancel
//! from a terminal is told in the session.

use super::*;
use crate::mock::Gate;
use crate::tmux::{count, flat};
use std::time::{Duration, Instant};

/// Starts a ralph loop whose first reply is a `sleep 8` tool call, and waits until the
/// tool runs: Claude is working.
fn start_working(ui: &Tmux, e2e: &E2e) {
    start_working_on(ui, e2e, "/ralph Refactor the parser");
}

/// [`start_working`] with the command `line`.
fn start_working_on(ui: &Tmux, e2e: &E2e, line: &str) {
    ui.type_line(line);
    ui.wait_until("the tool to start", |s| {
        e2e.mock.requests().len() == 1 && flat(s).contains("sleep 8")
    });
}

/// `/pagent-status` typed while Claude works is answered at the next stop, on screen, and
/// the loop goes on, never paused; the queued command's own answer comes when the loop
/// has ended.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_4_status_typed_while_the_model_works_is_answered_without_pausing() {
    // The third reply waits until the test has read the screen: Claude Code 2.1.330 clears
    // what scrolls off an 80x24 terminal.
    let gate = Gate::new();
    let e2e = E2e::start(vec![
        Reply::bash("sleep 8"),
        Reply::text("Still refactoring."),
        done().after(&gate),
    ]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    start_working(&ui, &e2e);
    ui.type_line("/pagent-status");
    let screen = ui.wait_for("Stop says: pagent: Ralph loop, iteration 2 of 25");
    let shown = flat(&screen);
    assert!(
        shown.contains("pagent ralph loop · active · 2 iterations · ")
            && shown.contains("current ralph 2 of 25 waiting for <promise>DONE</promise>"),
        "{screen}"
    );
    assert_eq!(e2e.state().get("paused"), None, "never paused: {screen}");
    ui.wait_until("the loop's next iteration", |_| {
        e2e.mock.requests().len() == 3
    });
    gate.open();
    ui.wait_for("Stop says: pagent: ralph complete");
    assert_eq!(e2e.status()["status"], "complete");
    // The queued command runs once the turn has ended: the loop's end, from pagent.
    ui.wait_for("UserPromptExpansion operation blocked by hook: pagent ralph loop · complete");
    assert_eq!(e2e.mock.requests().len(), 3);
}

/// `/pagent-cancel` typed while Claude works ends the loop at the next stop: no further
/// iteration, pagent says so on screen, and the queued command's answer says it is done.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_4_cancel_typed_while_the_model_works_ends_the_loop_at_its_next_stop() {
    let e2e = E2e::start(vec![
        Reply::bash("sleep 8"),
        Reply::text("Still refactoring."),
        pong(),
    ]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    start_working(&ui, &e2e);
    ui.type_line("/pagent-cancel");
    ui.wait_for(
        "Stop says: pagent: cancelled the Ralph loop after 1 iteration. Claude can stop now. \
         (You typed /pagent-cancel while Claude worked.)",
    );
    assert_eq!(e2e.status()["status"], "cancelled");
    ui.wait_for("pagent: no active loop to cancel (the last one, ralph, was cancelled");
    ping(&ui, &e2e, 2);
}

/// A cancel that cannot wait for the next stop ends the loop while Claude's tool still
/// would run: on 2.1.330 sent at once from the queue (ctrl+x ctrl+s), on 2.1.197 (no
/// such key) after Esc. Either way pagent's answer is on screen and no iteration follows.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_4_cancel_sent_at_once_ends_the_loop_while_the_tool_still_runs() {
    let e2e = E2e::start(vec![Reply::bash("sleep 20"), Reply::text("Stopped.")]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    ui.type_line("/ralph Refactor the parser");
    ui.wait_until("the sleep to run", |_| super::pause::sleeping(&e2e));
    let send_now = crate::harness::claude_at_least("2.1.330");
    if send_now {
        ui.type_line("/pagent-cancel");
        ui.wait_for("Press up to edit queued messages");
        ui.send_now();
    } else {
        ui.key("Escape");
        ui.wait_for("Interrupted");
        ui.type_line("/pagent-cancel");
    }
    let screen = ui.wait_for("pagent: cancelled the Ralph loop after 1 iteration.");
    assert_eq!(e2e.status()["status"], "cancelled", "{screen}");
    // Sent at once, the tool goes on in the background (Esc killed it on 2.1.197).
    assert!(
        !send_now || super::pause::sleeping(&e2e),
        "the loop ended only after the tool:\n{screen}"
    );
    // No iteration follows: nothing the model is told after this carries the task again.
    for index in 1..e2e.mock.requests().len() {
        assert!(
            !e2e.mock.told_text(index).contains("pagent · ralph loop"),
            "request {index} re-prompts the loop"
        );
    }
}

/// Claude Code 2.1.330 lets the user send a queued message at once (ctrl+x ctrl+s), which
/// cuts the turn short: pagent shows the status and hands the model the loop again, so
/// asking never leaves the loop stalled. 2.1.197 has no such key: the command waits in
/// the queue and the next stop answers it, as above.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_4_status_sent_at_once_keeps_the_loop_going() {
    // Every reply after the first answer waits until the test has read the status. The
    // replies change no file: the no-progress limit is off, so only the promise ends it.
    // The first answer waits too: a status the client shows while that request is in
    // flight would otherwise scroll off 80x24 (and 2.1.330 clears what scrolls off)
    // before the test's next look, under a loaded machine's timing (a CI run lost it so).
    let answer = Gate::new();
    let gate = Gate::new();
    let e2e = E2e::start(vec![
        Reply::bash("sleep 8"),
        Reply::text("Back to the parser.").after(&answer),
        Reply::text("Still refactoring.").after(&gate),
        done().after(&gate),
        done().after(&gate),
        done().after(&gate),
    ]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    start_working_on(
        &ui,
        &e2e,
        "/ralph Refactor the parser --no-progress-limit 0",
    );
    ui.type_line("/pagent-status");
    // Queued (both versions say how to edit it), then sent at once.
    ui.wait_for("Press up to edit queued messages");
    ui.send_now();
    // 2.1.330 either cuts the turn (pagent shows the status and lets the command expand,
    // so the model takes the loop up again) or moves the running tool to the background,
    // lets the model answer, and the stop that follows reads the status from the queue
    // (which of the two depends on where the turn was: `research/cc-facts.md` A2).
    // 2.1.197 has no send-now: the command waits in the queue and the next stop answers.
    let expanded = flat("UserPromptExpansion says: pagent ralph loop · active");
    let at_stop = flat("Stop says: pagent: Ralph loop, iteration 2 of 25");
    // The answer is let go once the client has held its request for `TAKES_IT` without
    // showing the status: it takes the queued command at the stop then, which needs the
    // answer.
    const TAKES_IT: Duration = Duration::from_secs(3);
    let mut held_since = None;
    let screen = ui.wait_until("the status on screen", |s| {
        let s = flat(s);
        let shown = s.contains(&expanded)
            || (s.contains(&at_stop) && s.contains("pagent ralph loop · active · 2 iterations"));
        if !shown && e2e.mock.requests().len() >= 2 {
            let since = held_since.get_or_insert_with(Instant::now);
            if since.elapsed() >= TAKES_IT {
                answer.open();
            }
        }
        shown
    });
    answer.open();
    if !crate::harness::claude_at_least("2.1.330") {
        assert!(!flat(&screen).contains(&expanded), "{screen}");
    }
    assert_eq!(e2e.state().get("paused"), None, "never paused");
    gate.open();
    let screen = ui.wait_for("Stop says: pagent: ralph complete");
    assert_eq!(e2e.status()["status"], "complete");
    assert_eq!(
        count(&screen, "Claude is not working on it now"),
        0,
        "{screen}"
    );
}

/// `pagent cancel` from a terminal while the session's loop runs: the session's next stop
/// says so, once.
#[test]
#[ignore = "needs the Claude Code CLI and tmux"]
fn item_10_a_cancel_from_a_terminal_is_told_in_the_session() {
    let e2e = E2e::start(vec![
        Reply::bash("sleep 8"),
        Reply::text("Still refactoring."),
        pong(),
    ]);
    let ui = Tmux::start_sized(&e2e, 80, 24);
    start_working(&ui, &e2e);
    let out = e2e.pagent_as(None, &["cancel"]);
    assert!(out.status.success(), "{out:?}");
    ui.wait_for(
        "Stop says: pagent: the Ralph loop (iteration 1 of 25) was cancelled from a terminal \
         (`pagent cancel`). Claude may stop.",
    );
    ping(&ui, &e2e, 2);
    assert_eq!(count(&ui.screen(), "was cancelled from a terminal"), 1);
}

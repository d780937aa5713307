//! The interactive terminal UI (issues 10 and 20): the real CLI under tmux, driven by
//! typed keys, asserting on the screen a user sees, on both pinned Claude Code versions.
//! `claude -p` cannot show what a person lives with: the start line, the re-prompt
//! screens, Esc, a command typed while Claude works, pausing, resuming, errors.
//!
//! The mock model never copies anything pagent printed: every pagent line on these
//! screens is Claude Code's rendering of what pagent's hooks returned (item 1). "Nothing
//! reached the model" is proven without waiting for nothing: a `ping` typed afterwards
//! gets the next scripted reply, so the requests in between are counted exactly.
//!
//! - [`voice`]: the start line, errors, help, misspelt flags, status and cancel answered
//!   by pagent itself (items 1, 2, 3, 7);
//! - [`during`]: status and cancel typed while Claude works, a cancel from a terminal
//!   (items 4 and 10);
//! - [`pause`]: Esc, a question, status, resume; a stage change's screen (items 1, 12);
//! - [`cap`]: Claude Code's cap on a turn's continuations, said on screen (issue 30, §3);
//! - [`session`]: Esc after a queued status, a terminal cancel before a new loop, a quit
//!   session, a cancel typed in a second session (issue 30, §4).

use crate::harness::E2e;
use crate::mock::Reply;
use crate::tmux::Tmux;

mod cap;
mod during;
mod pause;
mod session;
mod voice;

/// The reply to [`ping`].
fn pong() -> Reply {
    Reply::text("pong")
}

fn done() -> Reply {
    Reply::text("Done.\n<promise>DONE</promise>")
}

/// Types `ping` and waits for the model's `pong`: the request it makes is the one after
/// `before` requests, so nothing else reached the model in between.
fn ping(ui: &Tmux, e2e: &E2e, before: usize) {
    ui.type_line("ping");
    ui.wait_until("the model's pong", |_| e2e.mock.requests().len() > before);
    ui.wait_for("pong");
    let requests = e2e.mock.requests().len();
    assert_eq!(requests, before + 1, "requests made before the ping");
    assert!(e2e.mock.told_text(before).contains("ping"));
}

/// The model was never told pagent's start line: the user had it from pagent itself.
fn never_told_the_start_line(e2e: &E2e) {
    for index in 0..e2e.mock.requests().len() {
        let told = e2e.mock.all_text(index);
        assert!(
            !told.contains("pagent: started"),
            "request {index} carries the start line: {told}"
        );
    }
}

//! The SessionEnd hook's use case (`pagent hook session-end`). When the Claude Code session
//! that drives a loop ends (quit with /exit, Ctrl-D or Ctrl-C, its terminal closed, or
//! /clear), nothing will stop in it again, so nothing drives the loop: it waits, paused,
//! and `pagent status`, the dashboard and the session itself (if resumed) say so and what
//! to type (`claude --resume ID`, then `/pagent:resume`).
//!
//! Why this hook and not the liveness of Claude Code's process: both pinned clients run
//! SessionEnd (2.1.197 and 2.1.332, `tests/e2e/interactive/session.rs`) for /exit, Ctrl-D
//! and a closed terminal, on every platform, with the session's id; `CLAUDE_PID` is only
//! in newer clients' hook environment, a process id is reused, and asking whether one
//! lives is a system call per platform in every reader. What neither can see is the same:
//! a client killed outright (SIGKILL, a crash) runs no hook, and then the loop reads
//! active until the session is resumed or the loop cancelled.
//!
//! Like every hook: with no state file it returns before reading stdin; it never blocks
//! (SessionEnd cannot), never exits 2, writes only the user's own loop of this session,
//! compare-and-swap, and logs the pause.

use pagent_engine::Action;
use pagent_engine::pause::session_ended;
use pagent_protocol::HookOutput;

use super::frame::HookCall;
use super::words;
use crate::cli::ui;
use crate::io::now;
use crate::session;
use crate::store::eventlog::Event;

/// The SessionEnd hook's body: the loop of the session that ended waits, paused.
pub fn mark_ended(call: &mut HookCall) -> anyhow::Result<HookOutput> {
    let project = call.project()?;
    // Only the hook input names the session that ended.
    let session = call.session();
    let reason = call.input.reason.clone();
    let now = now();
    let written = session::change_own_loop(
        &project,
        call.env,
        |state| session_ended(state, session.as_deref(), reason.as_deref(), now),
        &mut |m: &str| ui::warn(call.stderr, m),
    )?;
    if let Some(state) = written {
        let detail = words::session_ended(reason.as_deref());
        session::log(
            &project,
            &Event::at(&state, Action::Pause, detail, now, session.as_deref()),
            &mut |m: &str| ui::warn(call.stderr, m),
        );
    }
    Ok(HookOutput::default())
}

//! The compaction hooks' use case (`pagent hook compact`: PreCompact, and SessionStart
//! after a compaction). Re-prompts of a stage are quiet (header, what is missing, where the
//! full prompt is) because the model read the stage prompt when the stage began; once the
//! conversation is compacted that text may be gone, so the next re-prompt carries it in
//! full again.
//!
//! Like the other hooks: no state file, no work; never blocks, never exits 2; writes only
//! the user's own loop of this session, compare-and-swap.

use pagent_engine::{Belongs, belongs};
use pagent_protocol::HookOutput;

use super::frame::HookCall;
use crate::cli::ui;
use crate::session;

/// The compaction hooks' body: the owner's next re-prompt carries the full stage prompt.
pub fn mark(call: &mut HookCall) -> anyhow::Result<HookOutput> {
    // SessionStart fires for startup, resume and clear too: only a compaction matters.
    if call.input.is_session_start_not_after_compaction() {
        return Ok(HookOutput::default());
    }
    let project = call.project()?;
    let session = call.session();
    session::change_own_loop(
        &project,
        call.env,
        |state| {
            // Only the session's own loop: `pagent loop` sends every agent the full prompt.
            let mine = belongs(state, session.as_deref()) == Belongs::Owner;
            (mine && (!state.full_prompt_due || state.continuations > 0)).then(|| {
                let mut next = state.clone();
                next.full_prompt_due = true;
                // Claude Code counts a turn's continuations afresh after a compaction.
                next.continuations = 0;
                next
            })
        },
        &mut |m: &str| ui::warn(call.stderr, m),
    )?;
    Ok(HookOutput::default())
}

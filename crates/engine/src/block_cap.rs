//! Claude Code's cap on a turn's continuations, said instead of suffered.
//!
//! Claude Code ends a turn once its Stop hooks have continued it 8 times in a row with no
//! tool call between, whatever the hooks answer the 9th time; `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP`
//! changes the 8, and 0 (or less) removes the cap. No hook input says it happened, and
//! 2.1.197 shows nothing at all: the session used to sit idle while the loop read
//! "active". Both pinned clients count the same way (read from their code and proven in
//! `tests/e2e`): a Stop hook's continuation (a block, or `additionalContext`) adds one; a
//! model turn that called a tool, a new prompt and a compaction start the count afresh.
//!
//! pagent counts its own continuations of the session's turn in the state
//! ([`State::continuations`]): a Stop that comes with `stop_hook_active` false (the first
//! of a prompt), or after a tool call (the transcript's lines since the last Stop hold a
//! `tool_use`), starts the count afresh. When the continuation a Stop decided would be
//! one more than the cap allows, Claude Code would drop it, so pagent does not make it:
//! it pauses the loop and says why and what to type, on screen and in `status`, the
//! dashboard and the notification ([`keep_within`]). The loop is as the decision left
//! it (the stage advanced, the iteration counted); `/pagent:resume` hands the model that
//! iteration's prompt in a new turn, which Claude Code counts from zero.
//!
//! When the turn cannot be read (no transcript, or not all of what was written since the
//! last Stop), pagent does not know whether a tool ran and counts afresh: it never pauses
//! a loop on a guess.

use crate::decide::{Decision, LogEntry, Step};
use crate::pause::Pause;
use crate::{Action, State, Timestamp};

/// Claude Code's cap when `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` does not set one.
pub const DEFAULT_CAP: u32 = 8;

/// How many continuations in a row, with no tool call between, Claude Code lets a turn
/// have; `None`: no cap.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlockCap(Option<u32>);

impl Default for BlockCap {
    fn default() -> BlockCap {
        BlockCap(Some(DEFAULT_CAP))
    }
}

impl BlockCap {
    /// The cap `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` sets in the hook's environment (Claude
    /// Code's own, which every hook inherits, settings' `env` included), read as
    /// JavaScript's `parseInt` reads it, as 2.1.197 does: blanks, a sign and the digits
    /// that lead, the rest ignored; no digits means the default, 0 or less no cap. Newer
    /// clients also read `1e1` as 10 and `1,000` as 1000 where `parseInt` reads 1: the
    /// smaller reading is kept, so pagent never continues past the cap of either.
    pub fn from_env(value: Option<&str>) -> BlockCap {
        let Some(value) = value else {
            return BlockCap::default();
        };
        let text = value.trim_start();
        let (negative, digits) = match text.as_bytes().first() {
            Some(b'-') => (true, &text[1..]),
            Some(b'+') => (false, &text[1..]),
            _ => (false, text),
        };
        let leading: &str = &digits[..digits
            .bytes()
            .position(|b| !b.is_ascii_digit())
            .unwrap_or(digits.len())];
        if leading.is_empty() {
            return BlockCap::default();
        }
        if negative || leading.bytes().all(|b| b == b'0') {
            return BlockCap(None);
        }
        // More digits than a u32 holds: a cap no loop reaches.
        BlockCap(Some(leading.parse().unwrap_or(u32::MAX)))
    }

    /// The cap, or `None` when there is none.
    pub fn limit(self) -> Option<u32> {
        self.0
    }

    /// Whether Claude Code drops the `nth` continuation in a row.
    pub fn overrides(self, nth: u32) -> bool {
        self.0.is_some_and(|cap| nth > cap)
    }
}

/// What a Stop knows of the turn it ends.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TurnSoFar {
    /// The hook input's `stop_hook_active`: a Stop hook already continued this turn
    /// (false at the first Stop after a prompt).
    pub continued: bool,
    /// Whether the model called a tool since the last Stop (the transcript's lines since
    /// it); `None` when that could not be read.
    pub tool_called: Option<bool>,
}

/// How many continuations in a row, with no tool call between, the turn has had before
/// this Stop.
pub fn streak_before(state: &State, turn: TurnSoFar) -> u32 {
    if turn.continued && turn.tool_called == Some(false) {
        state.continuations
    } else {
        0
    }
}

/// `step`, decided at a Stop of the turn `turn` of the loop `before`, kept within `cap`:
/// a continuation Claude Code would drop pauses the loop instead, said once, now.
pub fn keep_within(
    mut step: Step,
    before: &State,
    turn: TurnSoFar,
    cap: BlockCap,
    now: Timestamp,
) -> Step {
    if !matches!(step.decision, Decision::Block { .. }) {
        step.write.continuations = 0;
        return step;
    }
    let nth = streak_before(before, turn).saturating_add(1);
    let Some(limit) = cap.limit().filter(|_| cap.overrides(nth)) else {
        step.write.continuations = nth;
        return step;
    };
    let why = why(limit);
    let mut paused = step.write;
    paused.continuations = 0;
    paused.paused = Some(Pause {
        told: true,
        ..Pause::new(now, &why)
    });
    paused.updated_at = now;
    Step {
        decision: Decision::Notify(crate::pause::pause_notice(&paused)),
        log: LogEntry {
            action: Action::Pause,
            stage: paused.current().name.clone(),
            iteration: paused.iterations[paused.stage],
            detail: format!("paused: {why}"),
        },
        write: paused,
    }
}

/// Why the loop paused, completing "paused because ...".
pub fn why(limit: u32) -> String {
    let (turns, times) = match limit {
        1 => ("turn".to_owned(), "once".to_owned()),
        n => (format!("{n} turns"), format!("{n} times")),
    };
    format!(
        "Claude called no tool in its last {turns}, and Claude Code ends a turn that a hook \
         continued {times} in a row without one (CLAUDE_CODE_STOP_HOOK_BLOCK_CAP)"
    )
}

#[cfg(test)]
mod tests;

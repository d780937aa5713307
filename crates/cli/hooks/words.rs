//! What the hooks say in words of their own (the engine words the decisions: the
//! re-prompts, the stop notices, the pause lines): the notices and refusals a hook adds,
//! the log lines it writes, and the sentence its error is reported under. Each has a
//! whole-output snapshot (`words/tests.rs`), so a change of wording is reviewed in a diff.

use std::path::Path;

use pagent_protocol::HookEvent;

use crate::store::consent;

/// The sentence a hook's error is reported under: what the failure means for the user
/// (every hook fails open: nothing is blocked).
pub fn failed(event: HookEvent) -> &'static str {
    match event {
        HookEvent::Stop => "the Stop hook failed, so Claude may stop",
        HookEvent::StopFailure => "the StopFailure hook failed; the loop was not marked waiting",
        HookEvent::PostToolUse => "the PostToolUse hook failed; the edit was not checked",
        HookEvent::UserPromptSubmit => "the UserPromptSubmit hook failed; the loop was not paused",
        HookEvent::UserPromptExpansion => {
            "the UserPromptExpansion hook failed; the command runs as usual"
        }
        HookEvent::PreCompact | HookEvent::SessionStart => "the compaction hook failed",
        HookEvent::SessionEnd => "the SessionEnd hook failed; the loop was not marked as left",
    }
}

/// The Stop's notice for a loop state of the user's that is older than the newest pagent
/// wrote in the project: it is not continued.
pub fn stale_state() -> String {
    "pagent: ignoring .claude/pagent-pipeline.json: it is an older copy of a loop \
     state than the newest pagent wrote here (restored from a backup or a stash?), \
     so it is not continued. Start a new loop with /pagent:run or /pagent:ralph."
        .to_owned()
}

/// The Stop's line for a `/pagent-cancel` the user typed while the model worked: what the
/// cancel did (`done`), and the command as typed (already made printable).
pub fn cancelled_while_working(done: &str, typed: &str) -> String {
    format!("{done} (You typed {typed} while Claude worked.)")
}

/// The warning when a notice cannot be remembered (so it may be said again).
pub fn cannot_remember_notice(err: &anyhow::Error) -> String {
    format!("cannot remember a notice in pagent's config folder: {err:#}")
}

/// PostToolUse's notice, said once per program: a check of the file `shown` was skipped
/// because `program` runs the project's own code and the user has not trusted it.
pub fn untrusted_check(shown: &str, program: &Path) -> String {
    format!(
        "pagent: a check of {shown} needs {}, which runs the project's own code, and you have not trusted it, \
         so the check was skipped. Run `pagent trust {}` to allow it (said once).",
        program.display(),
        consent::shell_word(&program.display().to_string())
    )
}

/// PostToolUse's warning when the user's own config cannot be read.
pub fn default_checks(err: &anyhow::Error) -> String {
    format!("{err:#}; using the default checks")
}

/// The event log's line when SessionEnd pauses the loop (`reason` as Claude Code gave it).
pub fn session_ended(reason: Option<&str>) -> String {
    format!(
        "paused: its Claude Code session ended ({})",
        reason.unwrap_or("no reason given")
    )
}

/// The event log's line when a prompt typed in the loop's session pauses it.
pub fn paused_by_prompt() -> String {
    "paused: the user wrote a message in the loop's session".to_owned()
}

#[cfg(test)]
mod tests;

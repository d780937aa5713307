//! The hook events pagent is registered for, by the names Claude Code gives them in
//! `hook_event_name` (input) and `hookSpecificOutput.hookEventName` (output): one table,
//! read both ways, so no hook compares or writes the names as bare strings. The same
//! table names the `pagent hook` subcommand each event runs ([`HookEvent::subcommand`]):
//! clap's hook commands and the binary's fast path are both built from it, so no other
//! list of the events exists.

use crate::HookInput;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HookEvent {
    Stop,
    StopFailure,
    PostToolUse,
    UserPromptSubmit,
    UserPromptExpansion,
    PreCompact,
    SessionStart,
    SessionEnd,
}

impl HookEvent {
    pub const ALL: [HookEvent; 8] = [
        HookEvent::Stop,
        HookEvent::StopFailure,
        HookEvent::PostToolUse,
        HookEvent::UserPromptSubmit,
        HookEvent::UserPromptExpansion,
        HookEvent::PreCompact,
        HookEvent::SessionStart,
        HookEvent::SessionEnd,
    ];

    /// Claude Code's name for the event.
    pub fn name(self) -> &'static str {
        match self {
            HookEvent::Stop => "Stop",
            HookEvent::StopFailure => "StopFailure",
            HookEvent::PostToolUse => "PostToolUse",
            HookEvent::UserPromptSubmit => "UserPromptSubmit",
            HookEvent::UserPromptExpansion => "UserPromptExpansion",
            HookEvent::PreCompact => "PreCompact",
            HookEvent::SessionStart => "SessionStart",
            HookEvent::SessionEnd => "SessionEnd",
        }
    }

    pub fn from_name(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.name() == name)
    }

    /// The `pagent hook` subcommand that runs for the event (as `hooks/hooks.json` calls
    /// it): PreCompact and SessionStart share one, the compaction hook.
    pub fn subcommand(self) -> &'static str {
        match self {
            HookEvent::Stop => "stop",
            HookEvent::StopFailure => "stop-failure",
            HookEvent::PostToolUse => "post-tool-use",
            HookEvent::UserPromptSubmit => "user-prompt-submit",
            HookEvent::UserPromptExpansion => "user-prompt-expansion",
            HookEvent::PreCompact | HookEvent::SessionStart => "compact",
            HookEvent::SessionEnd => "session-end",
        }
    }

    /// The event a `pagent hook` subcommand is named for: the first in [`HookEvent::ALL`]
    /// that runs it (the compaction hook's is PreCompact).
    pub fn from_subcommand(name: &str) -> Option<HookEvent> {
        HookEvent::ALL.into_iter().find(|e| e.subcommand() == name)
    }

    /// One event per `pagent hook` subcommand, in the table's order: the events the
    /// subcommands are named for.
    pub fn subcommands() -> impl Iterator<Item = HookEvent> {
        HookEvent::ALL
            .into_iter()
            .filter(|e| HookEvent::from_subcommand(e.subcommand()) == Some(*e))
    }
}

impl HookInput {
    /// The event this input is for, when it names one pagent knows.
    pub fn event(&self) -> Option<HookEvent> {
        self.hook_event_name
            .as_deref()
            .and_then(HookEvent::from_name)
    }

    /// Whether this is a SessionStart for anything but a compaction (startup, resume,
    /// clear), which the compaction hook leaves alone.
    pub fn is_session_start_not_after_compaction(&self) -> bool {
        self.event() == Some(HookEvent::SessionStart) && self.source.as_deref() != Some("compact")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_event_name_reads_back_as_its_event() {
        for event in HookEvent::ALL {
            assert_eq!(HookEvent::from_name(event.name()), Some(event));
        }
        assert_eq!(HookEvent::from_name("stop"), None);
    }

    #[test]
    fn issue_31_every_event_has_one_subcommand_and_each_subcommand_one_event() {
        for event in HookEvent::ALL {
            let named = HookEvent::from_subcommand(event.subcommand()).unwrap();
            assert_eq!(named.subcommand(), event.subcommand());
        }
        let subcommands: Vec<&str> = HookEvent::subcommands()
            .map(HookEvent::subcommand)
            .collect();
        assert_eq!(
            subcommands,
            [
                "stop",
                "stop-failure",
                "post-tool-use",
                "user-prompt-submit",
                "user-prompt-expansion",
                "compact",
                "session-end"
            ]
        );
        assert_eq!(HookEvent::from_subcommand("Stop"), None);
        assert_eq!(HookEvent::from_subcommand("notify"), None);
    }

    #[test]
    fn only_a_session_start_other_than_a_compaction_is_left_alone() {
        let input = |json: &str| HookInput::from_json(json.as_bytes()).unwrap();
        for (json, left_alone) in [
            (
                r#"{"hook_event_name": "SessionStart", "source": "startup"}"#,
                true,
            ),
            (
                r#"{"hook_event_name": "SessionStart", "source": "clear"}"#,
                true,
            ),
            (r#"{"hook_event_name": "SessionStart"}"#, true),
            (
                r#"{"hook_event_name": "SessionStart", "source": "compact"}"#,
                false,
            ),
            (r#"{"hook_event_name": "PreCompact"}"#, false),
            (r#"{}"#, false),
        ] {
            assert_eq!(
                input(json).is_session_start_not_after_compaction(),
                left_alone,
                "{json}"
            );
        }
    }
}

//! The hook events pagent is registered for, by the names Claude Code gives them in
//! `hook_event_name` (input) and `hookSpecificOutput.hookEventName` (output): one table,
//! read both ways, so no hook compares or writes the names as bare strings.

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

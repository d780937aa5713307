//! Hook input and output JSON (see `shared/CLAUDE-CODE.md`, "Hook input" and "Hook output").

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// What Claude Code sends on a hook's stdin. Every field is optional: pagent must keep
/// working (and failing open) whatever a client version leaves out.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
#[serde(default)]
pub struct HookInput {
    pub session_id: Option<String>,
    pub transcript_path: Option<PathBuf>,
    pub cwd: Option<PathBuf>,
    pub hook_event_name: Option<String>,
    pub permission_mode: Option<String>,
    /// True when this Stop follows a block from a Stop hook in the same turn.
    pub stop_hook_active: bool,
    /// The model's final message text (Claude Code 2.1.47 and later).
    pub last_assistant_message: Option<String>,
    /// PostToolUse only.
    pub tool_name: Option<String>,
    /// PostToolUse only: the tool's arguments, kept as raw JSON.
    pub tool_input: Option<serde_json::Value>,
    /// UserPromptSubmit only: the prompt exactly as typed (before a command is expanded).
    pub prompt: Option<String>,
    /// SessionStart only: `startup`, `resume`, `clear` or `compact`.
    pub source: Option<String>,
    /// UserPromptExpansion only: the slash command's name as typed, without the slash
    /// (`ralph`, `pagent:status`); hooks.json's `matcher` is compared with it.
    pub command_name: Option<String>,
    /// UserPromptExpansion only: the text after the command's name (`$ARGUMENTS`).
    pub command_args: Option<String>,
    /// SessionEnd only: why the session ended (`clear`, `resume`, `logout`,
    /// `prompt_input_exit`, `other`; 2.1.197 and 2.1.332 say `other` for /exit, Ctrl-D and
    /// a closed terminal).
    pub reason: Option<String>,
    /// StopFailure only: the API error that ended the turn (`rate_limit`, `server_error`,
    /// ...); `last_assistant_message` then holds Claude Code's text for it.
    pub error: Option<String>,
}

impl HookInput {
    /// Parses hook stdin. Anything but a JSON object is an error, empty input included: a
    /// hook always receives an object. (serde would also read a struct from an array, so
    /// `[]` would pass as an input with every field missing.)
    pub fn from_json(bytes: &[u8]) -> Result<Self, serde_json::Error> {
        let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
        if first != Some(&b'{') {
            return Err(<serde_json::Error as serde::de::Error>::custom(
                "expected a JSON object",
            ));
        }
        serde_json::from_slice(bytes)
    }
}

/// `"decision": "block"` is the only decision a hook prints; allowing prints nothing.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Decision {
    Block,
}

/// What a hook prints on stdout. `HookOutput::default()` serialises to `{}`, and
/// [`HookOutput::is_empty`] lets the caller print nothing at all instead.
#[derive(Debug, Clone, Default, PartialEq, Deserialize, Serialize)]
pub struct HookOutput {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub decision: Option<Decision>,
    /// For a block: the text the model reads next (`Stop hook feedback:\n...`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Shown to the user, never to the model.
    #[serde(rename = "systemMessage", skip_serializing_if = "Option::is_none")]
    pub system_message: Option<String>,
    #[serde(rename = "hookSpecificOutput", skip_serializing_if = "Option::is_none")]
    pub hook_specific_output: Option<HookSpecificOutput>,
}

impl HookOutput {
    pub fn is_empty(&self) -> bool {
        self == &Self::default()
    }
}

/// PostToolUse's way to hand the model extra context without blocking.
#[derive(Debug, Clone, PartialEq, Deserialize, Serialize)]
pub struct HookSpecificOutput {
    #[serde(rename = "hookEventName")]
    pub hook_event_name: String,
    #[serde(rename = "additionalContext", skip_serializing_if = "Option::is_none")]
    pub additional_context: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;

    const STOP: &str =
        include_str!("../../../tests/fixtures/claude-code-2.1.197/stop_hook_stdin.jsonl");
    const POST: &str =
        include_str!("../../../tests/fixtures/claude-code-2.1.197/posttooluse_hook_stdin.jsonl");

    #[test]
    fn parses_captured_stop_payloads() {
        let inputs: Vec<HookInput> = STOP
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| HookInput::from_json(l.as_bytes()).unwrap())
            .collect();
        assert_eq!(inputs.len(), 2);
        assert_eq!(inputs[0].hook_event_name.as_deref(), Some("Stop"));
        assert!(!inputs[0].stop_hook_active);
        assert_eq!(
            inputs[0].last_assistant_message.as_deref(),
            Some("First pass done.")
        );
        assert!(inputs[1].stop_hook_active);
        assert_eq!(
            inputs[1].session_id.as_deref(),
            Some("35f641a1-e3ce-47f3-8fb7-50415b29808a")
        );
    }

    #[test]
    fn parses_the_newest_clients_payloads() {
        // Claude Code 2.1.330: the same keys, `effort.level` medium, PostToolUse may carry
        // an `mcp_server` object.
        const STOP: &str =
            include_str!("../../../tests/fixtures/claude-code-2.1.330/stop_hook_stdin.jsonl");
        const POST: &str = include_str!(
            "../../../tests/fixtures/claude-code-2.1.330/posttooluse_hook_stdin.jsonl"
        );
        let inputs: Vec<HookInput> = STOP
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| HookInput::from_json(l.as_bytes()).unwrap())
            .collect();
        assert_eq!(
            inputs
                .iter()
                .map(|i| (i.stop_hook_active, i.last_assistant_message.as_deref()))
                .collect::<Vec<_>>(),
            [
                (false, Some("First pass done.")),
                (true, Some("Finished. <promise>DONE</promise>"))
            ]
        );
        let post = HookInput::from_json(POST.trim().as_bytes()).unwrap();
        assert_eq!(post.tool_name.as_deref(), Some("Write"));
    }

    /// Claude Code 2.1.332, recorded by the end-to-end suite (PAGENT_E2E_RECORD): the
    /// same keys as 2.1.330 in Stop (11) and PostToolUse (12); no `source` in
    /// UserPromptSubmit, though the SDK's types of that version declare one as optional.
    #[test]
    fn parses_the_2_1_332_payloads() {
        const STOP: &str =
            include_str!("../../../tests/fixtures/claude-code-2.1.332/stop_hook_stdin.jsonl");
        const POST: &str = include_str!(
            "../../../tests/fixtures/claude-code-2.1.332/posttooluse_hook_stdin.jsonl"
        );
        const SUBMIT: &str = include_str!(
            "../../../tests/fixtures/claude-code-2.1.332/user_prompt_submit_stdin.jsonl"
        );
        let parse = |text: &'static str| -> Vec<HookInput> {
            text.lines()
                .map(|l| HookInput::from_json(l.as_bytes()).unwrap())
                .collect()
        };
        assert_eq!(
            parse(STOP)
                .iter()
                .map(|i| (i.stop_hook_active, i.last_assistant_message.as_deref()))
                .collect::<Vec<_>>(),
            [
                (false, Some("First attempt.")),
                (true, Some("Second attempt.")),
                (true, Some("All fixed.\n<promise>DONE</promise>"))
            ]
        );
        for post in parse(POST) {
            assert_eq!(post.tool_name.as_deref(), Some("Write"));
            let path = post
                .tool_input
                .as_ref()
                .and_then(|v| v["file_path"].as_str());
            assert_eq!(path, Some("/home/user/project/config.json"));
        }
        let submitted = parse(SUBMIT);
        assert_eq!(submitted[3].prompt.as_deref(), Some("ping"));
        assert!(submitted.iter().all(|i| i.source.is_none()));
    }

    #[test]
    fn parses_the_captured_user_prompt_expansion_payloads() {
        // A `/ralph` typed in the terminal UI, on each client.
        for (text, args) in [
            (
                include_str!(
                    "../../../tests/fixtures/claude-code-2.1.197/user_prompt_expansion_stdin.json"
                ),
                "Fix it --max-iterations 2",
            ),
            (
                include_str!(
                    "../../../tests/fixtures/claude-code-2.1.330/user_prompt_expansion_stdin.json"
                ),
                "Fix it --max-iterations 2",
            ),
            (
                include_str!(
                    "../../../tests/fixtures/claude-code-2.1.332/user_prompt_expansion_stdin.json"
                ),
                "Fix the parser --max-iterations 4",
            ),
        ] {
            let input = HookInput::from_json(text.as_bytes()).unwrap();
            assert_eq!(
                input.hook_event_name.as_deref(),
                Some("UserPromptExpansion")
            );
            assert_eq!(input.command_name.as_deref(), Some("ralph"));
            assert_eq!(input.command_args.as_deref(), Some(args));
            assert_eq!(input.prompt, Some(format!("/ralph {args}")));
        }
    }

    #[test]
    fn parses_captured_post_tool_use_payload() {
        let input = HookInput::from_json(POST.trim().as_bytes()).unwrap();
        assert_eq!(input.tool_name.as_deref(), Some("Write"));
        let path = input
            .tool_input
            .as_ref()
            .and_then(|v| v["file_path"].as_str());
        assert_eq!(path, Some("/home/user/project/hello.txt"));
    }

    #[test]
    fn missing_fields_default_and_unknown_fields_are_ignored() {
        let input =
            HookInput::from_json(br#"{"future_field": [1, 2], "stop_hook_active": true}"#).unwrap();
        assert!(input.stop_hook_active);
        assert_eq!(input.session_id, None);
        assert_eq!(input.last_assistant_message, None);
    }

    #[test]
    fn only_a_json_object_is_a_hook_input() {
        for text in ["[]", "[null]", "\"x\"", "3", "null", "true", " \n[{}]", ""] {
            assert!(HookInput::from_json(text.as_bytes()).is_err(), "{text:?}");
        }
        for text in ["{}", " \n\t{\"session_id\": null}"] {
            let input = HookInput::from_json(text.as_bytes()).unwrap();
            assert_eq!(input.session_id, None, "{text:?}");
        }
    }

    #[test]
    fn allow_serialises_to_an_empty_object_and_block_to_the_documented_shape() {
        assert!(HookOutput::default().is_empty());
        assert_eq!(serde_json::to_string(&HookOutput::default()).unwrap(), "{}");
        let block = HookOutput {
            decision: Some(Decision::Block),
            reason: Some("next".into()),
            system_message: Some("shown".into()),
            hook_specific_output: None,
        };
        assert_eq!(
            serde_json::to_value(&block).unwrap(),
            serde_json::json!({"decision": "block", "reason": "next", "systemMessage": "shown"})
        );
    }
}

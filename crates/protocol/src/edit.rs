//! Which file a tool call edited: Claude Code's edit tools and the `tool_input` field
//! each names its file in. Wire knowledge, so it lives here, not in the engine: the
//! PostToolUse hook asks [`HookInput::edited_file`] and hands the engine only a path.

use crate::HookInput;

/// The tools that write files, and the input field naming the file.
const EDIT_TOOLS: &[(&str, &str)] = &[
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

/// The file a tool call edited, as the tool named it; `None` for a tool that edits none.
pub fn edited_file<'a>(
    tool_name: Option<&str>,
    tool_input: Option<&'a serde_json::Value>,
) -> Option<&'a str> {
    let (_, field) = EDIT_TOOLS
        .iter()
        .find(|(tool, _)| tool_name == Some(*tool))?;
    tool_input?.get(field)?.as_str()
}

impl HookInput {
    /// The file this PostToolUse event's tool edited, if it is an edit tool.
    pub fn edited_file(&self) -> Option<&str> {
        edited_file(self.tool_name.as_deref(), self.tool_input.as_ref())
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn only_edit_tools_name_a_file() {
        let input = json!({"file_path": "src/a.rs", "notebook_path": "n.ipynb", "command": "ls"});
        for (tool, file) in [
            ("Write", Some("src/a.rs")),
            ("Edit", Some("src/a.rs")),
            ("MultiEdit", Some("src/a.rs")),
            ("NotebookEdit", Some("n.ipynb")),
            ("Bash", None),
            ("Read", None),
        ] {
            assert_eq!(edited_file(Some(tool), Some(&input)), file, "{tool}");
        }
        assert_eq!(edited_file(None, Some(&input)), None);
        assert_eq!(edited_file(Some("Write"), None), None);
        assert_eq!(
            edited_file(Some("Write"), Some(&json!({"file_path": 3}))),
            None
        );
    }

    #[test]
    fn a_hook_input_names_the_file_its_edit_tool_wrote() {
        let input = HookInput::from_json(
            br#"{"tool_name": "NotebookEdit", "tool_input": {"notebook_path": "a.ipynb"}}"#,
        )
        .unwrap();
        assert_eq!(input.edited_file(), Some("a.ipynb"));
        let bash =
            HookInput::from_json(br#"{"tool_name": "Bash", "tool_input": {"file_path": "x"}}"#)
                .unwrap();
        assert_eq!(bash.edited_file(), None);
    }
}

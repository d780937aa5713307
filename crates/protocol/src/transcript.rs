//! One line of a Claude Code session transcript (JSONL).
//!
//! Claude Code 2.1.197 writes each assistant content block (text, tool_use, thinking) as
//! its own line; the lines of one message share `message.id`. Only the fields pagent reads
//! are modelled: everything else (attachments, queue operations, usage) is ignored.

use serde::Deserialize;

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct TranscriptLine {
    /// `user`, `assistant`, `attachment`, `queue-operation`, `last-prompt`, ...
    #[serde(rename = "type")]
    pub kind: String,
    pub message: Option<TranscriptMessage>,
    /// Set on lines Claude Code injects itself, such as Stop hook feedback.
    #[serde(rename = "isMeta")]
    pub is_meta: bool,
    #[serde(rename = "isSidechain")]
    pub is_sidechain: bool,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct TranscriptMessage {
    pub id: Option<String>,
    pub role: Option<String>,
    pub content: MessageContent,
}

/// A message's content: a plain string (user prompts) or a list of blocks.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(untagged)]
pub enum MessageContent {
    Text(String),
    Blocks(Vec<ContentBlock>),
}

impl Default for MessageContent {
    fn default() -> Self {
        MessageContent::Blocks(Vec::new())
    }
}

/// One content block. Only `text` blocks carry words the model said to the user.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct ContentBlock {
    #[serde(rename = "type")]
    pub kind: String,
    pub text: Option<String>,
}

impl TranscriptLine {
    pub fn from_json(line: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(line)
    }

    /// True for a line written by the main conversation's assistant (not a subagent).
    pub fn is_main_assistant(&self) -> bool {
        self.kind == "assistant" && !self.is_sidechain
    }

    /// True for a line written on the user's side of the main conversation: prompts,
    /// tool results and Claude Code's own injected feedback.
    pub fn is_main_user(&self) -> bool {
        self.kind == "user" && !self.is_sidechain
    }

    /// True for a line of the main conversation's assistant that calls a tool: the model
    /// turn it belongs to runs tools before the next Stop (Claude Code writes the line
    /// before the tool runs, and a tool call, denied or not, starts its count of a
    /// turn's continuations afresh).
    pub fn calls_a_tool(&self) -> bool {
        self.is_main_assistant()
            && self.message.as_ref().is_some_and(|m| match &m.content {
                MessageContent::Blocks(blocks) => blocks.iter().any(|b| b.kind == "tool_use"),
                MessageContent::Text(_) => false,
            })
    }

    /// [`TranscriptLine::calls_a_tool`] of a raw line, checked on the bytes first: few
    /// lines name a `"tool_use"` block (a tool result's `"tool_use_id"` does not).
    pub fn raw_calls_a_tool(line: &[u8]) -> bool {
        crate::bytes::contains(line, b"\"tool_use\"")
            && TranscriptLine::from_json(line).is_ok_and(|l| l.calls_a_tool())
    }

    /// The id of the assistant message this line belongs to.
    pub fn message_id(&self) -> Option<&str> {
        self.message.as_ref()?.id.as_deref()
    }

    /// The text this line adds to its message, if any (tool_use and thinking add none).
    pub fn text(&self) -> Option<String> {
        let message = self.message.as_ref()?;
        match &message.content {
            MessageContent::Text(text) => Some(text.clone()),
            MessageContent::Blocks(blocks) => {
                let texts: Vec<&str> = blocks
                    .iter()
                    .filter(|b| b.kind == "text")
                    .filter_map(|b| b.text.as_deref())
                    .collect();
                if texts.is_empty() {
                    None
                } else {
                    Some(texts.join("\n"))
                }
            }
        }
    }
}

/// The usage fields of one transcript line: Claude Code writes each assistant content
/// block as a line carrying its message's `id`, `model` and `usage` (the same usage on
/// every block of a message, as far as it was known when the block was written).
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct UsageLine {
    #[serde(rename = "type")]
    pub kind: String,
    /// `2026-11-22T13:14:16.819Z`.
    pub timestamp: Option<String>,
    pub message: Option<UsageMessage>,
}

#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct UsageMessage {
    pub id: Option<String>,
    pub model: Option<String>,
    pub usage: Option<serde_json::Value>,
}

/// Token counts as the Messages API names them; a field that is missing, negative, a
/// string or too large for `u64` counts as 0.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TokenCounts {
    pub input: u64,
    pub output: u64,
    pub cache_read: u64,
    pub cache_write: u64,
}

impl TokenCounts {
    /// Reads `{"input_tokens", "output_tokens", "cache_read_input_tokens",
    /// "cache_creation_input_tokens"}` (Claude Code's transcript and `result` record).
    pub fn from_anthropic(usage: &serde_json::Value) -> TokenCounts {
        let n = |key: &str| {
            usage
                .get(key)
                .and_then(serde_json::Value::as_u64)
                .unwrap_or(0)
        };
        TokenCounts {
            input: n("input_tokens"),
            output: n("output_tokens"),
            cache_read: n("cache_read_input_tokens"),
            cache_write: n("cache_creation_input_tokens"),
        }
    }
}

/// A `queue-operation` line: Claude Code queues what the user types while the model
/// works (`enqueue`, with the text as typed) and writes `dequeue` when it takes the next
/// one up (2.1.330 also `remove`, e.g. a plain message delivered inside the running turn).
/// Both pinned clients write these at once, so a hook can see a command typed during a
/// turn long before Claude Code runs it.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct QueueLine {
    #[serde(rename = "type")]
    pub kind: String,
    /// `enqueue`, `dequeue`, `remove`.
    pub operation: String,
    /// `2026-11-24T07:06:13.091Z`.
    pub timestamp: Option<String>,
    /// The queued text (on `enqueue`, and `remove` when 2.1.330 says which).
    pub content: Option<String>,
}

impl QueueLine {
    /// The queue operation on this raw line, if it is one: checked on the bytes first, as
    /// almost no line is.
    pub fn from_raw(line: &[u8]) -> Option<QueueLine> {
        if !crate::bytes::contains(line, b"\"queue-operation\"") {
            return None;
        }
        serde_json::from_slice::<QueueLine>(line)
            .ok()
            .filter(|q| q.kind == "queue-operation")
    }
}

/// A transcript line's own time (its top-level `timestamp`), whatever else it holds: a
/// time quoted inside a tool result or a nested object is not the line's.
pub fn line_timestamp(line: &[u8]) -> Option<String> {
    #[derive(Deserialize)]
    struct Stamped {
        timestamp: Option<String>,
    }
    serde_json::from_slice::<Stamped>(line).ok()?.timestamp
}

impl UsageLine {
    pub fn from_json(line: &[u8]) -> Result<Self, serde_json::Error> {
        serde_json::from_slice(line)
    }

    /// The message id, model and token counts of an assistant line that has a usage.
    pub fn assistant_usage(&self) -> Option<(Option<&str>, Option<&str>, TokenCounts)> {
        if self.kind != "assistant" {
            return None;
        }
        let message = self.message.as_ref()?;
        let usage = message.usage.as_ref()?;
        Some((
            message.id.as_deref(),
            message.model.as_deref(),
            TokenCounts::from_anthropic(usage),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_operations_as_both_clients_write_them() {
        let enqueue = br#"{"type":"queue-operation","operation":"enqueue","timestamp":"2026-11-24T07:06:13.091Z","sessionId":"s","content":"/pagent-status"}"#;
        let q = QueueLine::from_raw(enqueue).unwrap();
        assert_eq!(
            (q.operation.as_str(), q.content.as_deref()),
            ("enqueue", Some("/pagent-status"))
        );
        let dequeue = br#"{"type":"queue-operation","operation":"dequeue","timestamp":"2026-11-24T07:06:14.861Z","sessionId":"s"}"#;
        assert_eq!(QueueLine::from_raw(dequeue).unwrap().content, None);
        let remove = br#"{"type":"queue-operation","operation":"remove","content":"hi","reason":"absorbed_mid_turn"}"#;
        assert_eq!(QueueLine::from_raw(remove).unwrap().operation, "remove");
        // A user line quoting the words is not a queue operation.
        let quoted = br#"{"type":"user","message":{"content":"the \"queue-operation\" lines"}}"#;
        assert_eq!(QueueLine::from_raw(quoted), None);
        assert_eq!(QueueLine::from_raw(b"{not json"), None);
    }

    #[test]
    fn a_tool_call_is_an_assistant_line_of_the_main_conversation_with_a_tool_use_block() {
        let calls = br#"{"type":"assistant","isSidechain":false,"message":{"id":"m","content":[{"type":"tool_use","id":"toolu_1","name":"Bash","input":{"command":"ls"}}]}}"#;
        assert!(TranscriptLine::raw_calls_a_tool(calls));
        let text = br#"{"type":"assistant","message":{"content":[{"type":"text","text":"I will not call \"tool_use\""}]}}"#;
        assert!(!TranscriptLine::raw_calls_a_tool(text));
        let result = br#"{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"toolu_1","content":"{\"type\":\"tool_use\"}"}]}}"#;
        assert!(!TranscriptLine::raw_calls_a_tool(result));
        let subagent = br#"{"type":"assistant","isSidechain":true,"message":{"content":[{"type":"tool_use","name":"Read"}]}}"#;
        assert!(!TranscriptLine::raw_calls_a_tool(subagent));
        assert!(!TranscriptLine::raw_calls_a_tool(b"{\"tool_use\" broken"));
    }

    #[test]
    fn usage_lines_read_the_counts_and_tolerate_odd_values() {
        let line = br#"{"type":"assistant","timestamp":"2026-11-22T13:14:16.819Z","message":{"id":"m1","model":"claude-opus-5-5","usage":{"input_tokens":10,"cache_creation_input_tokens":3,"cache_read_input_tokens":2,"output_tokens":5}}}"#;
        let parsed = UsageLine::from_json(line).unwrap();
        assert_eq!(
            parsed.assistant_usage(),
            Some((
                Some("m1"),
                Some("claude-opus-5-5"),
                TokenCounts {
                    input: 10,
                    output: 5,
                    cache_read: 2,
                    cache_write: 3
                }
            ))
        );
        let odd = br#"{"type":"assistant","message":{"usage":{"input_tokens":-10,"output_tokens":"9","cache_read_input_tokens":1e300}}}"#;
        let parsed = UsageLine::from_json(odd).unwrap();
        assert_eq!(parsed.assistant_usage().unwrap().2, TokenCounts::default());
        let user = br#"{"type":"user","message":{"usage":{"input_tokens":10}}}"#;
        assert_eq!(UsageLine::from_json(user).unwrap().assistant_usage(), None);
    }

    const TRANSCRIPT: &str =
        include_str!("../../../tests/fixtures/claude-code-2.1.197/sample_transcript.jsonl");

    #[test]
    fn every_captured_line_parses() {
        let lines: Vec<TranscriptLine> = TRANSCRIPT
            .lines()
            .map(|l| TranscriptLine::from_json(l.as_bytes()).unwrap())
            .collect();
        let assistant_texts: Vec<String> = lines
            .iter()
            .filter(|l| l.is_main_assistant())
            .filter_map(TranscriptLine::text)
            .collect();
        assert_eq!(
            assistant_texts,
            [
                "I'll write the file.",
                "First pass done.",
                "Finished. <promise>DONE</promise>"
            ]
        );
        let meta = lines.iter().find(|l| l.is_meta).unwrap();
        assert_eq!(
            meta.text().unwrap(),
            "Stop hook feedback:\nplease continue: iteration 2"
        );
    }

    #[test]
    fn tool_use_lines_have_no_text() {
        let line = br#"{"type":"assistant","message":{"id":"m1","content":[{"type":"tool_use","name":"Write","input":{}}]}}"#;
        let line = TranscriptLine::from_json(line).unwrap();
        assert_eq!(line.message_id(), Some("m1"));
        assert_eq!(line.text(), None);
    }
}

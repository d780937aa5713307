//! The model's last message, read from the end of a transcript, only when the hook input
//! lacks `last_assistant_message` (clients before 2.1.47).
//!
//! Transcripts grow to gigabytes in long loops, so the file is read backwards in blocks
//! and the scan stops at the first line that settles the answer: it never reads the whole
//! file, and gives up after [`SCAN_BUDGET`] bytes. Only assistant lines of the main
//! conversation count. A promise that appears in a prompt, in Stop hook feedback or in a
//! tool result is on a `user` line and can never be mistaken for the model's words.
//!
//! Claude Code writes one line per content block, sharing `message.id`; the last message's
//! text is the text of its lines, in order. If a `user` line comes after the last
//! assistant line, the model has not answered since (or its answer was not flushed yet),
//! and the honest answer is "unknown".

use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;

use pagent_protocol::TranscriptLine;

const BLOCK: usize = 64 * 1024;
/// The most bytes read from the end before giving up.
pub const SCAN_BUDGET: u64 = 32 * 1024 * 1024;

pub fn read_last_assistant_text(path: &Path) -> io::Result<Option<String>> {
    let file = File::open(path)?;
    let mut lines = BackwardLines::new(file, SCAN_BUDGET)?;
    let mut message_id: Option<Option<String>> = None;
    let mut texts = Vec::new();
    while let Some(raw) = lines.next_line()? {
        if raw.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        // A line cut short by a crash or a concurrent write is not evidence of anything.
        let Ok(line) = TranscriptLine::from_json(&raw) else {
            continue;
        };
        if line.is_main_user() {
            break;
        }
        if !line.is_main_assistant() {
            continue;
        }
        let id = line.message_id().map(str::to_owned);
        match &message_id {
            None => message_id = Some(id),
            Some(current) if *current != id => break,
            Some(_) => {}
        }
        if let Some(text) = line.text() {
            texts.push(text);
        }
    }
    if message_id.is_none() {
        return Ok(None);
    }
    texts.reverse();
    Ok(Some(texts.join("\n")))
}

/// Yields a file's lines from last to first, reading backwards in blocks.
struct BackwardLines {
    file: File,
    /// Start of the part of the file not read yet.
    pos: u64,
    /// Bytes read but not yet returned: the unfinished line at the front.
    pending: Vec<u8>,
    budget: u64,
}

impl BackwardLines {
    fn new(mut file: File, budget: u64) -> io::Result<BackwardLines> {
        let pos = file.seek(SeekFrom::End(0))?;
        Ok(BackwardLines {
            file,
            pos,
            pending: Vec::new(),
            budget,
        })
    }

    fn next_line(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(newline) = self.pending.iter().rposition(|b| *b == b'\n') {
                let line = self.pending.split_off(newline + 1);
                self.pending.truncate(newline);
                return Ok(Some(line));
            }
            if self.pos == 0 || self.budget == 0 {
                // The first line of the file (or of the budget): only whole if we reached
                // the start.
                let rest = std::mem::take(&mut self.pending);
                return Ok((self.pos == 0 && !rest.is_empty()).then_some(rest));
            }
            let size = (self.pos.min(BLOCK as u64)).min(self.budget);
            self.pos -= size;
            self.budget -= size;
            let mut block = vec![0; usize::try_from(size).unwrap_or(BLOCK)];
            self.file.seek(SeekFrom::Start(self.pos))?;
            self.file.read_exact(&mut block)?;
            block.extend_from_slice(&self.pending);
            self.pending = block;
        }
    }
}

#[cfg(test)]
mod tests {
    use std::io::Write;

    use super::*;

    const FIXTURE: &str = "tests/fixtures/claude-code-2.1.197/sample_transcript.jsonl";

    fn write(lines: &[&str]) -> tempfile::NamedTempFile {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        for line in lines {
            writeln!(file, "{line}").unwrap();
        }
        file
    }

    fn text(id: &str, text: &str) -> String {
        format!(
            r#"{{"type":"assistant","message":{{"id":"{id}","role":"assistant","content":[{{"type":"text","text":{}}}]}}}}"#,
            serde_json::to_string(text).unwrap()
        )
    }

    #[test]
    fn reads_the_captured_transcript() {
        let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(FIXTURE);
        assert_eq!(
            read_last_assistant_text(&path).unwrap().as_deref(),
            Some("Finished. <promise>DONE</promise>")
        );
    }

    #[test]
    fn joins_the_text_blocks_of_the_last_message_only() {
        let tool = r#"{"type":"assistant","message":{"id":"m2","content":[{"type":"tool_use","name":"Write","input":{}}]}}"#;
        let file = write(&[
            &text("m1", "old <promise>DONE</promise>"),
            &text("m2", "part one"),
            tool,
            &text("m2", "part two"),
            r#"{"type":"attachment"}"#,
        ]);
        assert_eq!(
            read_last_assistant_text(file.path()).unwrap().as_deref(),
            Some("part one\npart two")
        );
    }

    #[test]
    fn a_promise_in_a_prompt_or_tool_result_is_not_the_last_message() {
        let feedback = r#"{"type":"user","isMeta":true,"message":{"role":"user","content":"Stop hook feedback:\nsay <promise>DONE</promise>"}}"#;
        let result = r#"{"type":"user","message":{"role":"user","content":[{"type":"tool_result","content":"<promise>DONE</promise>"}]}}"#;
        for user in [feedback, result] {
            let file = write(&[&text("m1", "working"), user]);
            assert_eq!(read_last_assistant_text(file.path()).unwrap(), None);
        }
    }

    #[test]
    fn skips_a_truncated_last_line_and_sidechains() {
        let side = r#"{"type":"assistant","isSidechain":true,"message":{"id":"s","content":[{"type":"text","text":"<promise>DONE</promise>"}]}}"#;
        let mut file = write(&[&text("m1", "main answer"), side]);
        write!(
            file,
            r#"{{"type":"assistant","message":{{"id":"m9","content":[{{"type":"te"#
        )
        .unwrap();
        assert_eq!(
            read_last_assistant_text(file.path()).unwrap().as_deref(),
            Some("main answer")
        );
    }

    #[test]
    fn finds_the_answer_across_block_boundaries_and_long_lines() {
        let long = "x".repeat(3 * BLOCK);
        let file = write(&[
            &text("m1", &long),
            &text("m2", &format!("{long} end")),
            r#"{"type":"last-prompt"}"#,
        ]);
        let found = read_last_assistant_text(file.path()).unwrap().unwrap();
        assert!(found.ends_with(" end"));
        assert_eq!(found.len(), long.len() + 4);
    }

    #[test]
    fn empty_and_missing_files() {
        let file = write(&[]);
        assert_eq!(read_last_assistant_text(file.path()).unwrap(), None);
        assert!(read_last_assistant_text(Path::new("/nonexistent/t.jsonl")).is_err());
    }
}

//! The model's last message, read from the end of a transcript, only when the hook input
//! lacks `last_assistant_message` (clients before 2.1.47); and whether a command reached
//! a hook because the user typed it while the model worked ([`typed_while_busy`]).
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

//!
//! The backward line reader is [`backward`]; its tests beside the reader's are in
//! `tests.rs`.

pub(in crate::world) mod backward;
#[cfg(test)]
mod tests;

use std::io;
use std::path::Path;
use std::time::{Duration, Instant};

use pagent_protocol::TranscriptLine;

use backward::BackwardLines;

/// The most bytes read from the end before giving up.
pub const SCAN_BUDGET: u64 = 32 * 1024 * 1024;

/// The last assistant message of the transcript at `path`. Claude Code names the file;
/// it is opened as a regular file only (never a FIFO or a device, which could block or
/// never end), without blocking.
pub fn read_last_assistant_text(path: &Path) -> io::Result<Option<String>> {
    let file = pagent_door::files::open_outside(path).map_err(io::Error::other)?;
    let mut lines = BackwardLines::new(file, SCAN_BUDGET)?;
    last_assistant_text(std::iter::from_fn(|| lines.next_line().transpose()))
}

/// The last assistant message's text, from the transcript's lines given last first.
fn last_assistant_text(
    lines: impl Iterator<Item = io::Result<Vec<u8>>>,
) -> io::Result<Option<String>> {
    let mut message_id: Option<Option<String>> = None;
    let mut texts = Vec::new();
    for raw in lines {
        let raw = raw?;
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

/// How far back [`typed_while_busy`] reads.
const QUEUE_SCAN: u64 = 4 * 1024 * 1024;

/// How long [`sent_at_once`] waits for Claude Code to record how the turn was cut: Esc's
/// "[Request interrupted by user" line came 0.1 to 0.2 s after the queued command was
/// taken up in the runs of `tests/e2e` (2.1.197 and 2.1.332), and may come later on a
/// loaded machine.
pub const SETTLE: Duration = Duration::from_secs(2);
const SETTLE_POLL: Duration = Duration::from_millis(50);

/// Whether `prompt` reached a hook because the user sent it at once while the model
/// worked (Claude Code 2.1.330's ctrl+x ctrl+s, which cuts the turn), and not because Esc
/// ended the turn it was queued behind (both clients then send the queued command right
/// after the interrupt). The two look alike when the hook starts: the command was queued
/// and taken up. They differ in what Claude Code writes next, which may come after the
/// hook started: Esc writes its "[Request interrupted by user" line (a prompt of the
/// user's side, after which nothing counts as queued); a send-now with a tool running
/// writes that the tool "was moved to the background". So this looks again for up to
/// `settle`; a send-now while a request is in flight writes nothing before the hooks,
/// and is known only when `settle` has passed.
pub fn sent_at_once(path: &Path, prompt: &str, settle: Duration) -> io::Result<bool> {
    let deadline = Instant::now() + settle;
    loop {
        let file = pagent_door::files::open_outside(path).map_err(io::Error::other)?;
        let mut lines = BackwardLines::new(file, QUEUE_SCAN)?;
        let (queued, moved) = queue_since_last_prompt(
            std::iter::from_fn(|| lines.next_line().ok().flatten()),
            prompt,
        );
        if !queued {
            return Ok(false);
        }
        if moved || Instant::now() >= deadline {
            return Ok(true);
        }
        std::thread::sleep(SETTLE_POLL);
    }
}

/// Whether `prompt` was typed while the model was working: Claude Code queued it (an
/// `enqueue` line with that text) after the last prompt the conversation took up. A
/// prompt typed at an idle prompt is never queued in the terminal UI. Used for a command
/// that Claude Code 2.1.330 lets the user send at once (ctrl+x ctrl+s), cutting the turn.
pub fn typed_while_busy(path: &Path, prompt: &str) -> io::Result<bool> {
    let file = pagent_door::files::open_outside(path).map_err(io::Error::other)?;
    let mut lines = BackwardLines::new(file, QUEUE_SCAN)?;
    Ok(queued_since_last_prompt(
        std::iter::from_fn(|| lines.next_line().ok().flatten()),
        prompt,
    ))
}

/// [`typed_while_busy`] over the transcript's lines given last first.
fn queued_since_last_prompt(lines: impl Iterator<Item = Vec<u8>>, prompt: &str) -> bool {
    queue_since_last_prompt(lines, prompt).0
}

/// Whether `prompt` was enqueued since the last prompt the conversation took up (Esc's
/// interrupt line is one), and whether a tool was moved to the background after it (a
/// send-now cut the turn), over the transcript's lines given last first.
fn queue_since_last_prompt(lines: impl Iterator<Item = Vec<u8>>, prompt: &str) -> (bool, bool) {
    let prompt = prompt.trim();
    let mut moved = false;
    for raw in lines {
        if let Some(queued) = pagent_protocol::QueueLine::from_raw(&raw) {
            if queued.operation == "enqueue"
                && queued.content.as_deref().map(str::trim) == Some(prompt)
            {
                return (true, moved);
            }
            continue;
        }
        let Ok(line) = TranscriptLine::from_json(&raw) else {
            continue;
        };
        if line.is_main_user() && !line.is_meta && line.text().is_some() {
            return (false, false);
        }
        moved |= line.is_main_user()
            && pagent_protocol::bytes::contains(&raw, b"was moved to the background");
    }
    (false, false)
}

/// For the fuzz target: reading `data` backwards in (small) blocks must give the same
/// lines, and the same answer, as splitting it forwards; and nothing may panic.
pub fn fuzz_check(data: &[u8]) {
    let Ok(mut reader) = BackwardLines::with_block(io::Cursor::new(data), SCAN_BUDGET, 7) else {
        return;
    };
    let backwards: Vec<Vec<u8>> = std::iter::from_fn(|| reader.next_line().ok().flatten())
        .filter(|l| !l.is_empty())
        .collect();
    let forwards: Vec<Vec<u8>> = data
        .split(|b| *b == b'\n')
        .rev()
        .filter(|l| !l.is_empty())
        .map(<[u8]>::to_vec)
        .collect();
    assert_eq!(
        backwards, forwards,
        "backward reading disagrees with forward splitting"
    );
    let expected = last_assistant_text(forwards.into_iter().map(Ok))
        .ok()
        .flatten();
    let Ok(mut reader) = BackwardLines::new(io::Cursor::new(data), SCAN_BUDGET) else {
        return;
    };
    let read = last_assistant_text(std::iter::from_fn(|| reader.next_line().transpose()))
        .ok()
        .flatten();
    assert_eq!(read, expected);
}

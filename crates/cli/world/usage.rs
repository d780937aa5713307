//! What the model has used since the loop started, read from the session transcript for
//! the Stop hook: the `usage` of each assistant message.
//!
//! A transcript grows to gigabytes in a long loop and a Stop comes every few seconds, so
//! it is never read whole: the state keeps a cursor (the byte offset read so far) and
//! each Stop reads only the lines written since, forward, at most [`READ_BUDGET`] bytes
//! (a later Stop reads on from where this one stopped). A loop set up by its slash
//! command starts with a cursor at the transcript's end ([`cursor_at_end`]: the
//! UserPromptExpansion hook knows the transcript), so its first Stop reads only what the
//! loop added. A loop set up without one (a terminal, a `!` line without the hook), or a
//! new transcript, has no cursor: its first Stop looks backwards from the end for the
//! last line stamped before the loop's start, at most [`FIRST_READ`] bytes back, and
//! counts the assistant lines stamped at or after it. Either way a first Stop costs what
//! the loop wrote, not the session's history before it.
//!
//! The same read collects what the user typed while the model worked and Claude Code
//! still holds in its queue (`queue-operation` lines): the Stop hook answers pagent's own
//! status and cancel among them at once, instead of after the whole loop (see
//! `hooks/stop.rs`). Each Stop reads only new lines, so each such line is seen once.
//! It also tells whether the model called a tool since the last Stop (an assistant
//! `tool_use` line), which Claude Code's cap on a turn's continuations counts by
//! (`pagent_engine::block_cap`): the hook reads these lines anyway, so knowing costs a
//! byte search per line, where a PostToolUse hook on every tool would cost a process
//! and a state write per tool call (and would not fire for a denied tool).
//!
//! Claude Code writes one line per content block, each repeating its message's usage, so
//! a message counts once: by id, and a later line of the same message adds only what its
//! counts grew by. The lines are Claude Code's own (a tool result holding text that looks
//! like an assistant line is a string inside a `user` line, never a line of its own), and
//! every figure saturates, so a huge forged count could only end the loop early.

use crate::store::user::UserDir;
use std::collections::HashMap;
use std::fs::File;
use std::io::{self, Read, Seek, SeekFrom};
use std::path::Path;
use std::time::{Duration, Instant};

use pagent_engine::usage::TranscriptCursor;
use pagent_engine::{Driver, Report, State, Timestamp, Tokens};
use pagent_protocol::{TokenCounts, UsageLine};

/// The most bytes one Stop reads.
pub const READ_BUDGET: u64 = 64 * 1024 * 1024;
/// How far back the first Stop of a transcript looks for the loop's start (a transcript
/// that was replaced or shrank, or whose lines carry no times, is read from there).
pub const FIRST_READ: u64 = 32 * 1024 * 1024;
/// A line longer than this is no assistant message worth reading (a huge tool result):
/// it is skipped without being kept in memory.
pub const LINE_CAP: usize = 4 * 1024 * 1024;
const BLOCK: usize = 64 * 1024;

/// `state` with the usage the session's transcript recorded since the last Stop added, for
/// a Stop that will act on the loop (its own, hook-driven, not paused, this session's or
/// unclaimed). A transcript that cannot be read leaves the usage as it was: the figures
/// are for budgets and status, never a reason to fail the hook.
/// Also returns the prompts typed since the last Stop that Claude Code still holds in its
/// queue, oldest first, and whether a tool ran; `last_message` is the hook input's
/// `last_assistant_message`, which the transcript is waited for ([`read_caught_up`]).
pub fn meter_stop(
    state: &State,
    session: Option<&str>,
    transcript: Option<&Path>,
    last_message: Option<&str>,
    user_dir: &UserDir,
) -> Metered {
    let unread = || Metered {
        state: state.clone(),
        queued: Vec::new(),
        tool_called: None,
    };
    let acts = state.is_active()
        && state.driver == Driver::Hook
        && state.paused.is_none()
        && session.is_some()
        && state
            .session_id
            .as_deref()
            .is_none_or(|owner| Some(owner) == session);
    let Some(path) = transcript.filter(|_| acts) else {
        return unread();
    };
    let cursor = state.usage.transcript.as_ref();
    let read = match read_caught_up(path, cursor, state.started_at, last_message, CATCH_UP) {
        Ok(read) => read,
        // A transcript still not there after the wait (a session that keeps none): later
        // Stops read it from its start if it comes, and do not wait for it again.
        Err(_) if cursor.is_none() && pagent_door::files::surely_absent(path) => {
            let mut metered = unread();
            metered.state.usage.transcript = Some(TranscriptCursor {
                path: path.display().to_string(),
                offset: 0,
                skipping: false,
                message_id: None,
                message_tokens: Default::default(),
            });
            return metered;
        }
        Err(_) => return unread(),
    };
    let (reports, cursor) = (read.reports, read.cursor);
    let mut metered = state.clone();
    if !reports.is_empty() {
        let prices = crate::store::config::read_prices(user_dir);
        for report in &reports {
            metered.usage.add(report, &prices);
        }
    }
    metered.usage.transcript = Some(cursor);
    Metered {
        state: metered,
        queued: read.queued,
        tool_called: read.tool_called,
    }
}

/// The longest a Stop waits for the transcript to hold the message it stops on.
pub const CATCH_UP: Duration = Duration::from_secs(1);
const CATCH_UP_POLL: Duration = Duration::from_millis(20);

/// [`read_transcript_usage`], waiting when it found no tool call until the transcript
/// holds the message the Stop is for (`last_message`, the hook input's). Claude Code
/// writes the transcript behind its own back: under load, 2.1.330 ran the Stop hook before
/// the lines of the turn it ended were written (that turn's tool call seen only at the
/// next Stop, one Stop late for the count of continuations; `tests/e2e/scenarios/cap.rs`
/// caught it). It writes lines in order, so once the last message is there, so is the
/// turn's tool call, if any. The file is read again (from the same cursor) only when it
/// grew, for at most `wait`; a read that never catches up does not know whether a tool
/// ran. A read that found a tool call, or no message to look for (clients before 2.1.47),
/// needs no wait.
pub fn read_caught_up(
    path: &Path,
    cursor: Option<&TranscriptCursor>,
    since: Timestamp,
    last_message: Option<&str>,
    wait: Duration,
) -> io::Result<TranscriptRead> {
    let Some(wanted) = last_message.map(str::trim).filter(|m| !m.is_empty()) else {
        return read_transcript_usage(path, cursor, since);
    };
    let deadline = Instant::now() + wait;
    // Only a loop's first read waits for the file to be created: once a Stop waited in
    // vain ([`meter_stop`] then keeps a cursor at its start), the next ones do not.
    let mut file = if cursor.is_none() {
        open_once_created(path, deadline)?
    } else {
        open(path)?
    };
    let mut len = file.seek(SeekFrom::End(0))?;
    let mut read = read_usage_from(file, &path.display().to_string(), cursor, since)?;
    loop {
        let caught_up = read
            .last_text
            .as_deref()
            .is_some_and(|text| wanted.ends_with(text.trim()));
        if read.tool_called != Some(false) || caught_up {
            return Ok(read);
        }
        if Instant::now() >= deadline {
            read.tool_called = None;
            return Ok(read);
        }
        std::thread::sleep(CATCH_UP_POLL);
        let now = file_len(path)?;
        if now != len {
            len = now;
            read = read_transcript_usage(path, cursor, since)?;
        }
    }
}

/// The transcript at `path`, opened once it exists: Claude Code creates the file
/// at its first write, which 2.1.197 made after the first Stop hook of `claude -p` had
/// started (that Stop, and the next, read nothing: the count of continuations came one
/// Stop late; `tests/e2e/scenarios/cap.rs` caught it on CI). Waited for until `deadline`.
/// A file that never comes (`claude --no-session-persistence` keeps none) costs one wait
/// per loop, not one per Stop ([`meter_stop`]).
fn open_once_created(path: &Path, deadline: Instant) -> io::Result<File> {
    loop {
        match open(path) {
            Err(_) if pagent_door::files::surely_absent(path) && Instant::now() < deadline => {
                std::thread::sleep(CATCH_UP_POLL);
            }
            opened => return opened,
        }
    }
}

fn open(path: &Path) -> io::Result<File> {
    pagent_door::files::open_outside(path).map_err(io::Error::other)
}

fn file_len(path: &Path) -> io::Result<u64> {
    open(path)?.seek(SeekFrom::End(0))
}

/// What [`meter_stop`] read since the last Stop.
#[derive(Debug)]
pub struct Metered {
    /// The state with the usage added.
    pub state: State,
    /// Prompts typed since the last Stop that Claude Code still holds in its queue.
    pub queued: Vec<String>,
    /// Whether the model called a tool since the last Stop; `None` when not all of what
    /// was written since could be read (no transcript, a line too long to keep, more than
    /// one Stop's budget).
    pub tool_called: Option<bool>,
}

/// What one read of a transcript found.
#[derive(Debug)]
pub struct TranscriptRead {
    pub reports: Vec<Report>,
    pub cursor: TranscriptCursor,
    /// Prompts enqueued in the lines read and not taken up since, oldest first.
    pub queued: Vec<String>,
    /// An assistant line of the lines read calls a tool (`Some(true)`), none does and
    /// every line was read (`Some(false)`), or none that was read does (`None`).
    pub tool_called: Option<bool>,
    /// The text of the last assistant line of the main conversation read that has text.
    pub last_text: Option<String>,
}

/// The usage reports written to `path` since `cursor` (or, without a cursor for this
/// path, since `since`), and the cursor to keep.
pub fn read_transcript_usage(
    path: &Path,
    cursor: Option<&TranscriptCursor>,
    since: Timestamp,
) -> io::Result<TranscriptRead> {
    read_usage_from(open(path)?, &path.display().to_string(), cursor, since)
}

fn read_usage_from<R: Read + Seek>(
    mut file: R,
    shown: &str,
    cursor: Option<&TranscriptCursor>,
    since: Timestamp,
) -> io::Result<TranscriptRead> {
    let len = file.seek(SeekFrom::End(0))?;
    // A cursor for another file, or past the end of this one (a new transcript under the
    // same name), starts over from the loop's start.
    let cursor = cursor.filter(|c| c.path == shown && c.offset <= len);
    let mut counter = Counter {
        since: cursor.is_none().then_some(since),
        counted: HashMap::new(),
        last: cursor.and_then(|c| c.message_id.clone().map(|id| (id, c.message_tokens))),
        reports: Vec::new(),
        queued: Vec::new(),
        tool_called: false,
        unsure: false,
        last_text_line: Vec::new(),
    };
    if let Some((id, tokens)) = &counter.last {
        counter.counted.insert(id.clone(), *tokens);
    }
    let (start, mut skipping) = match cursor {
        Some(c) => (c.offset, c.skipping),
        None => loop_start(&mut file, len, since)?,
    };
    file.seek(SeekFrom::Start(start))?;
    let mut pos = start;
    let mut consumed = start;
    let mut line: Vec<u8> = Vec::new();
    let end = len.min(start.saturating_add(READ_BUDGET));
    // A later Stop reads what one turn added, often a few KiB: no larger block than that.
    let mut block =
        vec![0; usize::try_from(end.saturating_sub(start).min(BLOCK as u64)).unwrap_or(BLOCK)];
    while pos < end {
        let want = usize::try_from((end - pos).min(BLOCK as u64)).unwrap_or(BLOCK);
        let got = file.read(&mut block[..want])?;
        if got == 0 {
            break;
        }
        let mut rest = &block[..got];
        while let Some(newline) = pagent_protocol::bytes::find_byte(b'\n', rest) {
            if !skipping {
                line.extend_from_slice(&rest[..newline]);
                counter.line(&line);
            }
            line.clear();
            skipping = false;
            pos += newline as u64 + 1;
            consumed = pos;
            rest = &rest[newline + 1..];
        }
        pos += rest.len() as u64;
        if !skipping {
            line.extend_from_slice(rest);
            if line.len() > LINE_CAP {
                line = Vec::new();
                skipping = true;
                // A line too long to keep may be a tool call (a Write of a big file).
                counter.unsure = true;
            }
        }
    }
    if end < len || skipping {
        counter.unsure = true;
    }
    // An unfinished last line (still being written) is read next time, whole; an
    // overlong one is remembered as being skipped.
    let offset = if skipping { pos } else { consumed };
    let last = counter.last.clone();
    let last_text = counter.last_text();
    Ok(TranscriptRead {
        reports: counter.reports,
        cursor: TranscriptCursor {
            path: shown.to_owned(),
            offset,
            skipping,
            message_id: last.as_ref().map(|(id, _)| id.clone()),
            message_tokens: last.map(|(_, t)| t).unwrap_or_default(),
        },
        queued: counter.queued,
        tool_called: if counter.tool_called {
            Some(true)
        } else {
            (!counter.unsure).then_some(false)
        },
        last_text,
    })
}

/// Where a loop's lines begin in a transcript read for the first time: just after the
/// last whole line stamped before `since`, found backwards from the end, so only what
/// the loop added is read; else [`FIRST_READ`] bytes back (inside a line: `true`, its
/// start is not ours to read).
fn loop_start<R: Read + Seek>(file: R, len: u64, since: Timestamp) -> io::Result<(u64, bool)> {
    let mut lines = crate::world::transcript::backward::BackwardLines::new(file, FIRST_READ)?;
    // The first piece is what follows the last newline: empty, or a line being written.
    // `after` is always just past a newline (or the file's start).
    let mut after = match lines.next_line()? {
        Some(tail) => len - tail.len() as u64,
        None if len == 0 => return Ok((0, false)),
        None => 0,
    };
    while after > 0 {
        let Some(line) = lines.next_line()? else {
            break;
        };
        if stamped_before(&line, since) {
            return Ok((after, false));
        }
        after = after.saturating_sub(line.len() as u64 + 1);
    }
    let start = len.saturating_sub(FIRST_READ);
    Ok((start, start > 0))
}

/// Whether a transcript line carries a time before `since` (its own, the top-level one).
fn stamped_before(raw: &[u8], since: Timestamp) -> bool {
    contains(raw, b"\"timestamp\"")
        && pagent_protocol::line_timestamp(raw)
            .as_deref()
            .and_then(stamp)
            .is_some_and(|t| t < since)
}

/// `2026-11-22T13:14:16.819Z` to the second.
fn stamp(text: &str) -> Option<Timestamp> {
    Timestamp::parse(&format!("{}Z", text.get(..19)?))
}

/// A cursor at the transcript's end as it is now, for a loop set up in its session: its
/// first Stop reads only the lines written after. A last line not yet whole is skipped
/// (it was being written before the loop began). `None` when it cannot be read.
pub fn cursor_at_end(path: &Path) -> Option<TranscriptCursor> {
    let mut file = pagent_door::files::open_outside(path).ok()?;
    let len = file.seek(SeekFrom::End(0)).ok()?;
    let mut last = [0u8];
    let whole = len == 0
        || (file.seek(SeekFrom::Start(len - 1)).is_ok()
            && file.read_exact(&mut last).is_ok()
            && last[0] == b'\n');
    Some(TranscriptCursor {
        path: path.display().to_string(),
        offset: len,
        skipping: !whole,
        ..TranscriptCursor::default()
    })
}

/// For the fuzz target: any bytes read without panicking, and reading them in two pieces
/// (a Stop in between) never counts fewer tokens than reading them at once. It may count
/// more: the cursor remembers only the last message, so a message whose lines come back
/// after another's is counted again, on the safe side for a budget.
pub fn fuzz_check(data: &[u8]) {
    let total = |reports: &[Report]| -> u64 {
        reports
            .iter()
            .fold(0u64, |sum, r| sum.saturating_add(r.tokens.total()))
    };
    let read = |bytes: &[u8], cursor: Option<&TranscriptCursor>| {
        read_usage_from(io::Cursor::new(bytes), "fuzz", cursor, Timestamp(0))
    };
    let Ok(whole) = read(data, None) else {
        return;
    };
    let cut = data.len() / 2;
    let Ok(first) = read(&data[..cut], None) else {
        return;
    };
    let Ok(second) = read(data, Some(&first.cursor)) else {
        return;
    };
    assert!(
        total(&first.reports).saturating_add(total(&second.reports)) >= total(&whole.reports),
        "reading in two pieces lost tokens"
    );
}

/// Counts each message once, by id.
struct Counter {
    /// Only lines stamped at or after this count (the first read of a transcript).
    since: Option<Timestamp>,
    counted: HashMap<String, Tokens>,
    last: Option<(String, Tokens)>,
    reports: Vec<Report>,
    /// Enqueued and not taken up yet, oldest first.
    queued: Vec<String>,
    /// A line read calls a tool.
    tool_called: bool,
    /// Not every line written since the cursor was read whole.
    unsure: bool,
    /// The last assistant line read that may have text, as it was written.
    last_text_line: Vec<u8>,
}

impl Counter {
    /// The text of the last assistant line of the main conversation read that has text.
    fn last_text(&self) -> Option<String> {
        let line = pagent_protocol::TranscriptLine::from_json(&self.last_text_line).ok()?;
        line.is_main_assistant().then(|| line.text()).flatten()
    }
}

impl Counter {
    fn line(&mut self, raw: &[u8]) {
        if contains(raw, b"\"queue-operation\"")
            && let Some(queue) = pagent_protocol::QueueLine::from_raw(raw)
        {
            self.queue(queue);
            return;
        }
        if !contains(raw, b"assistant") {
            return;
        }
        if !self.tool_called && pagent_protocol::TranscriptLine::raw_calls_a_tool(raw) {
            self.tool_called = true;
        }
        if contains(raw, b"\"text\"") && !contains(raw, b"\"isSidechain\":true") {
            // Only the last one is read (at the end): a transcript may hold many.
            self.last_text_line.clear();
            self.last_text_line.extend_from_slice(raw);
        }
        // Most assistant lines have a usage; the others are skipped unparsed.
        if !contains(raw, b"\"usage\"") {
            return;
        }
        let Ok(line) = UsageLine::from_json(raw) else {
            return;
        };
        let Some((id, model, counts)) = line.assistant_usage() else {
            return;
        };
        if let Some(since) = self.since
            && line
                .timestamp
                .as_deref()
                .and_then(stamp)
                .is_none_or(|t| t < since)
        {
            return;
        }
        let tokens = tokens_of(counts);
        let added = match id {
            Some(id) => {
                let before = self.counted.get(id).copied().unwrap_or_default();
                let now = tokens.max(&before);
                self.counted.insert(id.to_owned(), now);
                self.last = Some((id.to_owned(), now));
                tokens.growth_over(&before)
            }
            None => tokens,
        };
        if added.total() > 0 {
            self.reports.push(Report {
                model: model.map(str::to_owned),
                tokens: added,
                cost_microusd: None,
            });
        }
    }
}

impl Counter {
    /// Follows Claude Code's queue: `enqueue` adds at the end, `dequeue` takes the oldest,
    /// `remove` takes the one named (else the oldest). A line from before the loop began
    /// (on a first read) is not the loop's business.
    fn queue(&mut self, line: pagent_protocol::QueueLine) {
        if let Some(since) = self.since
            && line
                .timestamp
                .as_deref()
                .and_then(stamp)
                .is_none_or(|t| t < since)
        {
            return;
        }
        match (line.operation.as_str(), line.content) {
            ("enqueue", Some(text)) => self.queued.push(text),
            ("remove", Some(text)) => {
                if let Some(at) = self.queued.iter().position(|q| *q == text) {
                    self.queued.remove(at);
                }
            }
            ("dequeue" | "remove", _) if !self.queued.is_empty() => {
                self.queued.remove(0);
            }
            _ => {}
        }
    }
}

/// `state` with an agent run's usage records added, each priced from the user's prices
/// when the agent gave no cost of its own (`model` names the model a record does not).
pub fn add_records(
    state: &State,
    records: &[pagent_protocol::stream::UsageRecord],
    model: Option<&str>,
    user_dir: &UserDir,
) -> State {
    let mut metered = state.clone();
    if records.is_empty() {
        return metered;
    }
    let prices = crate::store::config::read_prices(user_dir);
    for record in records {
        let report = Report {
            model: record.model.clone().or_else(|| model.map(str::to_owned)),
            tokens: tokens_of(record.tokens),
            cost_microusd: record.cost_usd.and_then(pagent_engine::usage::per_million),
        };
        metered.usage.add(&report, &prices);
    }
    metered
}

pub fn tokens_of(counts: TokenCounts) -> Tokens {
    Tokens {
        input: counts.input,
        output: counts.output,
        cache_read: counts.cache_read,
        cache_write: counts.cache_write,
    }
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    pagent_protocol::bytes::contains(haystack, needle)
}

#[cfg(test)]
mod tests;

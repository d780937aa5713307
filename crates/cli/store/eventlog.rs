//! The event log, `.claude/pagent/events.jsonl`: one JSON line per decision.
//!
//! Lines are appended with `O_APPEND` in a single write each, so concurrent hooks never
//! interleave within a line. A failure to log never changes a decision: the log is for
//! people, the state file is the truth. Only the user's own loops are logged: nothing is
//! written into a project for a state pagent ignores. The log is read only up to
//! [`READ_CAP`] from its end.
//!
//! It never grows without bound: past [`ROTATE_AT`] bytes it is renamed to
//! `events.jsonl.1` (replacing the older half, which is dropped) and a new log begins,
//! its first line saying so. A rename loses no line: each append opens the log anew, so
//! a hook appending at that moment writes to one file or the other. Readers read the
//! older half too when the newer one is short.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use std::time::Duration;

use pagent_engine::failure::FailureClass;
use pagent_engine::{Action, LogEntry, State, Timestamp};
use serde::{Deserialize, Serialize};

use crate::store::project::{EVENTS_FILE, Project};
use pagent_door::files::DoorError;

/// The most bytes of the log read by `status` and `log` (its newest part).
const READ_CAP: u64 = 8 * 1024 * 1024;
/// The size past which the log is set aside as its older half: two halves at most.
pub const ROTATE_AT: u64 = 8 * 1024 * 1024;
/// Where the older half goes: its name, beside the log, and its path.
const OLDER: &str = "events.jsonl.1";
const OLDER_FILE: &str = ".claude/pagent/events.jsonl.1";

/// One line of the log. Built by [`Event::of`] from what the engine (or a command) says
/// happened, so every writer fills the same fields the same way.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub ts: Timestamp,
    pub action: Action,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stage: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub iteration: Option<u32>,
    #[serde(default)]
    pub detail: String,
    /// Time the hook took, in milliseconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ms: Option<u64>,
    /// The loop's tokens and cost (micro-dollars) so far, after this decision: what the
    /// dashboard's charts draw over time. Only on lines of decisions that wrote the state.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_microusd: Option<u64>,
    /// `pagent loop`: the class of the failed run this line is about (a retry, a usage
    /// limit's wait, a stop that ended the loop, the failure that stopped the runner).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<FailureClass>,
}

impl Event {
    /// The record of `entry` at `now`, in `session`.
    pub fn of(entry: LogEntry, now: Timestamp, session: Option<&str>) -> Event {
        Event {
            ts: now,
            action: entry.action,
            session_id: session.map(str::to_owned),
            stage: Some(entry.stage),
            iteration: Some(entry.iteration),
            detail: entry.detail,
            ms: None,
            tokens: None,
            cost_microusd: None,
            failure: None,
        }
    }

    /// The record of `action` at the loop's current stage and iteration.
    pub fn at(
        state: &State,
        action: Action,
        detail: String,
        now: Timestamp,
        session: Option<&str>,
    ) -> Event {
        let entry = LogEntry {
            action,
            stage: state.current().name.clone(),
            iteration: state.iterations[state.stage],
            detail,
        };
        Event::of(entry, now, session)
    }

    /// The same record, saying how long the step took.
    pub fn took(mut self, elapsed: Duration) -> Event {
        self.ms = Some(u64::try_from(elapsed.as_millis()).unwrap_or(u64::MAX));
        self
    }

    /// The same record, about a failed run of this class.
    pub fn failed(mut self, class: FailureClass) -> Event {
        self.failure = Some(class);
        self
    }

    /// The same record, with the loop's usage as `state` has it.
    pub fn with_usage(mut self, state: &State) -> Event {
        self.tokens = Some(state.usage.tokens.total());
        self.cost_microusd = Some(state.usage.cost_microusd);
        self
    }
}

pub fn append_event(project: &Project, event: &Event) -> anyhow::Result<()> {
    let mut line = serde_json::to_string(event)?;
    line.push('\n');
    let dir = project.dir();
    dir.append(Path::new(EVENTS_FILE), line.as_bytes())?;
    let size = dir.stat_rel(EVENTS_FILE.as_bytes()).map_or(0, |s| s.size);
    if size > ROTATE_AT {
        rotate(project, event.ts, size)?;
    }
    Ok(())
}

/// Sets the log aside as its older half (dropping the half before it) and begins a new
/// one whose first line says what was dropped.
fn rotate(project: &Project, now: Timestamp, size: u64) -> anyhow::Result<()> {
    let dir = project.dir();
    let dropped = dir.stat_rel(OLDER_FILE.as_bytes()).map_or(0, |s| s.size);
    dir.rename_in_place(Path::new(EVENTS_FILE), OLDER)?;
    let note = Event {
        ts: now,
        action: Action::Trimmed,
        failure: None,
        session_id: None,
        stage: None,
        iteration: None,
        detail: format!(
            "the event log passed {} MiB: its last {} MiB are now events.jsonl.1{}",
            ROTATE_AT >> 20,
            size >> 20,
            if dropped > 0 {
                format!(
                    ", and the {} MiB before them were dropped",
                    dropped.div_ceil(1 << 20)
                )
            } else {
                String::new()
            }
        ),
        ms: None,
        tokens: None,
        cost_microusd: None,
    };
    let mut line = serde_json::to_string(&note)?;
    line.push('\n');
    dir.append(Path::new(EVENTS_FILE), line.as_bytes())?;
    Ok(())
}

/// The bytes the event log takes, both halves.
pub fn size(project: &Project) -> u64 {
    let dir = project.dir();
    [EVENTS_FILE, OLDER_FILE]
        .iter()
        .filter_map(|p| dir.stat_rel(p.as_bytes()))
        .map(|s| s.size)
        .sum()
}

/// Every event that parses (of the log's newest [`READ_CAP`] bytes); unparsable lines are
/// skipped and counted.
pub fn read_events(project: &Project) -> anyhow::Result<(Vec<Event>, usize)> {
    read_recent_events(project, READ_CAP)
}

/// Every event that parses in the log's newest `cap` bytes (a line cut by the cap is
/// dropped); unparsable lines are skipped and counted.
pub fn read_recent_events(project: &Project, cap: u64) -> anyhow::Result<(Vec<Event>, usize)> {
    let newer = read_tail(project, Path::new(EVENTS_FILE), cap)?;
    let mut bytes = match cap.checked_sub(newer.len() as u64) {
        // The newer half is short (just rotated): the older half's tail comes first.
        Some(room) if room > 0 => read_tail(project, Path::new(OLDER_FILE), room)?,
        _ => Vec::new(),
    };
    bytes.extend_from_slice(&newer);
    let text = String::from_utf8_lossy(&bytes);
    let mut events = Vec::new();
    let mut bad = 0;
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        match serde_json::from_str(line) {
            Ok(event) => events.push(event),
            Err(_) => bad += 1,
        }
    }
    Ok((events, bad))
}

/// The last `cap` bytes of `rel`, from a line's start (a line cut by the cap is dropped);
/// nothing when there is no such file.
fn read_tail(project: &Project, rel: &Path, cap: u64) -> anyhow::Result<Vec<u8>> {
    let mut file = match project.dir().open_read(rel) {
        Ok(file) => file,
        Err(DoorError::Missing(_)) => return Ok(Vec::new()),
        Err(err) => return Err(err.into()),
    };
    let len = file.metadata()?.len();
    let start = len.saturating_sub(cap);
    file.seek(SeekFrom::Start(start))?;
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes)?;
    if start > 0 {
        // The first line was cut: drop it.
        let cut = bytes
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        bytes.drain(..cut);
    }
    Ok(bytes)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use super::*;

    fn event(detail: &str) -> Event {
        let entry = pagent_engine::LogEntry {
            action: Action::Block,
            stage: "ralph".into(),
            iteration: 1,
            detail: detail.into(),
        };
        Event::of(entry, Timestamp(1_800_000_000), Some("s"))
    }

    /// Issue 33: a night of hooks appends without end; the log becomes its older half past
    /// its size, the half before that is dropped, and the new log's first line says so.
    #[test]
    fn the_event_log_keeps_two_halves_and_says_what_it_dropped() {
        let dir = tempfile::tempdir().unwrap();
        let project = Project::at(dir.path()).unwrap();
        let big = "x".repeat(64 * 1024);
        // Three logs' worth: the log rotates twice, the second time dropping a half.
        let appends = 3 * (ROTATE_AT / (64 * 1024)) + 8;
        for _ in 0..appends {
            append_event(&project, &event(&big)).unwrap();
            assert!(
                size(&project) <= 2 * ROTATE_AT + 256 * 1024,
                "{}",
                size(&project)
            );
        }
        let newer = std::fs::read_to_string(dir.path().join(EVENTS_FILE)).unwrap();
        let first: Event = serde_json::from_str(newer.lines().next().unwrap()).unwrap();
        assert_eq!(first.action, Action::Trimmed);
        assert!(first.detail.contains("were dropped"), "{}", first.detail);
        // Readers see the newest events, across the two halves.
        let (events, bad) = read_recent_events(&project, 4 * ROTATE_AT).unwrap();
        assert_eq!(bad, 0);
        assert!(events.len() > 100, "{}", events.len());
        assert_eq!(events.last().unwrap().detail, big);
    }
}

//! The event log, `.claude/pagent/events.jsonl`: one JSON line per decision.
//!
//! Lines are appended with `O_APPEND` in a single write each, so concurrent hooks never
//! interleave within a line. A failure to log never changes a decision: the log is for
//! people, the state file is the truth. Only the user's own loops are logged: nothing is
//! written into a project for a state pagent ignores. The log is read only up to
//! [`READ_CAP`] from its end.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use std::time::Duration;

use pagent_engine::failure::FailureClass;
use pagent_engine::{Action, LogEntry, State, Timestamp};
use serde::{Deserialize, Serialize};

use crate::store::door::DoorError;
use crate::store::project::{EVENTS_FILE, Project};

/// The most bytes of the log read by `status` and `log` (its newest part).
const READ_CAP: u64 = 8 * 1024 * 1024;

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
    project
        .dir()
        .append(Path::new(EVENTS_FILE), line.as_bytes())?;
    Ok(())
}

/// Every event that parses (of the log's newest [`READ_CAP`] bytes); unparsable lines are
/// skipped and counted.
pub fn read_events(project: &Project) -> anyhow::Result<(Vec<Event>, usize)> {
    read_recent_events(project, READ_CAP)
}

/// Every event that parses in the log's newest `cap` bytes (a line cut by the cap is
/// dropped); unparsable lines are skipped and counted.
pub fn read_recent_events(project: &Project, cap: u64) -> anyhow::Result<(Vec<Event>, usize)> {
    let mut file = match project.dir().open_read(Path::new(EVENTS_FILE)) {
        Ok(file) => file,
        Err(DoorError::Missing(_)) => return Ok((Vec::new(), 0)),
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

//! The event log, `.claude/pagent/events.jsonl`: one JSON line per decision.
//!
//! Lines are appended with `O_APPEND` in a single write each, so concurrent hooks never
//! interleave within a line. A failure to log never changes a decision: the log is for
//! people, the state file is the truth.

use std::fs::{self, OpenOptions};
use std::io::Write;

use serde::{Deserialize, Serialize};

use crate::project::Project;

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Event {
    pub ts: String,
    /// What happened: `run`, `ralph`, `block`, `advance`, `complete`, `gave_up`,
    /// `other_session`, `unsealed`, `cancel`, `error`.
    pub action: String,
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
}

pub fn append_event(project: &Project, event: &Event) -> anyhow::Result<()> {
    fs::create_dir_all(project.pagent_dir())?;
    let mut line = serde_json::to_string(event)?;
    line.push('\n');
    let mut file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(project.events_path())?;
    file.write_all(line.as_bytes())?;
    Ok(())
}

/// Every event that parses; unparsable lines are skipped and counted.
pub fn read_events(project: &Project) -> anyhow::Result<(Vec<Event>, usize)> {
    let text = match fs::read_to_string(project.events_path()) {
        Ok(text) => text,
        Err(err) if err.kind() == std::io::ErrorKind::NotFound => return Ok((Vec::new(), 0)),
        Err(err) => return Err(err.into()),
    };
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

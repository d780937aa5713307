//! `pagent loop`'s agent output, kept verbatim per iteration in `.claude/pagent/runs/`
//! (`<run id>-<stage>-<iteration>[-retryN].log`, beside each run's prompt), and read back
//! here for the dashboard's live view: only the newest log of the loop's own run, only its
//! tail, through the door.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use pagent_engine::State;

use crate::store::project::{Project, RUNS_DIR};

/// The prefix of every file a loop's runner writes: its start time, digits only.
pub fn run_id(state: &State) -> String {
    state.started_at.to_string().replace([':', '-'], "")
}

/// The newest agent log of `state`'s loop: its file name and its last `cap` bytes (the
/// first line dropped when it was cut). `None` when there is none.
pub fn newest_log_tail(project: &Project, state: &State, cap: u64) -> Option<(String, Vec<u8>)> {
    let prefix = format!("{}-", run_id(state));
    let dir = project.dir();
    let newest = dir
        .list(Path::new(RUNS_DIR))
        .ok()?
        .into_iter()
        .filter_map(|name| name.into_string().ok())
        .filter(|name| name.starts_with(&prefix) && name.ends_with(".log"))
        .filter_map(|name| {
            let rel = format!("{RUNS_DIR}/{name}");
            let stat = dir.stat_rel(rel.as_bytes())?;
            (stat.kind == pagent_door::files::Kind::File).then_some((stat.mtime, name))
        })
        .max()?
        .1;
    let mut file = dir.open_read(&Path::new(RUNS_DIR).join(&newest)).ok()?;
    let len = file.metadata().ok()?.len();
    let start = len.saturating_sub(cap);
    file.seek(SeekFrom::Start(start)).ok()?;
    let mut bytes = Vec::new();
    file.take(cap).read_to_end(&mut bytes).ok()?;
    if start > 0 {
        let cut = bytes
            .iter()
            .position(|b| *b == b'\n')
            .map_or(bytes.len(), |i| i + 1);
        bytes.drain(..cut);
    }
    Some((newest, bytes))
}

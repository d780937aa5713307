//! `pagent loop`'s agent output, kept verbatim per iteration in `.claude/pagent/runs/`
//! (`<run id>-<stage>-<iteration>[-retryN].log`, beside each run's prompt), with the
//! reviewers' (`review-<stage>-<time>.log`), and read back here for the dashboard's live
//! view: only the newest log of the loop's own run, only its tail, through the door.
//!
//! A night of iterations must not fill the disk: the folder is kept under a size cap
//! ([`LOGS_CAP`], or the user's `logs.max_mb`), the oldest files dropped first as new
//! runs come ([`keep_under`]), and [`logs_size`] tells `pagent status` what the logs take.

use std::io::{Read, Seek, SeekFrom};
use std::path::Path;

use pagent_engine::State;

use crate::store::project::{Project, RUNS_DIR};

/// The most bytes of run and review logs kept in a project's runs folder, unless the
/// user's config says otherwise (`logs.max_mb`).
pub const LOGS_CAP: u64 = 256 * 1024 * 1024;

/// The most files kept there (a loop of tiny logs would otherwise keep hundreds of
/// thousands under the byte cap, and every iteration lists the folder).
pub const FILES_CAP: usize = 1000;

/// What [`keep_under`] dropped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Trimmed {
    pub files: usize,
    pub bytes: u64,
}

/// What a project's logs take on disk.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct LogsSize {
    /// The runs folder: agents' and reviewers' logs and prompts.
    pub runs: u64,
    pub run_files: usize,
    /// The event log, with its older half (`events.jsonl.1`).
    pub events: u64,
}

impl LogsSize {
    pub fn total(&self) -> u64 {
        self.runs.saturating_add(self.events)
    }
}

/// The regular files of the runs folder: (modified, name, size), oldest first.
fn run_files(project: &Project) -> Vec<((i64, i64), String, u64)> {
    let dir = project.dir();
    let Ok(names) = dir.list(Path::new(RUNS_DIR)) else {
        return Vec::new();
    };
    let mut files: Vec<_> = names
        .into_iter()
        .filter_map(|name| name.into_string().ok())
        .filter_map(|name| {
            let stat = dir.stat_rel(format!("{RUNS_DIR}/{name}").as_bytes())?;
            (stat.kind == pagent_door::files::Kind::File).then_some((stat.mtime, name, stat.size))
        })
        .collect();
    files.sort();
    files
}

/// Drops the oldest files of the runs folder until the rest take at most `cap` bytes
/// (and number at most [`FILES_CAP`]); what was dropped, when anything was. The newest
/// file always stays (the run under way writes it).
pub fn keep_under(project: &Project, cap: u64) -> Option<Trimmed> {
    let files = run_files(project);
    let mut total: u64 = files.iter().map(|f| f.2).sum();
    let mut left = files.len();
    let mut trimmed = Trimmed { files: 0, bytes: 0 };
    for (_, name, size) in files.iter().take(files.len().saturating_sub(1)) {
        if total <= cap && left <= FILES_CAP {
            break;
        }
        left -= 1;
        let rel = Path::new(RUNS_DIR).join(name);
        if project.dir().remove_file(&rel).unwrap_or(false) {
            total -= size;
            trimmed.files += 1;
            trimmed.bytes += size;
        }
    }
    (trimmed.files > 0).then_some(trimmed)
}

/// What the project's logs take now.
pub fn logs_size(project: &Project) -> LogsSize {
    let files = run_files(project);
    LogsSize {
        runs: files.iter().map(|f| f.2).sum(),
        run_files: files.len(),
        events: crate::store::eventlog::size(project),
    }
}

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

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use std::fs;
    use std::time::{Duration, SystemTime};

    use super::*;

    /// A runs folder of `sizes` (oldest first, a second apart).
    fn runs(sizes: &[usize]) -> (tempfile::TempDir, Project) {
        let dir = tempfile::tempdir().unwrap();
        let runs = dir.path().join(RUNS_DIR);
        fs::create_dir_all(&runs).unwrap();
        let old = SystemTime::now() - Duration::from_secs(3600);
        for (i, size) in sizes.iter().enumerate() {
            let path = runs.join(format!("{i:03}.log"));
            fs::write(&path, vec![b'x'; *size]).unwrap();
            let file = fs::File::options().write(true).open(&path).unwrap();
            file.set_modified(old + Duration::from_secs(i as u64))
                .unwrap();
        }
        let project = Project::at(dir.path()).unwrap();
        (dir, project)
    }

    fn names(project: &Project) -> Vec<String> {
        run_files(project).into_iter().map(|f| f.1).collect()
    }

    #[test]
    fn a_runs_folder_over_its_cap_drops_its_oldest_files_first() {
        let (_dir, project) = runs(&[400, 300, 200, 100]);
        assert_eq!(
            keep_under(&project, 1000),
            None,
            "under the cap: nothing goes"
        );
        assert_eq!(
            keep_under(&project, 350),
            Some(Trimmed {
                files: 2,
                bytes: 700
            })
        );
        assert_eq!(names(&project), ["002.log", "003.log"]);
        assert_eq!(
            logs_size(&project),
            LogsSize {
                runs: 300,
                run_files: 2,
                events: 0
            }
        );
        // The newest file stays, whatever the cap: the run under way writes it.
        assert!(keep_under(&project, 1).is_some());
        assert_eq!(names(&project), ["003.log"]);
    }

    #[test]
    fn a_runs_folder_of_tiny_logs_keeps_at_most_its_file_cap() {
        let (_dir, project) = runs(&vec![1; FILES_CAP + 5]);
        let trimmed = keep_under(&project, u64::MAX).unwrap();
        assert_eq!(trimmed.files, 5);
        assert_eq!(names(&project).len(), FILES_CAP);
        assert_eq!(names(&project)[0], "005.log");
    }
}

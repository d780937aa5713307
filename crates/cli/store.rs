//! The state file on disk: locked, atomic, sealed.
//!
//! Writers take an exclusive lock on `.claude/pagent/lock` (std's `File::lock`, flock on
//! Unix: released by the kernel when the holder dies, so a crashed hook never wedges the
//! next one), re-read the state, decide, and write through a temp file in the same folder
//! that is fsynced and renamed over the old one. Readers need no lock: a rename is atomic,
//! so they see the old file or the new one, never a mix.

use std::fs::{self, File, OpenOptions};
use std::io::{ErrorKind, Write};
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use pagent_engine::{State, seal};

use crate::project::Project;

/// Holds the exclusive state lock until dropped.
#[derive(Debug)]
pub struct StateLock {
    _file: File,
}

pub fn lock_state(project: &Project) -> anyhow::Result<StateLock> {
    let dir = project.pagent_dir();
    fs::create_dir_all(&dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let path = project.lock_path();
    let file = OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .open(&path)
        .with_context(|| format!("cannot open the lock file {}", path.display()))?;
    file.lock()
        .with_context(|| format!("cannot lock {}", path.display()))?;
    Ok(StateLock { _file: file })
}

/// The state file's bytes, or `None` when there is no state file.
pub fn read_state_bytes(project: &Project) -> anyhow::Result<Option<Vec<u8>>> {
    let path = project.state_path();
    match fs::read(&path) {
        Ok(bytes) => Ok(Some(bytes)),
        Err(err) if err.kind() == ErrorKind::NotFound => Ok(None),
        Err(err) => Err(err).with_context(|| format!("cannot read {}", path.display())),
    }
}

/// The parsed state, or `None` when there is no state file.
pub fn read_state(project: &Project) -> anyhow::Result<Option<State>> {
    let Some(bytes) = read_state_bytes(project)? else {
        return Ok(None);
    };
    let state = State::from_json(&bytes).with_context(|| {
        format!(
            "{} is corrupt; run `pagent cancel` to set it aside",
            project.display_path(&project.state_path())
        )
    })?;
    Ok(Some(state))
}

/// Seals `state` and replaces the state file atomically. Call with the lock held.
pub fn write_state_atomic(project: &Project, state: &State, secret: &[u8]) -> anyhow::Result<()> {
    let mut sealed = state.clone();
    seal::apply(&mut sealed, &project.seal_key(), secret);
    let mut text = sealed.to_json_pretty();
    text.push('\n');
    write_atomic(&project.state_path(), text.as_bytes())
}

/// Writes `bytes` to `path` so that a crash at any instant leaves the old or the new file.
pub fn write_atomic(path: &Path, bytes: &[u8]) -> anyhow::Result<()> {
    let dir = path.parent().context("the state path has no folder")?;
    fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let nanos = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.subsec_nanos())
        .unwrap_or(0);
    let temp = dir.join(format!(".{name}.{}.{nanos}.tmp", std::process::id()));
    let result = (|| -> std::io::Result<()> {
        let mut file = OpenOptions::new()
            .write(true)
            .create_new(true)
            .open(&temp)?;
        file.write_all(bytes)?;
        file.sync_all()?;
        fs::rename(&temp, path)?;
        // Make the rename itself durable.
        File::open(dir)?.sync_all()
    })();
    if result.is_err() {
        let _ = fs::remove_file(&temp);
    }
    result.with_context(|| format!("cannot write {}", path.display()))
}

/// Moves a corrupt state file aside (`pagent-pipeline.json.corrupt-<time>`), returning the
/// new name.
pub fn set_aside(project: &Project, now: u64) -> anyhow::Result<String> {
    let from = project.state_path();
    let to = from.with_file_name(format!("pagent-pipeline.json.corrupt-{now}"));
    fs::rename(&from, &to).with_context(|| format!("cannot move {} aside", from.display()))?;
    Ok(project.display_path(&to))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn atomic_writes_replace_and_leave_no_temp_files() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("sub").join("f.json");
        write_atomic(&path, b"one").unwrap();
        write_atomic(&path, b"two").unwrap();
        assert_eq!(fs::read(&path).unwrap(), b"two");
        let names: Vec<_> = fs::read_dir(path.parent().unwrap())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["f.json"]);
    }
}

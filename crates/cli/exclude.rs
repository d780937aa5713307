//! Keeping pagent's files out of commits: entries in the repository's `info/exclude`.
//!
//! `info/exclude` is git's per-clone ignore file: unlike `.gitignore` it is never
//! committed, so pagent does not touch files the user tracks. For a linked worktree the
//! file lives in the common git folder. Paths are written relative to the work tree, so a
//! project in a subfolder of a repository gets `/sub/.claude/pagent-pipeline.json`.

use std::fs;
use std::path::Path;

use anyhow::Context;

use crate::project::{PAGENT_DIR, STATE_FILE};

/// Adds the entries that are missing; returns how many were added. Outside a git
/// repository there is nothing to do.
pub fn exclude_pagent_files(root: &Path) -> anyhow::Result<usize> {
    let Ok(repo) = git2::Repository::discover(root) else {
        return Ok(0);
    };
    let Some(workdir) = repo.workdir().and_then(|w| w.canonicalize().ok()) else {
        return Ok(0);
    };
    let prefix = root
        .strip_prefix(&workdir)
        .map(|p| p.to_string_lossy().into_owned())
        .unwrap_or_default();
    let anchored = |path: &str| {
        if prefix.is_empty() {
            format!("/{path}")
        } else {
            format!("/{prefix}/{path}")
        }
    };
    let wanted = [
        anchored(STATE_FILE),
        anchored(&format!("{PAGENT_DIR}/")),
        anchored(".claude/.pagent-pipeline.json.*"),
    ];
    let file = repo.commondir().join("info").join("exclude");
    let existing = fs::read_to_string(&file).unwrap_or_default();
    let missing: Vec<&String> = wanted
        .iter()
        .filter(|w| !existing.lines().any(|l| l.trim() == w.as_str()))
        .collect();
    if missing.is_empty() {
        return Ok(0);
    }
    let mut text = existing.clone();
    if !text.is_empty() && !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("# pagent's state and event log (added by pagent)\n");
    for entry in &missing {
        text.push_str(entry);
        text.push('\n');
    }
    if let Some(dir) = file.parent() {
        fs::create_dir_all(dir).with_context(|| format!("cannot create {}", dir.display()))?;
    }
    fs::write(&file, text).with_context(|| format!("cannot update {}", file.display()))?;
    Ok(missing.len())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn adds_entries_once_relative_to_the_work_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git2::Repository::init(&root).unwrap();
        let sub = root.join("app");
        fs::create_dir(&sub).unwrap();
        assert_eq!(exclude_pagent_files(&sub).unwrap(), 3);
        assert_eq!(exclude_pagent_files(&sub).unwrap(), 0);
        let text = fs::read_to_string(root.join(".git/info/exclude")).unwrap();
        assert!(
            text.contains("\n/app/.claude/pagent-pipeline.json\n"),
            "{text}"
        );
        assert!(text.contains("\n/app/.claude/pagent/\n"));
        let repo = git2::Repository::open(&root).unwrap();
        assert!(
            repo.is_path_ignored(Path::new("app/.claude/pagent-pipeline.json"))
                .unwrap()
        );
        assert!(
            repo.is_path_ignored(Path::new("app/.claude/pagent/events.jsonl"))
                .unwrap()
        );
        assert!(
            !repo
                .is_path_ignored(Path::new("app/.claude/settings.json"))
                .unwrap()
        );
    }

    #[test]
    fn outside_git_does_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(exclude_pagent_files(dir.path()).unwrap(), 0);
    }
}

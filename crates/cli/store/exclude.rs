//! Keeping pagent's files out of commits: entries in the repository's `info/exclude`.
//!
//! `info/exclude` is git's per-clone ignore file: unlike `.gitignore` it is never
//! committed, so pagent does not touch files the user tracks. For a linked worktree the
//! file lives in the common git folder. Paths are written relative to the work tree, so a
//! project in a subfolder of a repository gets `/sub/.claude/pagent-pipeline.json`.

use std::path::Path;

use anyhow::Context;

use crate::store::project::{PAGENT_DIR, Project, STATE_FILE, WORKTREES_DIR};
use pagent_door::files::{self, Dir};

/// Adds the entries that are missing; returns how many were added. Outside a git
/// repository there is nothing to do, and nothing is written in a git folder that is
/// neither inside the work tree nor the main repository of a registered worktree (a
/// planted `.git` file can point anywhere).
pub fn exclude_pagent_files(project: &Project) -> anyhow::Result<usize> {
    let Some(repo) = crate::store::git::discover(&project.root) else {
        return Ok(0);
    };
    let Some(workdir) = repo.workdir().and_then(|w| files::canonical_dir(w).ok()) else {
        return Ok(0);
    };
    let Ok(common) = files::canonical_dir(repo.commondir()) else {
        return Ok(0);
    };
    if !common.starts_with(&workdir) && !registered_worktree(&common, &workdir) {
        return Ok(0);
    }
    let prefix = project
        .root
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
        // Worktrees are at the work tree's root, whatever folder the project is.
        format!("/{WORKTREES_DIR}/"),
    ];
    let git_dir = Dir::open(&common)?;
    let file = Path::new("info/exclude");
    let existing = git_dir
        .read_if_exists(file, 1024 * 1024)
        .context("cannot read the git folder's info/exclude")?
        .map(|b| String::from_utf8_lossy(&b).into_owned())
        .unwrap_or_default();
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
    git_dir
        .write_atomic(file, text.as_bytes())
        .context("cannot update the git folder's info/exclude")?;
    Ok(missing.len())
}

/// Whether `workdir` is a worktree that the repository at `common` lists as its own.
fn registered_worktree(common: &Path, workdir: &Path) -> bool {
    let Some(main) = crate::store::git::open(common) else {
        return false;
    };
    let Ok(names) = main.worktrees() else {
        return false;
    };
    names.iter().flatten().any(|name| {
        main.find_worktree(name)
            .is_ok_and(|w| files::canonical(w.path()).is_ok_and(|p| p == workdir))
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use std::fs;

    use super::*;

    #[test]
    fn adds_entries_once_relative_to_the_work_tree() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        git2::Repository::init(&root).unwrap();
        let sub = root.join("app");
        fs::create_dir(&sub).unwrap();
        assert_eq!(
            exclude_pagent_files(&Project::at(&sub).unwrap()).unwrap(),
            4
        );
        assert_eq!(
            exclude_pagent_files(&Project::at(&sub).unwrap()).unwrap(),
            0
        );
        let text = fs::read_to_string(root.join(".git/info/exclude")).unwrap();
        assert!(
            text.contains("\n/app/.claude/pagent-pipeline.json\n"),
            "{text}"
        );
        assert!(text.contains("\n/app/.claude/pagent/\n"));
        // Worktrees are at the work tree's root, whatever folder the project is.
        assert!(text.contains("\n/.pagent/worktrees/\n"), "{text}");
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
        assert!(
            repo.is_path_ignored(Path::new(".pagent/worktrees/task/a.txt"))
                .unwrap()
        );
    }

    #[test]
    fn outside_git_does_nothing() {
        let dir = tempfile::tempdir().unwrap();
        assert_eq!(
            exclude_pagent_files(&Project::at(dir.path()).unwrap()).unwrap(),
            0
        );
    }
}

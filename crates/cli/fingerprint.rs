//! A digest of the working tree, for no-progress detection.
//!
//! The seed hashed `git diff --stat`, which misses an edit that keeps line counts, ignores
//! untracked files, and reads "no change" right after the agent commits. This digest
//! covers what the agent can change: the HEAD commit, the index entries (path, blob id,
//! mode), and for every path `git status` reports, its status and the SHA-256 of its
//! current content. It uses libgit2 in-process: no `git` subprocess on the hook path.
//! Outside a git repository it falls back to a bounded walk of paths, sizes and mtimes.
//! pagent's own files are left out, so writing the state is never "progress".

use std::fs::File;
use std::io::{self, Read};
use std::path::Path;

use git2::{Repository, Status, StatusOptions};
use sha2::{Digest, Sha256};

/// Files beyond this many are not walked in the non-git fallback.
const WALK_LIMIT: usize = 200_000;

pub fn fingerprint(root: &Path) -> Option<String> {
    match Repository::discover(root) {
        // A repository libgit2 cannot read (a corrupt index, objects or HEAD) falls back
        // to the walk: no-progress detection must keep working, not silently stop.
        Ok(repo) if repo.workdir().is_some() => git_fingerprint(&repo)
            .ok()
            .or_else(|| walk_fingerprint(root)),
        _ => walk_fingerprint(root),
    }
}

fn is_pagent_file(path: &str) -> bool {
    let tail = path.rsplit_once(".claude/").map_or(path, |(_, t)| t);
    (path.contains(".claude/") || path.starts_with(".claude"))
        && (tail.starts_with("pagent-pipeline.json")
            || tail.starts_with("pagent/")
            || tail.starts_with(".pagent-pipeline.json"))
}

fn git_fingerprint(repo: &Repository) -> Result<String, git2::Error> {
    let mut hash = Sha256::new();
    match repo.head().ok().and_then(|head| head.target()) {
        Some(oid) => hash.update(oid.as_bytes()),
        None => hash.update(b"unborn"),
    }
    for entry in repo.index()?.iter() {
        hash.update(&entry.path);
        hash.update(entry.id.as_bytes());
        hash.update(entry.mode.to_le_bytes());
    }
    let mut options = StatusOptions::new();
    // HEAD and every index entry are hashed above, so only the work tree's side of the
    // status is needed: skipping the HEAD-to-index diff saves a tenth of the time.
    options.show(git2::StatusShow::Workdir);
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut options))?;
    let workdir = repo.workdir().unwrap_or_else(|| Path::new("."));
    let changed_in_tree =
        Status::WT_NEW | Status::WT_MODIFIED | Status::WT_TYPECHANGE | Status::WT_RENAMED;
    for entry in statuses.iter() {
        let Some(path) = entry.path() else { continue };
        if is_pagent_file(path) {
            continue;
        }
        hash.update(path.as_bytes());
        hash.update(entry.status().bits().to_le_bytes());
        if entry.status().intersects(changed_in_tree) {
            match hash_file(&workdir.join(path)) {
                Ok(digest) => hash.update(digest),
                Err(_) => hash.update(b"unreadable"),
            }
        }
    }
    Ok(pagent_engine::seal::hex(&hash.finalize()))
}

fn hash_file(path: &Path) -> io::Result<[u8; 32]> {
    let mut file = File::open(path)?;
    let mut hash = Sha256::new();
    let mut buf = vec![0; 64 * 1024];
    loop {
        let n = file.read(&mut buf)?;
        if n == 0 {
            break;
        }
        hash.update(&buf[..n]);
    }
    Ok(hash.finalize().into())
}

fn walk_fingerprint(root: &Path) -> Option<String> {
    let mut hash = Sha256::new();
    let walker = walkdir::WalkDir::new(root)
        .follow_links(false)
        .sort_by_file_name()
        .into_iter()
        .filter_entry(|e| {
            let name = e.file_name().to_string_lossy();
            !(e.file_type().is_dir() && matches!(name.as_ref(), ".git" | "target" | "node_modules"))
        });
    for entry in walker.take(WALK_LIMIT) {
        let Ok(entry) = entry else { continue };
        // Folders' mtimes change whenever pagent writes its own files: count files only.
        if entry.file_type().is_dir() {
            continue;
        }
        let relative = entry
            .path()
            .strip_prefix(root)
            .unwrap_or(entry.path())
            .to_string_lossy()
            .into_owned();
        if is_pagent_file(&relative) {
            continue;
        }
        let Ok(meta) = entry.metadata() else { continue };
        hash.update(relative.as_bytes());
        hash.update(meta.len().to_le_bytes());
        if let Ok(modified) = meta.modified()
            && let Ok(since) = modified.duration_since(std::time::UNIX_EPOCH)
        {
            hash.update(since.as_nanos().to_le_bytes());
        }
    }
    Some(pagent_engine::seal::hex(&hash.finalize()))
}

#[cfg(test)]
mod tests {
    use std::fs;
    use std::process::Command;

    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let status = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir)
            .output()
            .unwrap();
        assert!(status.status.success(), "{status:?}");
    }

    #[test]
    fn every_kind_of_progress_changes_the_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
        git(root, &["add", "a.txt"]);
        git(root, &["commit", "-qm", "first"]);
        let base = fingerprint(root).unwrap();
        assert_eq!(
            fingerprint(root).unwrap(),
            base,
            "stable when nothing changes"
        );

        // pagent's own files are not progress.
        fs::create_dir_all(root.join(".claude/pagent")).unwrap();
        fs::write(root.join(".claude/pagent-pipeline.json"), "{}").unwrap();
        fs::write(root.join(".claude/pagent/events.jsonl"), "{}").unwrap();
        assert_eq!(fingerprint(root).unwrap(), base);

        // An edit that keeps the line count.
        fs::write(root.join("a.txt"), "one\nTWO\n").unwrap();
        let edited = fingerprint(root).unwrap();
        assert_ne!(edited, base);
        // A second edit of the same file, still the same line count.
        fs::write(root.join("a.txt"), "ONE\nTWO\n").unwrap();
        let edited_again = fingerprint(root).unwrap();
        assert_ne!(edited_again, edited);
        // A new untracked file, and then a change inside it.
        fs::write(root.join("new.txt"), "x").unwrap();
        let untracked = fingerprint(root).unwrap();
        assert_ne!(untracked, edited_again);
        fs::write(root.join("new.txt"), "y").unwrap();
        let untracked_edit = fingerprint(root).unwrap();
        assert_ne!(untracked_edit, untracked);
        // A commit of all that leaves a clean tree but moves HEAD.
        git(root, &["add", "-A", "."]);
        git(root, &["reset", "-q", ".claude"]);
        let staged = fingerprint(root).unwrap();
        assert_ne!(staged, untracked_edit);
        git(root, &["commit", "-qm", "second"]);
        let committed = fingerprint(root).unwrap();
        assert_ne!(committed, staged);
        assert_ne!(committed, base);
    }

    #[test]
    fn outside_git_the_walk_notices_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("plain");
        fs::create_dir(&root).unwrap();
        fs::write(root.join("a.txt"), "1").unwrap();
        let base = walk_fingerprint(&root).unwrap();
        fs::write(root.join("b.txt"), "2").unwrap();
        assert_ne!(walk_fingerprint(&root).unwrap(), base);
    }

    #[test]
    fn recognises_pagent_files() {
        for path in [
            ".claude/pagent-pipeline.json",
            "sub/.claude/pagent/events.jsonl",
            ".claude/.pagent-pipeline.json.1.2.tmp",
            ".claude/pagent/lock",
        ] {
            assert!(is_pagent_file(path), "{path}");
        }
        for path in [
            ".claude/settings.json",
            "src/pagent/x.rs",
            "pagent-pipeline.json",
        ] {
            assert!(!is_pagent_file(path), "{path}");
        }
    }
}

//! A digest of the working tree, for no-progress detection.
//!
//! The seed hashed `git diff --stat`, which misses an edit that keeps line counts, ignores
//! untracked files, and reads "no change" right after the agent commits. This digest
//! covers what the agent can change: the HEAD commit, the index entries (path, blob id,
//! mode), and for every path `git status` reports, its status and the SHA-256 of its
//! current content. It uses libgit2 in-process: no `git` subprocess on the hook path.
//! Outside a git repository it falls back to a bounded walk of paths, sizes and mtimes.
//! pagent's own files are left out, so writing the state is never "progress".
//!
//! Files are read through the project's door: a symlink out of the project, a FIFO or a
//! device is hashed as what it is, never read, and a file is hashed only up to
//! [`cache::HASH_CAP`] (beyond it, its size and times stand for the rest).
//!
//! In a git repository, `fast.rs` computes the digest at the speed of `git status` by
//! reading git's index as a stream beside a walk of the work tree; libgit2's status is
//! the path for an index that reader does not read (a split index), and the walk of
//! sizes and times for a repository libgit2 cannot read either.
//!
//! Memory stays bounded whatever the repository holds: the index is streamed, never
//! held, and one larger than [`INDEX_CAP`], or with more than [`ENTRIES_CAP`] entries
//! (past what a monorepo holds: a million entries take 200 MB), is not read at all (a
//! 284 KB repository can check out a 160 MB index, or claim 14 million entries). Such a
//! repository is too large for a content fingerprint: there is none, so the no-progress
//! check stands aside there, and [`fingerprint_noting`] says so once. libgit2, which
//! loads an index whole, is asked only about one of at most [`LIBGIT2_INDEX_CAP`].

use std::path::Path;

use git2::{Repository, Status, StatusOptions};
use sha2::{Digest, Sha256};

use crate::store::project::Project;
use pagent_door::files::Dir;

mod cache;
mod fast;
mod index;

/// Files beyond this many are not walked in the non-git fallback.
const WALK_LIMIT: usize = 200_000;
/// The largest git index read, in bytes (streamed: it costs the time to read it, not
/// its size in memory).
pub const INDEX_CAP: u64 = 256 * 1024 * 1024;
/// The most index entries fingerprinted (each is `lstat`ed at every Stop, as `git
/// status` does).
pub const ENTRIES_CAP: u32 = 2_000_000;
/// The largest index handed to libgit2, which holds all of it (about 330 MB for 160 MB
/// of index, measured for issue 19), and its entries.
const LIBGIT2_INDEX_CAP: u64 = 16 * 1024 * 1024;
const LIBGIT2_ENTRIES_CAP: u32 = 100_000;

/// The fingerprint of the project's working tree, `None` when it has none (a repository
/// too large for one, or one nothing can be read of). The code reads it through the
/// engine's progress mark (`world::progress_mark`, `World::fingerprint`); tests directly.
#[cfg(test)]
pub fn fingerprint(project: &Project) -> Option<String> {
    fingerprint_noting(project).0
}

/// [`fingerprint`], and the notice for the user when the repository is too large for a
/// content fingerprint (the caller says it once).
pub fn fingerprint_noting(project: &Project) -> (Option<String>, Option<String>) {
    let dir = project.dir();
    match crate::store::git::discover(&project.root) {
        Some(repo) if repo.workdir().is_some() => {
            let (size, count) = index_size(&repo);
            if size > INDEX_CAP || count > ENTRIES_CAP {
                return (None, Some(too_large(size, count)));
            }
            let mut cache = cache::Cache::load(dir);
            if let Some(digest) = fast::fingerprint(&repo, dir, &mut cache) {
                cache.save(dir);
                return (Some(digest), None);
            }
            // An index the stream does not read goes to libgit2 while small enough to
            // hold; a repository libgit2 cannot read either (a corrupt index, objects or
            // HEAD) falls back to the walk: no-progress detection must keep working.
            let small = size <= LIBGIT2_INDEX_CAP && count <= LIBGIT2_ENTRIES_CAP;
            let digest = small
                .then(|| git_fingerprint(&repo, dir).ok())
                .flatten()
                .or_else(|| walk_fingerprint(dir));
            (digest, None)
        }
        _ => (walk_fingerprint(dir), None),
    }
}

/// The size of `repo`'s index and the entry count in its header (12 bytes read).
fn index_size(repo: &Repository) -> (u64, u32) {
    let index = repo.path().join("index");
    let size = pagent_door::files::size_outside(&index).unwrap_or(0);
    let count = pagent_door::files::read_prefix_outside(&index, 12)
        .ok()
        .filter(|h| h.len() == 12 && h.starts_with(b"DIRC"))
        .map_or(0, |h| u32::from_be_bytes([h[8], h[9], h[10], h[11]]));
    (size, count)
}

/// What the user reads when the index is larger than pagent reads.
fn too_large(size: u64, count: u32) -> String {
    format!(
        "pagent: this repository's git index ({}, {count} entries) is larger than pagent reads \
         ({} MiB, {ENTRIES_CAP} entries), so no-progress detection is off here: the loop ends \
         only at its iteration limit, its promise or its conditions (said once).",
        mib(size),
        INDEX_CAP >> 20
    )
}

fn mib(bytes: u64) -> String {
    format!("{:.1} MiB", bytes as f64 / (1024.0 * 1024.0))
}

fn is_pagent_file(path: &str) -> bool {
    let tail = path.rsplit_once(".claude/").map_or(path, |(_, t)| t);
    (path.contains(".claude/") || path.starts_with(".claude"))
        && (tail.starts_with("pagent-pipeline.json")
            || tail.starts_with("pagent/")
            || tail.starts_with(".pagent-pipeline.json"))
}

fn git_fingerprint(repo: &Repository, dir: &Dir) -> Result<String, git2::Error> {
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
    // Status paths are relative to the work tree; the project may be a folder inside it.
    let workdir = repo
        .workdir()
        .and_then(|w| pagent_door::files::canonical_dir(w).ok());
    let prefix = workdir
        .as_deref()
        .and_then(|w| dir.root().strip_prefix(w).ok())
        .map(Path::to_path_buf)
        .unwrap_or_default();
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
            let inside = Path::new(path).strip_prefix(&prefix).ok();
            let stat = inside.and_then(|p| dir.stat_rel(p.as_os_str().as_encoded_bytes()));
            match (inside, stat) {
                (Some(inside), Some(stat)) => hash.update(cache::content_digest(
                    dir,
                    inside.as_os_str().as_encoded_bytes(),
                    &stat,
                )),
                // Gone, or outside the project folder (elsewhere in the same repository).
                _ => hash.update(b"outside or gone"),
            }
        }
    }
    Ok(pagent_engine::seal::hex(&hash.finalize()))
}

fn walk_fingerprint(dir: &Dir) -> Option<String> {
    let root = dir.root();
    let mut hash = Sha256::new();
    let walker = dir
        .walk(Path::new("."))
        .ok()?
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
        // Windows paths come with `\`: the same digest, and pagent's own files still
        // recognised (found under Wine: the event log changed the digest at every stop).
        #[cfg(windows)]
        let relative = relative.replace('\\', "/");
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

/// The test suites' one `git` helper, shared with tests/integration and tests/e2e.
#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::unwrap_used)]
#[path = "../../../../tests/support/git.rs"]
mod support_git;

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use std::fs;

    use super::*;

    pub(super) use super::support_git::git;

    #[test]
    fn every_kind_of_progress_changes_the_fingerprint() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        fs::write(root.join("a.txt"), "one\ntwo\n").unwrap();
        git(root, &["add", "a.txt"]);
        git(root, &["commit", "-qm", "first"]);
        let base = fingerprint(&Project::at(root).unwrap()).unwrap();
        assert_eq!(
            fingerprint(&Project::at(root).unwrap()).unwrap(),
            base,
            "stable when nothing changes"
        );

        // pagent's own files are not progress.
        fs::create_dir_all(root.join(".claude/pagent")).unwrap();
        fs::write(root.join(".claude/pagent-pipeline.json"), "{}").unwrap();
        fs::write(root.join(".claude/pagent/events.jsonl"), "{}").unwrap();
        assert_eq!(fingerprint(&Project::at(root).unwrap()).unwrap(), base);

        // An edit that keeps the line count.
        fs::write(root.join("a.txt"), "one\nTWO\n").unwrap();
        let edited = fingerprint(&Project::at(root).unwrap()).unwrap();
        assert_ne!(edited, base);
        // A second edit of the same file, still the same line count.
        fs::write(root.join("a.txt"), "ONE\nTWO\n").unwrap();
        let edited_again = fingerprint(&Project::at(root).unwrap()).unwrap();
        assert_ne!(edited_again, edited);
        // A new untracked file, and then a change inside it.
        fs::write(root.join("new.txt"), "x").unwrap();
        let untracked = fingerprint(&Project::at(root).unwrap()).unwrap();
        assert_ne!(untracked, edited_again);
        fs::write(root.join("new.txt"), "y").unwrap();
        let untracked_edit = fingerprint(&Project::at(root).unwrap()).unwrap();
        assert_ne!(untracked_edit, untracked);
        // A commit of all that leaves a clean tree but moves HEAD.
        git(root, &["add", "-A", "."]);
        git(root, &["reset", "-q", ".claude"]);
        let staged = fingerprint(&Project::at(root).unwrap()).unwrap();
        assert_ne!(staged, untracked_edit);
        git(root, &["commit", "-qm", "second"]);
        let committed = fingerprint(&Project::at(root).unwrap()).unwrap();
        assert_ne!(committed, staged);
        assert_ne!(committed, base);
    }

    #[test]
    fn outside_git_the_walk_notices_changes() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("plain");
        fs::create_dir(&root).unwrap();
        fs::write(root.join("a.txt"), "1").unwrap();
        let base = walk_fingerprint(&Dir::open(&root.canonicalize().unwrap()).unwrap()).unwrap();
        fs::write(root.join("b.txt"), "2").unwrap();
        assert_ne!(
            walk_fingerprint(&Dir::open(&root.canonicalize().unwrap()).unwrap()).unwrap(),
            base
        );
    }

    #[test]
    fn an_index_over_either_cap_is_not_read_and_says_so() {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        fs::write(root.join("a.txt"), "a").unwrap();
        git(root, &["add", "a.txt"]);
        let (digest, notice) = fingerprint_noting(&Project::at(root).unwrap());
        assert!(digest.is_some() && notice.is_none());
        // A small file whose header claims more entries than the cap.
        let mut header = b"DIRC\0\0\0\x02".to_vec();
        header.extend_from_slice(&(ENTRIES_CAP + 1).to_be_bytes());
        fs::write(root.join(".git/index"), &header).unwrap();
        let (digest, notice) = fingerprint_noting(&Project::at(root).unwrap());
        assert_eq!(digest, None);
        assert!(notice.unwrap().contains("2000001 entries"));
        // A file over the size cap, whatever it says.
        let index = fs::File::create(root.join(".git/index")).unwrap();
        index.set_len(INDEX_CAP + 1).unwrap();
        let (digest, notice) = fingerprint_noting(&Project::at(root).unwrap());
        assert_eq!(digest, None);
        assert!(notice.unwrap().contains("256.0 MiB"));
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

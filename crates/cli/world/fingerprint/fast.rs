//! The fingerprint at the speed of `git status`: what libgit2's status does, the way git
//! does it.
//!
//! libgit2's status compares every index entry with the file on one thread; on 20,000
//! files that alone took longer than a whole `git status`. Here the index's stat data is
//! trusted as git trusts it: each tracked file is `lstat`ed (on a few threads, as git's
//! `core.preloadIndex` does) and only a file whose size, times or inode differ from what
//! the index recorded, or whose mtime is not older than the index itself ("racily clean",
//! git's rule), is hashed. Untracked files are found by one walk that descends only into
//! folders holding tracked files or not ignored, with no `stat` where the folder listing
//! says what an entry is. Content hashes of changed and untracked files are cached by
//! their stat data (`cache.rs`), so an unchanged big file is hashed once.
//!
//! It covers the usual case, a project that is its repository's work tree with an index
//! `index.rs` reads (versions 2 and 3, SHA-1); any other takes the status path.

use std::borrow::Cow;
use std::collections::BTreeMap;
use std::path::Path;

use git2::Repository;
use sha2::{Digest, Sha256};

use super::cache::Cache;
use super::index::{self, Entry};
use super::{INDEX_CAP, is_pagent_file};
use pagent_door::files::{Dir, Kind, Stat};

/// Mode bits of a gitlink (submodule) entry: nothing to stat.
const GITLINK: u32 = 0o160000;

/// What the walk and the stat pass found, by path.
#[derive(Debug, PartialEq, Eq)]
enum Found {
    Changed(Stat),
    Deleted,
    Untracked(Stat),
    /// An untracked folder that is itself a repository: listed, not entered.
    NestedRepo,
}

/// The fingerprint, or `None` when this path does not apply (the caller falls back).
pub fn fingerprint(repo: &Repository, dir: &Dir, cache: &mut Cache) -> Option<String> {
    let workdir = pagent_door::files::canonical_dir(repo.workdir()?).ok()?;
    if workdir != dir.root() {
        return None;
    }
    // Entries whose mtime is not older than the index file may have changed unseen.
    let racy_from = dir.stat_rel(b".git/index").map_or(i64::MAX, |s| s.mtime.0);
    // A repository nothing was ever added to has no index file: no entries.
    let bytes = dir
        .read_if_exists(Path::new(".git/index"), INDEX_CAP)
        .ok()?
        .unwrap_or_default();
    let entries = if bytes.is_empty() {
        Vec::new()
    } else {
        index::parse(&bytes)?
    };
    // Tracked paths are borrowed from the index's bytes: a repository whose every file is
    // deleted must not cost a copy of every path.
    let mut found: BTreeMap<Cow<'_, [u8]>, Found> = BTreeMap::new();
    for (path, what) in stat_entries(dir, &entries, racy_from) {
        found.insert(Cow::Borrowed(path), what);
    }
    untracked(repo, dir, &entries, &mut found);

    let mut hash = Sha256::new();
    match repo.head().ok().and_then(|head| head.target()) {
        Some(oid) => hash.update(oid.as_bytes()),
        None => hash.update(b"unborn"),
    }
    for entry in &entries {
        hash.update(entry.path);
        hash.update(entry.oid);
        hash.update(entry.mode.to_le_bytes());
    }
    for (path, what) in &found {
        let path: &[u8] = path;
        if std::str::from_utf8(path).is_ok_and(is_pagent_file) {
            continue;
        }
        hash.update(path);
        match what {
            Found::Deleted => hash.update(b"\0deleted"),
            Found::NestedRepo => hash.update(b"\0repository"),
            Found::Changed(stat) | Found::Untracked(stat) => {
                hash.update(if matches!(what, Found::Changed(_)) {
                    b"\0changed"
                } else {
                    b"\0new\0\0\0\0"
                });
                hash.update(cache.digest(dir, path, stat));
            }
        }
    }
    Some(pagent_engine::seal::hex(&hash.finalize()))
}

/// `lstat`s every tracked file on a few threads; returns those that differ from the index.
fn stat_entries<'a>(dir: &Dir, entries: &[Entry<'a>], racy_from: i64) -> Vec<(&'a [u8], Found)> {
    let threads = std::thread::available_parallelism()
        .map_or(1, usize::from)
        .clamp(1, 4);
    let chunk = entries.len().div_ceil(threads).max(1);
    std::thread::scope(|scope| {
        let workers: Vec<_> = entries
            .chunks(chunk)
            .map(|part| {
                scope.spawn(move || {
                    part.iter()
                        .filter(|e| e.mode & 0o170000 != GITLINK)
                        .filter_map(|e| {
                            let what = match dir.stat_rel(e.path) {
                                None => Found::Deleted,
                                Some(stat) if differs(e, &stat, racy_from) => Found::Changed(stat),
                                Some(_) => return None,
                            };
                            Some((e.path, what))
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap_or_default())
            .collect()
    })
}

/// Whether the file may differ from its index entry (git's `ie_match_stat`, in short).
fn differs(entry: &Entry<'_>, stat: &Stat, racy_from: i64) -> bool {
    // The index keeps 32 bits of each; compare what it kept.
    let low = |v: i64| (v as u64 & 0xffff_ffff) as u32;
    let kind_matches = match entry.mode & 0o170000 {
        0o120000 => stat.kind == Kind::Symlink,
        _ => stat.kind == Kind::File,
    };
    !kind_matches
        || u64::from(entry.size) != (stat.size & 0xffff_ffff)
        || entry.mtime != (low(stat.mtime.0), low(stat.mtime.1))
        || entry.ctime != (low(stat.ctime.0), low(stat.ctime.1))
        || entry.ino != (stat.ino & 0xffff_ffff) as u32
        || stat.mtime.0 >= racy_from
}

/// Finds untracked files: one walk, into tracked folders and into untracked ones that
/// are not ignored; `.git` and ignored paths are never entered.
fn untracked(
    repo: &Repository,
    dir: &Dir,
    entries: &[Entry<'_>],
    found: &mut BTreeMap<Cow<'_, [u8]>, Found>,
) {
    // The index is sorted by path, bytewise: membership is a binary search, and a folder
    // holds tracked files when the first path after "folder/" starts with it.
    let tracked = |path: &[u8]| entries.binary_search_by(|e| e.path.cmp(path)).is_ok();
    let tracked_dir = |path: &[u8]| {
        let mut prefix = path.to_vec();
        prefix.push(b'/');
        let at = entries.partition_point(|e| e.path < prefix.as_slice());
        entries.get(at).is_some_and(|e| e.path.starts_with(&prefix))
    };
    let ignored = |path: &[u8]| {
        repo.is_path_ignored(pagent_door::files::path_from_bytes(path))
            .unwrap_or(false)
    };
    let mut nested: Vec<Vec<u8>> = Vec::new();
    dir.walk_tree(&mut |path, kind| {
        if path == b".git" || tracked(path) {
            return false;
        }
        if kind == Kind::Dir {
            if tracked_dir(path) {
                return true;
            }
            if ignored(path) {
                return false;
            }
            let mut inner = path.to_vec();
            inner.extend_from_slice(b"/.git");
            if dir.stat_rel(&inner).is_some() {
                nested.push(path.to_vec());
                return false;
            }
            return true;
        }
        if !ignored(path)
            && let Some(stat) = dir.stat_rel(path)
        {
            found.insert(Cow::Owned(path.to_vec()), Found::Untracked(stat));
        }
        false
    });
    for path in nested {
        found.insert(Cow::Owned(path), Found::NestedRepo);
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests;

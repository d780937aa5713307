//! The fingerprint at the speed of `git status`, in the memory of one folder listing:
//! git's index and the work tree read side by side.
//!
//! The index is streamed (`index.rs`), never held: a monorepo's is 200 MB. The work tree
//! is walked in git's order (the door lists each folder sorted as git sorts paths), so
//! the walk and the index meet path by path, as a merge of two sorted lists: a path in
//! both is a tracked file, compared by its stat data as git compares it (only a file
//! whose size, times or inode differ from what the index recorded, or whose mtime is not
//! older than the index itself, "racily clean" as git says, is hashed); a path only in
//! the index is deleted; a path only on disk is untracked, unless ignored. A folder the
//! index has nothing under and that is ignored is never entered; `.git` never is. What
//! git does not look for on disk (a sparse checkout's skip-worktree entries, a sparse
//! index's folders, submodules) is not looked for here either. Content hashes of changed
//! and untracked files are cached by their stat data (`cache.rs`), so an unchanged big
//! file is hashed once.
//!
//! The digest covers HEAD, every index entry (path, object id, mode) and, in the order
//! met, every path that differs from the index with what it is now. A project inside a
//! larger work tree (a folder of a monorepo) is fingerprinted over the whole work tree,
//! as `git status` there reports it; only files inside the project are read for their
//! content, the others stand for themselves by their stat data.
//!
//! It covers an index `index.rs` reads (versions 2 to 4, SHA-1, not split); any other
//! takes libgit2's status (`mod.rs`).

use std::time::UNIX_EPOCH;

use git2::Repository;
use sha2::{Digest, Sha256};

use super::cache::Cache;
use super::index::{Entry, Reader, Unread};
use super::is_pagent_file;
use pagent_door::files::{Dir, DoorError, Kind, Stat};

/// Mode bits of a gitlink (submodule) entry, and of a sparse index's folder entry.
const GITLINK: u32 = 0o160000;
const TREE: u32 = 0o040000;

/// The fingerprint, or `None` when this path does not apply (the caller falls back).
pub fn fingerprint(repo: &Repository, dir: &Dir, cache: &mut Cache) -> Option<String> {
    let workdir = pagent_door::files::canonical_dir(repo.workdir()?).ok()?;
    let inside = dir.root().strip_prefix(&workdir).ok()?.to_path_buf();
    let opened;
    let tree = if inside.as_os_str().is_empty() {
        dir
    } else {
        opened = Dir::open(&workdir).ok()?;
        &opened
    };
    let index = match pagent_door::files::open_outside(&repo.path().join("index")) {
        Ok(file) => Some(file),
        // A repository nothing was ever added to has no index file: no entries.
        Err(DoorError::Missing(_)) => None,
        Err(_) => return None,
    };
    // Entries whose mtime is not older than the index file may have changed unseen.
    let racy_from = index
        .as_ref()
        .and_then(|f| f.metadata().ok()?.modified().ok())
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(i64::MAX, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
    let reader = match index {
        Some(file) => Some(Reader::new(file).ok()?.0),
        None => None,
    };
    let mut merge = Merge {
        reader,
        current: false,
        racy_from,
        entries: Sha256::new(),
        found: Sha256::new(),
        project: dir,
        inside: pagent_door::files::os_bytes(inside.as_os_str()).to_vec(),
        cache,
        unread: false,
    };
    merge.advance();
    tree.walk_tree(&mut |path, kind| merge.visit(repo, tree, path, kind));
    merge.rest();
    if merge.unread {
        return None;
    }
    let mut hash = Sha256::new();
    match repo.head().ok().and_then(|head| head.target()) {
        Some(oid) => hash.update(oid.as_bytes()),
        None => hash.update(b"unborn"),
    }
    hash.update(merge.entries.finalize());
    hash.update(merge.found.finalize());
    Some(pagent_engine::seal::hex(&hash.finalize()))
}

/// The index and the walk, side by side.
struct Merge<'a, R> {
    reader: Option<Reader<R>>,
    /// The reader holds an entry not yet matched with the walk.
    current: bool,
    racy_from: i64,
    /// Every index entry; every path that differs from the index.
    entries: Sha256,
    found: Sha256,
    /// The project, and where it is in the work tree (empty: it is the work tree).
    project: &'a Dir,
    inside: Vec<u8>,
    cache: &'a mut Cache,
    /// The index turned out to be one the reader does not read.
    unread: bool,
}

/// What a path is, against the index.
enum Found {
    Changed(Stat),
    Deleted,
    Untracked(Stat),
    /// An untracked folder that is itself a repository: listed, not entered.
    NestedRepo,
}

impl<R: std::io::Read> Merge<'_, R> {
    /// One path of the walk, in git's order; whether to enter it (a folder).
    fn visit(&mut self, repo: &Repository, tree: &Dir, path: &[u8], kind: Kind) -> bool {
        if self.unread {
            return false;
        }
        let is_dir = kind == Kind::Dir;
        self.pass_entries_before(path, is_dir);
        if path == b".git" {
            return false;
        }
        let exact = self.entry().is_some_and(|e| e.path == path);
        if is_dir {
            return self.visit_dir(repo, tree, path, exact);
        }
        if exact {
            self.tracked_file(tree, path);
            return false;
        }
        if !is_pagent_file(&String::from_utf8_lossy(path))
            && !ignored(repo, path)
            && let Some(stat) = tree.stat_rel(path)
        {
            self.record(path, Found::Untracked(stat));
        }
        false
    }

    fn visit_dir(&mut self, repo: &Repository, tree: &Dir, path: &[u8], exact: bool) -> bool {
        if exact {
            // A submodule (gitlink) is git's to look into; anything else the index holds
            // where a folder now is was replaced by it, and the folder is new.
            let gitlink = self.entry().is_some_and(|e| e.mode & 0o170000 == GITLINK);
            self.pass_entry();
            if gitlink {
                return false;
            }
            self.record(path, Found::Deleted);
        }
        let mut folder = path.to_vec();
        folder.push(b'/');
        match self.entry() {
            // A sparse index's folder: not checked out, not looked at.
            Some(e) if e.path == folder && e.mode & 0o170000 == TREE => {
                self.pass_entry();
                return false;
            }
            Some(e) if e.path.starts_with(&folder) => return true,
            _ => {}
        }
        if is_pagent_file(&String::from_utf8_lossy(&folder)) || ignored(repo, path) {
            return false;
        }
        folder.extend_from_slice(b".git");
        if tree.stat_rel(&folder).is_some() {
            self.record(path, Found::NestedRepo);
            return false;
        }
        true
    }

    /// The walk found the index's current entry: compare it with the file.
    fn tracked_file(&mut self, tree: &Dir, path: &[u8]) {
        let Some(entry) = self.entry() else { return };
        let racy_from = self.racy_from;
        let found = if entry.skip_worktree || entry.mode & 0o170000 == GITLINK {
            None
        } else {
            match tree.stat_rel(path) {
                None => Some(Found::Deleted),
                Some(stat)
                    if differs(&entry, &stat, racy_from)
                        && !same_blob(tree, path, &entry, &stat) =>
                {
                    Some(Found::Changed(stat))
                }
                Some(_) => None,
            }
        };
        self.pass_entry();
        // A conflict keeps one entry per stage, all under the same path.
        while self.entry().is_some_and(|e| e.path == path) {
            self.pass_entry();
        }
        if let Some(found) = found {
            self.record(path, found);
        }
    }

    /// Index entries before `path` in git's order are not on disk: deleted (or not
    /// checked out). The entry at a folder's own path is left for the folder to judge.
    fn pass_entries_before(&mut self, path: &[u8], is_dir: bool) {
        while let Some(e) = self.entry() {
            let before = if is_dir {
                e.path != path && before_folder(e.path, path)
            } else {
                e.path < path
            };
            if !before {
                return;
            }
            self.missing();
        }
    }

    /// The rest of the index, after the walk: not on disk.
    fn rest(&mut self) {
        while self.entry().is_some() {
            self.missing();
        }
        if let Some(reader) = &mut self.reader
            && !self.unread
            && reader.finish().is_err()
        {
            self.unread = true;
        }
    }

    /// The current entry has no file: deleted, unless git does not expect one.
    fn missing(&mut self) {
        let Some(e) = self.entry() else { return };
        let expected = !e.skip_worktree && e.mode & 0o170000 != GITLINK;
        let path = e.path.to_vec();
        self.pass_entry();
        if expected {
            self.record(&path, Found::Deleted);
        }
    }

    fn entry(&self) -> Option<Entry<'_>> {
        self.current
            .then(|| self.reader.as_ref().map(Reader::current))
            .flatten()
    }

    /// Hashes the current entry and reads the next.
    fn pass_entry(&mut self) {
        if let Some(reader) = self.reader.as_ref().filter(|_| self.current) {
            let e = reader.current();
            self.entries.update(e.path);
            self.entries.update(e.oid);
            self.entries.update(e.mode.to_le_bytes());
        }
        self.advance();
    }

    fn advance(&mut self) {
        let Some(reader) = &mut self.reader else {
            return;
        };
        match reader.next_entry() {
            Ok(next) => self.current = next.is_some(),
            Err(Unread) => {
                self.current = false;
                self.unread = true;
            }
        }
    }

    fn record(&mut self, path: &[u8], found: Found) {
        if is_pagent_file(&String::from_utf8_lossy(path)) {
            return;
        }
        self.found.update(path);
        match found {
            Found::Deleted => self.found.update(b"\0deleted"),
            Found::NestedRepo => self.found.update(b"\0repository"),
            Found::Changed(stat) | Found::Untracked(stat) => {
                self.found.update(if matches!(found, Found::Changed(_)) {
                    b"\0changed"
                } else {
                    b"\0new\0\0\0\0"
                });
                let digest = self.content(path, &stat);
                self.found.update(digest);
            }
        }
    }

    /// A file's content digest when it is inside the project; outside it (elsewhere in
    /// the same work tree), its stat data stands for it.
    fn content(&mut self, path: &[u8], stat: &Stat) -> [u8; 32] {
        let within = if self.inside.is_empty() {
            Some(path)
        } else {
            path.strip_prefix(self.inside.as_slice())
                .and_then(|p| p.strip_prefix(b"/"))
        };
        match within {
            Some(within) => self.cache.digest(self.project, within, stat),
            None => stat_digest(stat),
        }
    }
}

/// Whether `entry` sorts before `folder/`, where the folder's entries begin.
fn before_folder(entry: &[u8], folder: &[u8]) -> bool {
    let key = folder.iter().chain(std::iter::once(&b'/'));
    entry.iter().cmp(key) == std::cmp::Ordering::Less
}

fn ignored(repo: &Repository, path: &[u8]) -> bool {
    repo.is_path_ignored(pagent_door::files::path_from_bytes(path))
        .unwrap_or(false)
}

fn stat_digest(stat: &Stat) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(format!("{:?}", stat.kind).as_bytes());
    for n in [stat.size, stat.ino] {
        hash.update(n.to_le_bytes());
    }
    for t in [stat.mtime.0, stat.mtime.1, stat.ctime.0, stat.ctime.1] {
        hash.update(t.to_le_bytes());
    }
    hash.finalize().into()
}

/// Whether a file whose stat data differs from its entry still holds the entry's blob,
/// as git checks before it reports a change: a file touched, or written in the same
/// second as the index ("racily clean"), is not progress. Only a regular file of the
/// recorded size is read, up to the fingerprint's hashing cap.
fn same_blob(tree: &Dir, path: &[u8], entry: &Entry<'_>, stat: &Stat) -> bool {
    let plain = entry.mode & 0o170000 == 0o100000 && stat.kind == Kind::File;
    if !plain || stat.size != u64::from(entry.size) || stat.size > super::cache::HASH_CAP {
        return false;
    }
    let rel = pagent_door::files::path_from_bytes(path);
    tree.read(&rel, super::cache::HASH_CAP)
        .ok()
        .and_then(|bytes| git2::Oid::hash_object(git2::ObjectType::Blob, &bytes).ok())
        .is_some_and(|oid| oid.as_bytes() == entry.oid)
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

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests;

//! The streamed index reader against libgit2 and git itself: every version git writes,
//! extended flags, sparse checkouts and sparse indexes, and what it refuses.

use std::fs;
use std::path::Path;

use super::*;
use crate::world::fingerprint::tests::git;

/// An entry as the tests compare it: path, object id, mode, skip-worktree.
type Seen = (Vec<u8>, [u8; 20], u32, bool);

/// Every entry of the index at `root`, as the reader gives them (paths copied).
fn read_all(bytes: &[u8]) -> Result<Vec<Seen>, Unread> {
    let (mut reader, count) = Reader::new(bytes)?;
    let mut all = Vec::new();
    while let Some(e) = reader.next_entry()? {
        all.push((e.path.to_vec(), e.oid, e.mode, e.skip_worktree));
    }
    assert_eq!(all.len(), count as usize);
    reader.finish()?;
    Ok(all)
}

fn project(root: &Path) {
    git(root, &["init", "-q"]);
    let long = format!("{0}/{0}/{0}.txt", "n".repeat(120));
    for name in ["a.txt", "b/c.rs", "b/d/e f.md", &long, "é.md", "z/y/x.txt"] {
        let path = root.join(name);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, name).unwrap();
    }
    #[cfg(unix)] // a symlink in the index
    std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
    git(root, &["add", "-A"]);
    git(root, &["commit", "-qm", "first"]);
}

fn libgit2_entries(root: &Path) -> Vec<(Vec<u8>, [u8; 20], u32)> {
    let repo = git2::Repository::open(root).unwrap();
    let index = repo.index().unwrap();
    index
        .iter()
        .map(|e| (e.path.clone(), e.id.as_bytes().try_into().unwrap(), e.mode))
        .collect()
}

#[test]
fn reads_what_libgit2_reads_in_every_version_git_writes() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root);
    for version in ["2", "3", "4"] {
        if version == "3" {
            // Version 3 entries carry extended flags (intent-to-add); git writes
            // version 3 for them whatever it was asked.
            fs::write(root.join("later.txt"), "x").unwrap();
            git(root, &["add", "-N", "later.txt"]);
        }
        git(root, &["update-index", "--index-version", version]);
        let bytes = fs::read(root.join(".git/index")).unwrap();
        assert_eq!(bytes[7].to_string(), version);
        let ours: Vec<_> = read_all(&bytes)
            .unwrap()
            .into_iter()
            .map(|(p, o, m, _)| (p, o, m))
            .collect();
        assert_eq!(ours, libgit2_entries(root), "version {version}");
    }
    // The stat data, as libgit2 reads it.
    let bytes = fs::read(root.join(".git/index")).unwrap();
    let (mut reader, _) = Reader::new(bytes.as_slice()).unwrap();
    let repo = git2::Repository::open(root).unwrap();
    for theirs in repo.index().unwrap().iter() {
        let ours = reader.next_entry().unwrap().unwrap();
        assert_eq!(ours.size, theirs.file_size);
        assert_eq!(ours.ino, theirs.ino);
        assert_eq!(
            ours.mtime,
            (theirs.mtime.seconds() as u32, theirs.mtime.nanoseconds())
        );
    }
}

#[test]
fn a_sparse_checkout_and_a_sparse_index_are_read_with_what_is_not_checked_out() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root);
    git(root, &["sparse-checkout", "init", "--cone"]);
    git(root, &["sparse-checkout", "set", "b"]);
    let bytes = fs::read(root.join(".git/index")).unwrap();
    let skipped: Vec<_> = read_all(&bytes)
        .unwrap()
        .into_iter()
        .filter(|e| e.3)
        .map(|e| String::from_utf8(e.0).unwrap())
        .collect();
    assert!(skipped.contains(&"z/y/x.txt".to_owned()), "{skipped:?}");
    assert!(!skipped.contains(&"b/c.rs".to_owned()), "{skipped:?}");
    // A sparse index keeps a folder outside the cone as one entry, a tree.
    git(
        root,
        &["sparse-checkout", "init", "--cone", "--sparse-index"],
    );
    let bytes = fs::read(root.join(".git/index")).unwrap();
    let all = read_all(&bytes).unwrap();
    let folder = all.iter().find(|e| e.0 == b"z/").expect("a folder entry");
    assert_eq!((folder.2, folder.3), (0o040000, true));
}

#[test]
fn refuses_what_it_does_not_read() {
    let read = |bytes: &[u8]| read_all(bytes).map(|all| all.len());
    assert_eq!(read(b""), Err(Unread));
    assert_eq!(read(b"DIRC\0\0\0\x05\0\0\0\0"), Err(Unread), "version 5");
    assert_eq!(
        read(b"DIRC\0\0\0\x02\0\0\0\x01"),
        Err(Unread),
        "an entry missing"
    );
    assert_eq!(read(b"DIRC\0\0\0\x02\0\0\0\0"), Ok(0));
    // A split index: its entries are only what changed since the shared index.
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    project(root);
    git(root, &["update-index", "--split-index"]);
    let bytes = fs::read(root.join(".git/index")).unwrap();
    assert_eq!(read(&bytes), Err(Unread), "a split index");
}

#[test]
fn a_path_longer_than_a_block_or_cut_short_is_refused_not_held() {
    // One entry whose name never ends: the reader stops at its cap.
    let mut bytes = b"DIRC\0\0\0\x02\0\0\0\x01".to_vec();
    bytes.extend_from_slice(&[0; 60]);
    bytes.extend_from_slice(&0x0fffu16.to_be_bytes());
    bytes.extend(std::iter::repeat_n(b'a', 4 * PATH_CAP));
    assert_eq!(read_all(&bytes), Err(Unread));
    // The same cut short: no end, no entry.
    bytes.truncate(12 + 62 + 10);
    assert_eq!(read_all(&bytes), Err(Unread));
}

//! The team's records as git objects, in the clone, with libgit2 (no work tree touched,
//! no process): a record is a commit whose tree holds one JSON file.
//!
//! Writing: blob, a one-entry tree, a commit by "pagent", with the parent the record
//! needs (the state's previous commit, so its history is the team's log; a claim's work
//! in progress) or none. Reading: every object's size and kind is asked of the object
//! database's header before the object is loaded, so a commit, tree or blob planted on
//! the remote costs at most its cap, however large it is.

use git2::{ObjectType, Oid, Repository, Signature, Time};
use serde::de::DeserializeOwned;

use super::records;

/// The largest commit and tree objects of a record read.
const MAX_META_OBJECT: usize = 64 * 1024;

/// Writes a record commit: `file` holding `bytes`, with `parents`; its id.
pub fn write_record(
    repo: &Repository,
    file: &str,
    bytes: &[u8],
    parents: &[Oid],
    message: &str,
    now_secs: u64,
) -> Result<Oid, git2::Error> {
    let blob = repo.blob(bytes)?;
    let mut builder = repo.treebuilder(None)?;
    builder.insert(file, blob, 0o100_644)?;
    let tree = repo.find_tree(builder.write()?)?;
    let when = Time::new(i64::try_from(now_secs).unwrap_or(0), 0);
    let signature = Signature::new("pagent", "pagent@localhost", &when)?;
    let parents: Vec<git2::Commit<'_>> = parents
        .iter()
        .map(|p| repo.find_commit(*p))
        .collect::<Result<_, _>>()?;
    let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
    repo.commit(None, &signature, &signature, message, &tree, &parents)
}

/// The header of object `oid`: its size and kind, without loading it.
fn header(repo: &Repository, oid: Oid) -> Result<(usize, ObjectType), String> {
    let odb = repo.odb().map_err(|e| e.message().to_owned())?;
    odb.read_header(oid)
        .map_err(|_| "its object is missing".to_owned())
}

/// The commit `oid`, loaded only if it is a commit of a sane size.
pub fn small_commit(repo: &Repository, oid: Oid) -> Result<git2::Commit<'_>, String> {
    let (size, kind) = header(repo, oid)?;
    if kind != ObjectType::Commit {
        return Err(format!("it is a {kind}, not a commit"));
    }
    if size > MAX_META_OBJECT {
        return Err("its commit is too large".to_owned());
    }
    repo.find_commit(oid).map_err(|e| e.message().to_owned())
}

/// The record `file` in commit `oid`, read only if it fits in `cap` bytes.
pub fn read_record<T: DeserializeOwned>(
    repo: &Repository,
    oid: Oid,
    file: &str,
    cap: u64,
) -> Result<T, String> {
    let commit = small_commit(repo, oid)?;
    let tree_id = commit.tree_id();
    let (tree_size, kind) = header(repo, tree_id)?;
    if kind != ObjectType::Tree || tree_size > MAX_META_OBJECT {
        return Err("its tree is not a record's".to_owned());
    }
    let tree = repo
        .find_tree(tree_id)
        .map_err(|e| e.message().to_owned())?;
    let entry = tree
        .get_name(file)
        .ok_or_else(|| format!("it holds no {file}"))?;
    let (size, kind) = header(repo, entry.id())?;
    if kind != ObjectType::Blob {
        return Err(format!("its {file} is not a file"));
    }
    if size as u64 > cap {
        return Err(format!(
            "its {file} is {} KiB, more than the {} KiB pagent reads",
            size / 1024,
            cap / 1024
        ));
    }
    let blob = repo
        .find_blob(entry.id())
        .map_err(|e| e.message().to_owned())?;
    records::decode(blob.content(), cap)
}

/// The first parent of a record commit (a claim's work in progress), if it has one that
/// is a commit here.
pub fn first_parent(repo: &Repository, oid: Oid) -> Option<Oid> {
    let commit = small_commit(repo, oid).ok()?;
    let parent = commit.parent_id(0).ok()?;
    matches!(header(repo, parent), Ok((_, ObjectType::Commit))).then_some(parent)
}

/// The commit a ref of the clone points at.
pub fn ref_target(repo: &Repository, name: &str) -> Option<Oid> {
    repo.find_reference(name).ok()?.target()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_oversized_ones_are_never_loaded() {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init_bare(dir.path()).unwrap();
        let value = serde_json::json!({"a": 1});
        let oid = write_record(&repo, "x.json", &records::encode(&value), &[], "m", 1).unwrap();
        let back: serde_json::Value = read_record(&repo, oid, "x.json", 1024).unwrap();
        assert_eq!(back, value);
        let big = write_record(&repo, "x.json", &vec![b' '; 4096], &[], "m", 1).unwrap();
        let err = read_record::<serde_json::Value>(&repo, big, "x.json", 1024).unwrap_err();
        assert!(err.contains("more than the 1 KiB"), "{err}");
        assert!(read_record::<serde_json::Value>(&repo, oid, "y.json", 1024).is_err());
        let blob = repo.blob(b"{}").unwrap();
        assert!(
            small_commit(&repo, blob)
                .unwrap_err()
                .contains("not a commit")
        );
        let deep = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        let deep = write_record(&repo, "x.json", deep.as_bytes(), &[], "m", 1).unwrap();
        let err = read_record::<serde_json::Value>(&repo, deep, "x.json", 1 << 20).unwrap_err();
        assert!(err.contains("recursion limit"), "{err}");
        let child = write_record(&repo, "x.json", b"{}", &[oid], "m", 2).unwrap();
        assert_eq!(first_parent(&repo, child), Some(oid));
    }
}

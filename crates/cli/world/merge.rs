//! The engine's `merge_committed` condition answered from the repository (libgit2, no
//! `git` process): is a merge under way, which paths still conflict, does `HEAD` hold both
//! sides, and did the resolution leave a conflict-marker line that neither side had.
//!
//! Only git's objects are read, never the work tree: what counts is what was committed.
//! Markers are looked for in the files of `HEAD` that differ from both sides (the ones a
//! resolution wrote), as text; binary files carry no markers (git writes none into them,
//! and their conflicts show in the index until one side is chosen), and a blob larger
//! than [`MAX_SCANNED`] is not read.

use std::path::Path;

use git2::{Oid, Repository, RepositoryState, Tree};
use pagent_engine::merge::{MergeProbe, MergeSpec, new_marker_lines};

/// Blobs larger than this are not scanned for markers.
const MAX_SCANNED: usize = 8 * 1024 * 1024;

/// What the repository at `root` says of the merge `spec` names.
pub fn probe(root: &Path, spec: &MergeSpec) -> MergeProbe {
    let Some(repo) = crate::store::git::discover(root) else {
        return MergeProbe::Error(format!("{} is not in a git repository", root.display()));
    };
    probe_repo(&repo, spec).unwrap_or_else(|err| MergeProbe::Error(err.message().to_owned()))
}

fn probe_repo(repo: &Repository, spec: &MergeSpec) -> Result<MergeProbe, git2::Error> {
    match repo.state() {
        RepositoryState::Clean => {}
        RepositoryState::Merge => {
            return Ok(MergeProbe::Unfinished {
                conflicted: conflicted_paths(repo)?,
            });
        }
        other => {
            return Ok(MergeProbe::Error(format!(
                "{} is in progress here; finish or abort it first",
                operation(other)
            )));
        }
    }
    let conflicted = conflicted_paths(repo)?;
    if !conflicted.is_empty() {
        return Ok(MergeProbe::Unfinished { conflicted });
    }
    let head = repo.head()?.peel_to_commit()?;
    let merged = Oid::from_str(&spec.merged)?;
    let keeping = Oid::from_str(&spec.keeping)?;
    if !holds(repo, head.id(), merged) {
        return Ok(MergeProbe::NotMerged);
    }
    if !holds(repo, head.id(), keeping) {
        return Ok(MergeProbe::WorkLost);
    }
    let theirs = repo.find_commit(merged)?.tree()?;
    let ours = repo.find_commit(keeping)?.tree()?;
    let files = marked_files(repo, &head.tree()?, &[&theirs, &ours])?;
    Ok(if files.is_empty() {
        MergeProbe::Committed
    } else {
        MergeProbe::Markers(files)
    })
}

/// True when `commit` is `head` or one of its ancestors.
pub fn holds(repo: &Repository, head: Oid, commit: Oid) -> bool {
    head == commit || repo.graph_descendant_of(head, commit).unwrap_or(false)
}

/// The paths the index still has in conflict, sorted.
pub fn conflicted_paths(repo: &Repository) -> Result<Vec<String>, git2::Error> {
    let index = repo.index()?;
    if !index.has_conflicts() {
        return Ok(Vec::new());
    }
    let mut paths: Vec<String> = index
        .conflicts()?
        .filter_map(Result::ok)
        .filter_map(|c| c.our.or(c.their).or(c.ancestor))
        .map(|entry| String::from_utf8_lossy(&entry.path).into_owned())
        .collect();
    paths.sort();
    paths.dedup();
    Ok(paths)
}

/// The files of `tree` that differ from every one of `sides` and hold a marker line none
/// of those sides has.
pub fn marked_files(
    repo: &Repository,
    tree: &Tree<'_>,
    sides: &[&Tree<'_>],
) -> Result<Vec<String>, git2::Error> {
    let Some(first) = sides.first() else {
        return Ok(Vec::new());
    };
    let diff = repo.diff_tree_to_tree(Some(first), Some(tree), None)?;
    let mut found = Vec::new();
    for delta in diff.deltas() {
        let file = delta.new_file();
        let Some(path) = file.path() else { continue };
        if file.id().is_zero() {
            continue;
        }
        let side_ids: Vec<Option<Oid>> = sides
            .iter()
            .map(|side| side.get_path(path).ok().map(|entry| entry.id()))
            .collect();
        if side_ids.contains(&Some(file.id())) {
            continue;
        }
        let Ok(blob) = repo.find_blob(file.id()) else {
            continue;
        };
        if blob.is_binary() || blob.size() > MAX_SCANNED {
            continue;
        }
        let side_blobs: Vec<git2::Blob<'_>> = side_ids
            .iter()
            .flatten()
            .filter_map(|id| repo.find_blob(*id).ok())
            .filter(|b| b.size() <= MAX_SCANNED)
            .collect();
        let side_texts: Vec<&[u8]> = side_blobs.iter().map(git2::Blob::content).collect();
        if !new_marker_lines(blob.content(), &side_texts).is_empty() {
            found.push(path.display().to_string());
        }
    }
    found.sort();
    Ok(found)
}

/// "a rebase", "a cherry-pick", ... for a repository state other than clean or merge.
pub fn operation(state: RepositoryState) -> &'static str {
    match state {
        RepositoryState::Revert | RepositoryState::RevertSequence => "a revert",
        RepositoryState::CherryPick | RepositoryState::CherryPickSequence => "a cherry-pick",
        RepositoryState::Bisect => "a bisect",
        RepositoryState::Rebase
        | RepositoryState::RebaseInteractive
        | RepositoryState::RebaseMerge => "a rebase",
        RepositoryState::ApplyMailbox | RepositoryState::ApplyMailboxOrRebase => "a `git am`",
        RepositoryState::Merge => "a merge",
        RepositoryState::Clean => "nothing",
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use std::fs;

    use git2::{Signature, build::CheckoutBuilder};

    use super::*;

    fn commit_all(repo: &Repository, message: &str, parents: &[Oid]) -> Oid {
        let mut index = repo.index().unwrap();
        index
            .add_all(["*"], git2::IndexAddOption::DEFAULT, None)
            .unwrap();
        index.update_all(["*"], None).unwrap();
        index.write().unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = Signature::now("t", "t@t").unwrap();
        let parents: Vec<git2::Commit<'_>> = parents
            .iter()
            .map(|p| repo.find_commit(*p).unwrap())
            .collect();
        let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
        repo.commit(Some("HEAD"), &sig, &sig, message, &tree, &refs)
            .unwrap()
    }

    /// A repository where `ours` (HEAD) and `theirs` (a side commit) changed the same line
    /// of a.txt; returns (repo folder, ours, theirs).
    fn diverged() -> (tempfile::TempDir, Oid, Oid) {
        let dir = tempfile::tempdir().unwrap();
        let repo = Repository::init(dir.path()).unwrap();
        fs::write(dir.path().join("a.txt"), "base\n").unwrap();
        fs::write(
            dir.path().join("fixture.txt"),
            "<<<<<<< HEAD\nkept on purpose\n",
        )
        .unwrap();
        let base = commit_all(&repo, "base", &[]);
        fs::write(dir.path().join("a.txt"), "theirs\n").unwrap();
        let theirs = commit_all(&repo, "theirs", &[base]);
        repo.reset(
            repo.find_commit(base).unwrap().as_object(),
            git2::ResetType::Hard,
            None,
        )
        .unwrap();
        fs::write(dir.path().join("a.txt"), "ours\n").unwrap();
        let ours = commit_all(&repo, "ours", &[base]);
        (dir, ours, theirs)
    }

    fn spec(ours: Oid, theirs: Oid) -> MergeSpec {
        MergeSpec {
            merged: theirs.to_string(),
            keeping: ours.to_string(),
            name: "main".into(),
        }
    }

    #[test]
    fn a_merge_is_unfinished_until_committed_and_then_checked_for_markers() {
        let (dir, ours, theirs) = diverged();
        let repo = Repository::open(dir.path()).unwrap();
        let spec = spec(ours, theirs);
        assert_eq!(probe(dir.path(), &spec), MergeProbe::NotMerged);
        let annotated = repo.find_annotated_commit(theirs).unwrap();
        repo.merge(
            &[&annotated],
            None,
            Some(CheckoutBuilder::new().allow_conflicts(true)),
        )
        .unwrap();
        assert_eq!(
            probe(dir.path(), &spec),
            MergeProbe::Unfinished {
                conflicted: vec!["a.txt".into()]
            }
        );
        // Committed with the markers left in: refused, and the fixture's marker is not
        // counted (one side had it).
        let text = fs::read_to_string(dir.path().join("a.txt")).unwrap();
        assert!(text.contains("<<<<<<<"), "{text}");
        repo.index()
            .unwrap()
            .remove_path(Path::new("a.txt"))
            .unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("a.txt")).unwrap();
        index.write().unwrap();
        assert_eq!(
            probe(dir.path(), &spec),
            MergeProbe::Unfinished { conflicted: vec![] }
        );
        let marked = commit_all(&repo, "merge", &[ours, theirs]);
        repo.cleanup_state().unwrap();
        assert_eq!(
            probe(dir.path(), &spec),
            MergeProbe::Markers(vec!["a.txt".into()])
        );
        fs::write(dir.path().join("a.txt"), "ours\ntheirs\n").unwrap();
        commit_all(&repo, "resolved", &[marked]);
        assert_eq!(probe(dir.path(), &spec), MergeProbe::Committed);
    }

    #[test]
    fn a_resolution_that_drops_the_branchs_work_is_not_one() {
        let (dir, ours, theirs) = diverged();
        let repo = Repository::open(dir.path()).unwrap();
        // "Resolved" by taking the other side wholesale: HEAD is theirs.
        repo.reset(
            repo.find_commit(theirs).unwrap().as_object(),
            git2::ResetType::Hard,
            None,
        )
        .unwrap();
        assert_eq!(probe(dir.path(), &spec(ours, theirs)), MergeProbe::WorkLost);
        assert!(matches!(
            probe(&dir.path().join("missing"), &spec(ours, theirs)),
            MergeProbe::Error(_)
        ));
    }
}

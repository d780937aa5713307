//! What a task's branch holds, for the summary: commits beyond its target branch, files
//! they change, work left uncommitted in its worktree, and where that worktree is. Read
//! with libgit2 from the repository's objects and the worktree's status; nothing runs.
//!
//! The words a user needs before reviewing or merging: "3 commits, 5 files changed" says
//! the branch is worth a look; "nothing committed, 2 files uncommitted" says the work is
//! only in the worktree (a run with `--no-checkpoint`), which `git log pagent/NAME` would
//! not show.

use std::path::{Path, PathBuf};

use git2::{Oid, Repository, StatusOptions};

use crate::runner::worktree;
use crate::store::project::Project;

/// What a task's branch and worktree hold.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(super) struct Holdings {
    pub branch: String,
    /// The branch exists (a user may have deleted it).
    pub exists: bool,
    /// The branch it merges into, when one is known.
    pub target: Option<String>,
    /// Commits on the branch that the target does not have.
    pub commits: usize,
    /// Files those commits change (against where the branch left the target).
    pub files: usize,
    /// Files changed or new in the worktree and not committed (ignored ones aside).
    pub uncommitted: usize,
    /// The worktree's folder, while it exists.
    pub worktree: Option<PathBuf>,
}

/// What task `name`'s branch holds; `into` overrides the recorded target.
pub(super) fn holdings(project: &Project, name: &str, into: Option<&str>) -> Holdings {
    let branch = format!("pagent/{name}");
    let mut out = Holdings {
        branch: branch.clone(),
        ..Holdings::default()
    };
    let Some(repo) = crate::store::git::discover(&project.root) else {
        return out;
    };
    out.worktree = worktree::existing(&project.root, name)
        .ok()
        .flatten()
        .map(|t| t.path);
    if let Some(path) = &out.worktree {
        out.uncommitted = uncommitted(path).len();
    }
    let Some(tip) = branch_tip(&repo, &branch) else {
        return out;
    };
    out.exists = true;
    out.target = target_branch(&repo, &branch, into);
    let base = out
        .target
        .as_deref()
        .and_then(|t| branch_tip(&repo, t))
        .and_then(|target| repo.merge_base(target, tip).ok().map(|b| (target, b)));
    if let Some((target, base)) = base {
        out.commits = commits_between(&repo, target, tip);
        out.files = files_changed(&repo, base, tip);
    }
    out
}

/// The branch a task's branch merges into: `--into`, else the one recorded when its
/// worktree was made, else the branch checked out in the main work tree.
pub(super) fn target_branch(repo: &Repository, branch: &str, into: Option<&str>) -> Option<String> {
    into.map(str::to_owned)
        .or_else(|| worktree::target_of(repo, branch))
        .or_else(|| {
            repo.head()
                .ok()
                .filter(git2::Reference::is_branch)?
                .shorthand()
                .map(str::to_owned)
        })
}

pub(super) fn branch_tip(repo: &Repository, branch: &str) -> Option<Oid> {
    repo.find_branch(branch, git2::BranchType::Local)
        .ok()?
        .get()
        .peel_to_commit()
        .ok()
        .map(|c| c.id())
}

/// Commits reachable from `tip` and not from `target`.
fn commits_between(repo: &Repository, target: Oid, tip: Oid) -> usize {
    let Ok(mut walk) = repo.revwalk() else {
        return 0;
    };
    if walk.push(tip).is_err() || walk.hide(target).is_err() {
        return 0;
    }
    walk.filter(Result::is_ok).count()
}

fn files_changed(repo: &Repository, base: Oid, tip: Oid) -> usize {
    let tree = |id: Oid| repo.find_commit(id).and_then(|c| c.tree()).ok();
    let (Some(old), Some(new)) = (tree(base), tree(tip)) else {
        return 0;
    };
    repo.diff_tree_to_tree(Some(&old), Some(&new), None)
        .map_or(0, |d| d.deltas().len())
}

/// The paths changed or new in the work tree at `root` and not committed (ignored files
/// aside; a new folder counts each file in it).
pub(super) fn uncommitted(root: &Path) -> Vec<String> {
    let Some(repo) = crate::store::git::discover(root) else {
        return Vec::new();
    };
    let mut options = StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let Ok(statuses) = repo.statuses(Some(&mut options)) else {
        return Vec::new();
    };
    statuses
        .iter()
        .filter(|s| s.status() != git2::Status::CURRENT && !s.status().is_ignored())
        .filter_map(|s| s.path().map(str::to_owned))
        .collect()
}

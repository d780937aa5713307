//! Landing a task's branch on its target: the merge computed in memory (libgit2's
//! `merge_commits`), so the user's own checkout is never left mid-merge; the merge commit
//! made; the checkout updated when the target is the branch checked out there; and the
//! branch moved only from the tip the merge was computed on (compare-and-swap), so a
//! commit the user made meanwhile is never lost. Nothing is pushed, ever.
//!
//! The checkout is updated with libgit2's safe strategy: it refuses (before writing
//! anything) to overwrite a file that differs from `HEAD` or an untracked file in the way,
//! and the queue has already refused a checkout with uncommitted changes. The merge
//! commit is made by libgit2, except when the repository asks for signed commits
//! (`commit.gpgsign`): libgit2 cannot sign with the user's gpg or ssh set-up, so then the
//! user's own `git commit-tree` makes it, started by `repo_git`: only while the
//! repository's git configuration is what it was before the agents ran (an agent could
//! have set `commit.gpgsign` and `gpg.program` itself).

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use git2::build::CheckoutBuilder;
use git2::{CheckoutNotificationType, Oid, Repository, RepositoryState, Signature};

use crate::process::ProgramError;
use crate::runner::repo_git::{Refused, RepoGit, refusal};
use crate::world::merge;

/// What merging the task's tip into the target's gives.
pub(super) enum Attempt {
    /// No conflict: the merged tree.
    Clean(Oid),
    /// These paths conflict.
    Conflicts(Vec<String>),
}

/// Merges `theirs` into `ours` in memory.
pub(super) fn attempt(repo: &Repository, ours: Oid, theirs: Oid) -> anyhow::Result<Attempt> {
    let mut index =
        repo.merge_commits(&repo.find_commit(ours)?, &repo.find_commit(theirs)?, None)?;
    if index.has_conflicts() {
        let mut paths: Vec<String> = index
            .conflicts()?
            .filter_map(Result::ok)
            .filter_map(|c| c.our.or(c.their).or(c.ancestor))
            .map(|e| String::from_utf8_lossy(&e.path).into_owned())
            .collect();
        paths.sort();
        paths.dedup();
        return Ok(Attempt::Conflicts(paths));
    }
    Ok(Attempt::Clean(index.write_tree_to(repo)?))
}

/// Where `branch` is checked out: `None` nowhere, else the work tree's folder.
pub(super) fn checked_out_at(repo: &Repository, branch: &str) -> Option<PathBuf> {
    let full = format!("refs/heads/{branch}");
    let head_is = |r: &Repository| {
        r.head()
            .ok()
            .is_some_and(|h| h.name() == Some(full.as_str()))
            || (r.head_detached().ok() == Some(false)
                && r.find_reference("HEAD")
                    .ok()
                    .and_then(|h| h.symbolic_target().map(str::to_owned))
                    .as_deref()
                    == Some(full.as_str()))
    };
    if head_is(repo) {
        return crate::store::git::work_tree(repo);
    }
    for name in repo.worktrees().ok()?.iter().flatten() {
        let Ok(tree) = repo.find_worktree(name) else {
            continue;
        };
        if let Ok(other) = Repository::open_from_worktree(&tree)
            && head_is(&other)
        {
            return Some(tree.path().to_path_buf());
        }
    }
    None
}

/// Why the work tree of `repo` cannot take a merge now: an operation under way, or
/// changes not committed (the paths, a few of them). `None` when it can.
pub(super) fn not_clean(repo: &Repository) -> Option<String> {
    if repo.state() != RepositoryState::Clean {
        return Some(format!(
            "{} is in progress there",
            merge::operation(repo.state())
        ));
    }
    let mut options = git2::StatusOptions::new();
    options.include_untracked(false).exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut options)).ok()?;
    let dirty: Vec<String> = statuses
        .iter()
        .filter(|s| s.status() != git2::Status::CURRENT && !s.status().is_ignored())
        .filter_map(|s| s.path().map(str::to_owned))
        .collect();
    if dirty.is_empty() {
        return None;
    }
    let mut shown = dirty.iter().take(5).cloned().collect::<Vec<_>>().join(", ");
    if dirty.len() > 5 {
        shown.push_str(&format!(" and {} more", dirty.len() - 5));
    }
    Some(format!("it has uncommitted changes ({shown})"))
}

/// What to land: the target branch at `target_tip` gets a merge commit of `tree` with
/// parents (target, task).
pub(super) struct Landing<'a> {
    pub target: &'a str,
    pub target_tip: Oid,
    pub task_tip: Oid,
    pub tree: Oid,
    pub message: &'a str,
    /// The work tree where the target is checked out, if it is.
    pub checkout: Option<&'a Path>,
}

/// Makes the merge commit and moves the target to it; its id.
pub(super) fn land(
    repo: &Repository,
    landing: &Landing<'_>,
    git: &RepoGit<'_>,
) -> anyhow::Result<Oid> {
    let commit = make_commit(repo, landing, git)?;
    let refname = format!("refs/heads/{}", landing.target);
    let new_tree = repo.find_tree(landing.tree)?;
    if landing.checkout.is_some() {
        let mut blocked: Vec<String> = Vec::new();
        let mut checkout = CheckoutBuilder::new();
        checkout
            .safe()
            .notify_on(CheckoutNotificationType::CONFLICT)
            .notify(|_, path, _, _, _| {
                if let Some(path) = path {
                    blocked.push(path.display().to_string());
                }
                true
            });
        let result = repo.checkout_tree(new_tree.as_object(), Some(&mut checkout));
        drop(checkout);
        if let Err(err) = result {
            if blocked.is_empty() {
                return Err(err).context("cannot update the checked-out files");
            }
            bail!(
                "merging would overwrite files that are not committed: {}",
                blocked.join(", ")
            );
        }
    }
    let message = format!(
        "pagent: merge {}",
        landing.message.lines().next().unwrap_or("")
    );
    if let Err(err) = repo.reference_matching(&refname, commit, true, landing.target_tip, &message)
    {
        if landing.checkout.is_some() {
            restore_checkout(repo, landing);
        }
        bail!(
            "{} moved while pagent merged ({}); nothing was merged, run the same command again",
            landing.target,
            err.message()
        );
    }
    Ok(commit)
}

/// After a lost race on the branch: the files the merge wrote are put back as the
/// branch's new tip has them. The checkout matched `HEAD` before the merge wrote them
/// (it was clean), so the paths where `HEAD` and the merge differ are exactly the ones to
/// restore.
fn restore_checkout(repo: &Repository, landing: &Landing<'_>) {
    let (Ok(old), Ok(new)) = (
        repo.head().and_then(|h| h.peel_to_tree()),
        repo.find_tree(landing.tree),
    ) else {
        return;
    };
    let Ok(diff) = repo.diff_tree_to_tree(Some(&old), Some(&new), None) else {
        return;
    };
    let mut checkout = CheckoutBuilder::new();
    checkout.force();
    for delta in diff.deltas() {
        for file in [delta.old_file(), delta.new_file()] {
            if let Some(path) = file.path() {
                checkout.path(path);
            }
        }
    }
    let _ = repo.checkout_head(Some(&mut checkout));
}

fn make_commit(repo: &Repository, landing: &Landing<'_>, git: &RepoGit<'_>) -> anyhow::Result<Oid> {
    let signs = repo
        .config()
        .and_then(|c| c.get_bool("commit.gpgsign"))
        .unwrap_or(false);
    if signs {
        return commit_with_git(landing, git);
    }
    let signature = repo
        .signature()
        .or_else(|_| Signature::now("pagent", "pagent@localhost"))?;
    let tree = repo.find_tree(landing.tree)?;
    let parents = [
        repo.find_commit(landing.target_tip)?,
        repo.find_commit(landing.task_tip)?,
    ];
    Ok(repo.commit(
        None,
        &signature,
        &signature,
        landing.message,
        &tree,
        &[&parents[0], &parents[1]],
    )?)
}

/// `git commit-tree -S TREE -p TARGET -p TASK -m MESSAGE` (an argument, no shell): the commit signed
/// as the user's git signs it.
fn commit_with_git(landing: &Landing<'_>, git: &RepoGit<'_>) -> anyhow::Result<Oid> {
    let launch = git.launch("git").map_err(|err| {
        if let Some(refused) = err.downcast_ref::<Refused>() {
            let what = format!("sign the merge into {}", landing.target);
            return anyhow::anyhow!("{}", refusal(&what, refused, Some("merge it yourself")));
        }
        if err.downcast_ref::<ProgramError>().is_some() {
            return err.context("the repository signs its commits (commit.gpgsign) and pagent signs through git, which is not on PATH");
        }
        err
    })?;
    let out = launch
        .args([
            "commit-tree".to_owned(),
            // commit-tree signs only when told; the key and format are git's config.
            "-S".to_owned(),
            landing.tree.to_string(),
            "-p".to_owned(),
            landing.target_tip.to_string(),
            "-p".to_owned(),
            landing.task_tip.to_string(),
            "-m".to_owned(),
            landing.message.to_owned(),
        ])
        .output(Duration::from_secs(120), 64 * 1024)
        .map_err(|why| anyhow::anyhow!("cannot run git commit-tree: {why}"))?;
    if !out.success() {
        bail!("git commit-tree failed: {}", out.stderr.trim());
    }
    Oid::from_str(out.stdout.trim()).context("git commit-tree printed no commit id")
}

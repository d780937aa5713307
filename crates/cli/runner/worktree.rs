//! Git for `pagent loop`: a worktree per loop, checkpoint commits, and pushing the branch
//! after a loop completes (the pull request is `github`'s).
//!
//! Worktrees and commits use libgit2; pushing needs the user's credentials and hosting
//! setup, so it goes through `git push`, started by `repo_git` (found on the cleaned
//! `PATH`, never a `./git` of the project, and only while the repository's git
//! configuration is what it was when the loop started), and every failure is reported
//! with the command's own words, never swallowed.

use std::path::{Path, PathBuf};
use std::time::Duration;

use anyhow::{Context, bail};
use git2::{IndexAddOption, Repository, Signature, WorktreeAddOptions};

use crate::process::{Launch, SearchPath};
use crate::runner::repo_git::RepoGit;
use crate::store::door::{self, Dir};

/// How long `git push` and `gh pr create` may take (they wait on a network).
const REMOTE_TIMEOUT: Duration = Duration::from_secs(600);
/// Bytes of their output kept for a message.
const KEEP: usize = 16 * 1024;

/// Where loop worktrees live, inside the repository's work tree (ignored through
/// `.git/info/exclude`), outside `.claude/`, where Claude Code refuses every edit.
pub const WORKTREES: &str = crate::store::project::WORKTREES_DIR;

#[derive(Debug, Clone)]
pub struct Worktree {
    pub path: PathBuf,
    pub branch: String,
    /// False when an existing worktree was reused (a resumed loop).
    pub created: bool,
}

/// The worktree `name` on branch `pagent/<name>`, created from HEAD if it does not exist.
pub fn open_or_create(project_root: &Path, name: &str) -> anyhow::Result<Worktree> {
    anyhow::ensure!(
        !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.')
            && !name.starts_with('.'),
        "the worktree name {name:?} must be letters, digits, '-', '_' or '.'"
    );
    let repo =
        crate::store::git::discover(project_root).context("--worktree needs a git repository")?;
    let workdir = door::canonical_dir(repo.workdir().context("the repository has no work tree")?)
        .context("the repository's work tree cannot be opened")?;
    let tree = Dir::open(&workdir)?;
    let rel = Path::new(WORKTREES).join(name);
    let path = workdir.join(&rel);
    let branch = format!("pagent/{name}");
    if let Some(found) = reusable(&repo, &tree, &rel, &path)? {
        return Ok(Worktree {
            path: found,
            branch,
            created: false,
        });
    }
    // Loops started together (pagent parallel) create worktrees at the same moment;
    // libgit2 is not safe against that (it fails to mkdir .git/worktrees that another
    // process just made), so creation is serialised on a lock in the git folder.
    let git_dir = Dir::open(&door::canonical_dir(repo.commondir())?)?;
    let _lock = git_dir
        .lock(Path::new("pagent-worktree.lock"), Duration::from_secs(120))
        .context("cannot lock the worktree lock")?;
    git_dir.create_dir_all(Path::new("worktrees"))?;
    if let Some(found) = reusable(&repo, &tree, &rel, &path)? {
        return Ok(Worktree {
            path: found,
            branch,
            created: false,
        });
    }
    let head = repo
        .head()
        .and_then(|h| h.peel_to_commit())
        .context("--worktree needs a commit to branch from (HEAD is unborn)")?;
    let reference = match repo.find_branch(&branch, git2::BranchType::Local) {
        Ok(existing) => existing.into_reference(),
        Err(_) => repo
            .branch(&branch, &head, false)
            .with_context(|| format!("cannot create the branch {branch}"))?
            .into_reference(),
    };
    remember_target(&repo, &branch);
    tree.create_dir_all(Path::new(WORKTREES))?;
    let mut options = WorktreeAddOptions::new();
    options.reference(Some(&reference));
    // libgit2 names the worktree's admin folder after this; keep it unique per branch.
    let admin = format!("pagent-{name}");
    repo.worktree(&admin, &path, Some(&options))
        .with_context(|| format!("cannot create the worktree {}", path.display()))?;
    Ok(Worktree {
        path,
        branch,
        created: true,
    })
}

/// The branch a task branch merges into: the one checked out where the worktree was
/// made, kept in the repository's own config (`branch.pagent/NAME.pagentTarget`), which
/// no clone can plant. Never a remote-tracking setting: an agent's bare `git push` in
/// the worktree must not land on the user's branch.
pub fn target_of(repo: &Repository, branch: &str) -> Option<String> {
    repo.config()
        .ok()?
        .get_string(&format!("branch.{branch}.{TARGET_KEY}"))
        .ok()
        .filter(|t| !t.is_empty())
}

const TARGET_KEY: &str = "pagentTarget";

/// Records HEAD's branch as `branch`'s target, unless one is recorded already (a detached
/// HEAD records nothing: `--into` names the target then).
fn remember_target(repo: &Repository, branch: &str) {
    if target_of(repo, branch).is_some() {
        return;
    }
    let Some(current) = repo
        .head()
        .ok()
        .filter(git2::Reference::is_branch)
        .and_then(|h| h.shorthand().map(str::to_owned))
    else {
        return;
    };
    if let Ok(mut config) = repo.config() {
        let _ = config.set_str(&format!("branch.{branch}.{TARGET_KEY}"), &current);
    }
}

/// The worktree `name` if this repository has it registered in its place; `None` when
/// there is none (never made, or removed after its merge).
pub fn existing(project_root: &Path, name: &str) -> anyhow::Result<Option<Worktree>> {
    let Some(repo) = crate::store::git::discover(project_root) else {
        return Ok(None);
    };
    let workdir = door::canonical_dir(repo.workdir().context("the repository has no work tree")?)
        .context("the repository's work tree cannot be opened")?;
    let tree = Dir::open(&workdir)?;
    let rel = Path::new(WORKTREES).join(name);
    let path = workdir.join(&rel);
    Ok(reusable(&repo, &tree, &rel, &path)?.map(|path| Worktree {
        path,
        branch: format!("pagent/{name}"),
        created: false,
    }))
}

/// Removes the worktree `name`: its folder (through the door, links never followed) and
/// git's record of it. The branch stays.
pub fn remove(project_root: &Path, name: &str) -> anyhow::Result<()> {
    let repo = crate::store::git::discover(project_root).context("no git repository")?;
    let workdir = door::canonical_dir(repo.workdir().context("the repository has no work tree")?)?;
    let rel = Path::new(WORKTREES).join(name);
    let path = workdir.join(&rel);
    Dir::open(&workdir)?
        .remove_tree(&rel)
        .with_context(|| format!("cannot remove the worktree {}", path.display()))?;
    for admin in repo.worktrees()?.iter().flatten() {
        let Ok(found) = repo.find_worktree(admin) else {
            continue;
        };
        if found.path() == path || door::canonical(found.path()).is_ok_and(|p| p == path) {
            found
                .prune(Some(
                    git2::WorktreePruneOptions::new()
                        .valid(true)
                        .working_tree(false),
                ))
                .with_context(|| format!("cannot forget the worktree {}", path.display()))?;
        }
    }
    Ok(())
}

/// The existing worktree at `rel` (`path` in full), if it is one this repository has
/// registered there; an error if something else is in its place (a planted symlink to
/// another repository must never be reused).
fn reusable(
    repo: &Repository,
    tree: &Dir,
    rel: &Path,
    path: &Path,
) -> anyhow::Result<Option<PathBuf>> {
    match tree.kind_no_follow(rel)? {
        None => return Ok(None),
        Some(door::Kind::Dir) => {}
        Some(kind) => bail!(
            "{} is {}, not a worktree folder; remove it to let pagent create the worktree",
            path.display(),
            kind.article()
        ),
    }
    for admin in repo.worktrees()?.iter().flatten() {
        let Ok(registered) = repo.find_worktree(admin) else {
            continue;
        };
        if door::canonical(registered.path()).is_ok_and(|p| p == path) {
            return Ok(Some(path.to_path_buf()));
        }
    }
    bail!(
        "{} exists but is not a worktree of this repository; remove it to let pagent create the worktree",
        path.display()
    )
}

/// Commits every change in `root`'s work tree (what `git add -A` would add); `None` when
/// there was nothing to commit.
///
/// During a merge (a conflict resolution), nothing is committed: a checkpoint would make
/// a one-parent commit of conflict markers; the agent finishes the merge with `git commit`.
pub fn checkpoint(root: &Path, message: &str) -> anyhow::Result<Option<String>> {
    let repo = crate::store::git::discover(root).context("--checkpoint needs a git repository")?;
    if repo.state() != git2::RepositoryState::Clean {
        return Ok(None);
    }
    let mut index = repo.index()?;
    index.add_all(["*"], IndexAddOption::DEFAULT, None)?;
    index.update_all(["*"], None)?;
    index.write()?;
    let tree_id = index.write_tree()?;
    let parent = repo.head().ok().and_then(|h| h.peel_to_commit().ok());
    if parent.as_ref().is_some_and(|p| p.tree_id() == tree_id) {
        return Ok(None);
    }
    let tree = repo.find_tree(tree_id)?;
    let signature = repo
        .signature()
        .or_else(|_| Signature::now("pagent", "pagent@localhost"))?;
    let parents: Vec<&git2::Commit<'_>> = parent.iter().collect();
    let oid = repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        message,
        &tree,
        &parents,
    )?;
    Ok(Some(oid.to_string()))
}

/// `git push -u origin BRANCH` in the repository `git` is for.
pub fn push(git: &RepoGit<'_>, branch: &str) -> anyhow::Result<()> {
    let out = git
        .launch("git")?
        .args(["push", "-u", "origin", branch])
        .output(REMOTE_TIMEOUT, KEEP)
        .map_err(|why| anyhow::anyhow!("cannot run git: {why}"))?;
    if !out.success() {
        let how = if out.timed_out {
            format!("timed out after {} s", REMOTE_TIMEOUT.as_secs())
        } else {
            out.stderr.trim().to_owned()
        };
        bail!("git push failed: {how}");
    }
    Ok(())
}

/// `--setup`: the command run once in a new worktree, in the terminal's process group
/// (Ctrl-C reaches it), before the first iteration.
pub fn run_setup(root: &Path, line: &str, search: &SearchPath) -> anyhow::Result<()> {
    let code = Launch::shell(line, root, search)
        .in_callers_group()
        .status()
        .with_context(|| format!("cannot run the setup command `{line}`"))?;
    anyhow::ensure!(
        code == Some(0),
        "the setup command `{line}` failed ({}) in {}",
        code.map_or_else(
            || "killed by a signal".to_owned(),
            |c| format!("exit code {c}")
        ),
        root.display()
    );
    Ok(())
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use std::fs;

    use super::*;

    fn repo_with_commit() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let repo = Repository::init(&root).unwrap();
        fs::write(root.join("a.txt"), "a").unwrap();
        let mut index = repo.index().unwrap();
        index.add_path(Path::new("a.txt")).unwrap();
        let tree = repo.find_tree(index.write_tree().unwrap()).unwrap();
        let sig = Signature::now("t", "t@t").unwrap();
        repo.commit(Some("HEAD"), &sig, &sig, "init", &tree, &[])
            .unwrap();
        (dir, root)
    }

    #[test]
    fn creates_a_worktree_on_its_branch_and_reuses_it() {
        let (_dir, root) = repo_with_commit();
        let first = open_or_create(&root, "task-1").unwrap();
        assert!(first.created);
        assert_eq!(first.branch, "pagent/task-1");
        assert!(first.path.join("a.txt").exists());
        let again = open_or_create(&root, "task-1").unwrap();
        assert!(!again.created);
        assert!(open_or_create(&root, "../evil").is_err());
    }

    /// Regression: `pagent parallel` starts loops together, and libgit2 failed with
    /// "failed to make directory .git/worktrees: directory exists" when two created
    /// their worktrees at the same moment.
    #[test]
    fn worktrees_created_at_the_same_moment_do_not_collide() {
        for _ in 0..5 {
            let (_dir, root) = repo_with_commit();
            let barrier = std::sync::Arc::new(std::sync::Barrier::new(6));
            let handles: Vec<_> = (0..6)
                .map(|i| {
                    let (root, barrier) = (root.clone(), barrier.clone());
                    std::thread::spawn(move || {
                        barrier.wait();
                        open_or_create(&root, &format!("w{i}")).map(|t| t.created)
                    })
                })
                .collect();
            for handle in handles {
                assert!(handle.join().unwrap().unwrap());
            }
        }
    }

    #[test]
    fn checkpoints_commit_changes_only() {
        let (_dir, root) = repo_with_commit();
        let tree = open_or_create(&root, "w").unwrap();
        assert_eq!(checkpoint(&tree.path, "nothing").unwrap(), None);
        fs::write(tree.path.join("b.txt"), "b").unwrap();
        fs::remove_file(tree.path.join("a.txt")).unwrap();
        assert!(
            checkpoint(&tree.path, "pagent: iteration 1")
                .unwrap()
                .is_some()
        );
        let repo = Repository::open(&tree.path).unwrap();
        let head = repo.head().unwrap();
        assert_eq!(head.shorthand(), Some("pagent/w"));
        let commit = head.peel_to_commit().unwrap();
        assert_eq!(commit.message(), Some("pagent: iteration 1"));
        assert!(commit.tree().unwrap().get_name("b.txt").is_some());
        assert!(commit.tree().unwrap().get_name("a.txt").is_none());
        // The main checkout is untouched.
        assert!(root.join("a.txt").exists() && !root.join("b.txt").exists());
    }
}

//! `pagent parallel --merge` / `--merge-only`: each completed task's branch merged into
//! its target branch, one at a time, in task order.
//!
//! ```text
//! for each task, in order:
//!     not completed, branch gone, target dirty or checked out elsewhere  -> left, and why
//!     merge target + task in memory
//!         clean     -> merge commit on the target (land), worktree removed
//!         conflicts -> merge started in the task's worktree, a resolution loop of the
//!                      same agent there until the merge is committed, no marker is left
//!                      and --check passes; then merged as above (the target may have
//!                      moved meanwhile: a few rounds at most)
//!         gave up   -> left unmerged, its worktree as the agent left it, and said so
//! ```
//!
//! The queue keeps no file of its own: a task's progress is in git (the branch, the
//! `pagentMerged` mark, a merge under way in its worktree) and in its worktree's loop
//! state (a resolution set up there), so Ctrl-C at any point is resumed by the same
//! command. The user's checkout is only ever moved from one commit to the next
//! (`land`); a merge under way exists only in a task's worktree, and the summary names it.
//! Nothing is pushed.

mod land;
pub(in crate::runner) mod resolve;
mod words;

use std::io::Write;
use std::path::{Path, PathBuf};

use anyhow::Context;
use git2::Oid;
use pagent_engine::Status;
use serde_json::json;

use super::holdings::{self, branch_tip, target_branch};
use super::plan::{self, RESOLVE_WORKFLOW};
use crate::cli::env::Env;
use crate::runner::loop_event::LoopEvent;
use crate::runner::repo_git::{RepoGit, Settings, When};
use crate::runner::worktree::{self, Worktree};
use crate::setup::plan::ParallelPlan;
use crate::setup::tasks::Task;
use crate::store::project::Project;
use crate::world::merge::holds;
use pagent_door::process::SearchPath;
use pagent_door::process::signals;

use resolve::Resolved;
pub(super) use words::{HEADING, not_run};

/// Rounds of merge-then-resolve for one task before giving up on a target that keeps
/// moving.
const MAX_ROUNDS: usize = 3;

/// One task's branch on its way into the branch it merges into.
struct Merging<'r> {
    repo: &'r git2::Repository,
    task: &'r Task,
    /// `pagent/NAME`.
    branch: String,
    target: String,
    /// The repository's main working folder.
    workdir: PathBuf,
    /// The task's worktree, if it is still there.
    tree: Option<Worktree>,
    /// Where the target is checked out, if anywhere.
    checkout: Option<PathBuf>,
}

/// What the queue works with, and where it speaks.
pub(super) struct Queue<'a> {
    pub env: &'a Env,
    pub project: &'a Project,
    pub args: &'a ParallelPlan,
    pub exe: &'a Path,
    pub search: &'a SearchPath,
    /// The repository's git settings when this `pagent parallel` started.
    pub start_git: Option<&'a Settings>,
    pub out: &'a mut dyn Write,
}

/// How one task's merge ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Merge {
    /// Merged into `into` as `commit`; `resolved`: the resolution's iterations.
    Merged {
        into: String,
        commit: String,
        resolved: Option<u64>,
        kept: Option<String>,
    },
    /// `into` already had every commit of the branch.
    UpToDate { into: String, kept: Option<String> },
    /// Merged by an earlier run, as `commit`.
    Earlier { commit: String },
    /// Not merged, and why.
    Left(String),
    /// Stopped by a signal; the same command resumes it.
    Interrupted(String),
}

impl Merge {
    pub(super) fn key(&self) -> &'static str {
        match self {
            Merge::Merged { .. } => "merged",
            Merge::UpToDate { .. } => "up_to_date",
            Merge::Earlier { .. } => "merged_earlier",
            Merge::Left(_) => "left",
            Merge::Interrupted(_) => "interrupted",
        }
    }

    pub(super) fn is_merged(&self) -> bool {
        matches!(
            self,
            Merge::Merged { .. } | Merge::UpToDate { .. } | Merge::Earlier { .. }
        )
    }
}

impl Queue<'_> {
    /// Merges each task whose loop completed (`outcomes[i]` is `None`; else the words of
    /// how it ended), in order.
    pub(super) fn merge_all(&mut self, tasks: &[Task], outcomes: &[Option<String>]) -> Vec<Merge> {
        // One queue at a time per repository: two would each merge onto a tip the
        // other is moving.
        let _lock = match queue_lock(self.project) {
            Ok(lock) => lock,
            Err(why) => return tasks.iter().map(|_| Merge::Left(why.clone())).collect(),
        };
        let mut merged = Vec::new();
        for (task, outcome) in tasks.iter().zip(outcomes) {
            let result = if signals::interrupted() {
                Merge::Interrupted(words::not_reached())
            } else if let Some(outcome) = outcome {
                match plan::merged_commit(self.project, &task.name) {
                    Some(commit) => Merge::Earlier {
                        commit: short(&commit),
                    },
                    None => Merge::Left(words::not_completed(outcome)),
                }
            } else {
                self.merge_one(task)
                    .unwrap_or_else(|err| Merge::Left(format!("not merged: {err:#}")))
            };
            merged.push(result);
        }
        merged
    }

    fn merge_one(&mut self, task: &Task) -> anyhow::Result<Merge> {
        let root = self.project.root.clone();
        let tree = worktree::existing(&root, &task.name)?;
        if tree.is_none()
            && let Some(commit) = plan::merged_commit(self.project, &task.name)
        {
            return Ok(Merge::Earlier {
                commit: short(&commit),
            });
        }
        let repo = crate::store::git::discover(&root).context("no git repository")?;
        let m = match self.merging(&repo, task, tree) {
            Ok(m) => m,
            Err(left) => return Ok(left),
        };
        let mut resolved: Option<u64> = None;
        if let Some(tree) = &m.tree {
            if let Some(done) = self.earlier_resolution(task, tree, &m.target, &mut resolved)? {
                return Ok(done);
            }
            let wt_repo = crate::store::git::discover(&tree.path).context("no worktree")?;
            let files = holdings::uncommitted(&tree.path);
            if !files.is_empty() && wt_repo.state() == git2::RepositoryState::Clean {
                return Ok(Merge::Left(words::uncommitted(files.len(), &tree.path)));
            }
        }
        self.rounds(&m, &mut resolved)
    }

    /// The task's branch and the branch it merges into, when both are there and the
    /// target is checked out nowhere but here; else why the task is left.
    fn merging<'r>(
        &self,
        repo: &'r git2::Repository,
        task: &'r Task,
        tree: Option<Worktree>,
    ) -> Result<Merging<'r>, Merge> {
        let workdir =
            crate::store::git::work_tree(repo).unwrap_or_else(|| self.project.root.clone());
        let branch = format!("pagent/{}", task.name);
        if branch_tip(repo, &branch).is_none() {
            return Err(Merge::Left(words::branch_gone(&branch, &workdir)));
        }
        let Some(target) = target_branch(repo, &branch, self.args.into.as_deref()) else {
            return Err(Merge::Left(words::no_target(&workdir)));
        };
        if branch_tip(repo, &target).is_none() || target == branch {
            return Err(Merge::Left(words::target_gone(&target, &workdir)));
        }
        let checkout = land::checked_out_at(repo, &target);
        if let Some(at) = &checkout
            && !same_folder(at, &workdir)
        {
            return Err(Merge::Left(words::target_elsewhere(&target, at)));
        }
        Ok(Merging {
            repo,
            task,
            branch,
            target,
            workdir,
            tree,
            checkout,
        })
    }

    /// Merges until the target holds the task's branch: a clean merge lands, a conflict
    /// goes to a resolution loop and the next round; a target that keeps moving is left.
    fn rounds(&mut self, m: &Merging<'_>, resolved: &mut Option<u64>) -> anyhow::Result<Merge> {
        let (repo, name, target) = (m.repo, &m.task.name, &m.target);
        for _ in 0..MAX_ROUNDS {
            if signals::interrupted() {
                return Ok(Merge::Interrupted(words::not_reached()));
            }
            let (Some(target_tip), Some(task_tip)) =
                (branch_tip(repo, target), branch_tip(repo, &m.branch))
            else {
                return Ok(Merge::Left(words::branch_gone(&m.branch, &m.workdir)));
            };
            if holds(repo, target_tip, task_tip) {
                plan::mark_merged(repo, name, &target_tip.to_string())?;
                let kept = self.remove_worktree(name, m.tree.as_ref());
                return Ok(Merge::UpToDate {
                    into: target.clone(),
                    kept,
                });
            }
            if m.checkout.is_some()
                && let Some(why) = land::not_clean(repo)
            {
                return Ok(Merge::Left(words::target_dirty(target, &m.workdir, &why)));
            }
            match land::attempt(repo, target_tip, task_tip)? {
                land::Attempt::Clean(merged_tree) => {
                    return self.land_clean(m, (target_tip, task_tip), merged_tree, *resolved);
                }
                land::Attempt::Conflicts(files) => {
                    let Some(tree) = &m.tree else {
                        return Ok(Merge::Left(words::conflicts_without_worktree(
                            target, &files,
                        )));
                    };
                    self.tell(name, &words::resolving(target, &files, &tree.path));
                    resolve::set_up(self, m.task, tree, target, task_tip)?;
                    if let Some(done) = self.run_resolution(m.task, tree, target, resolved) {
                        return Ok(done);
                    }
                }
            }
        }
        Ok(Merge::Left(words::kept_moving(target)))
    }

    /// Lands a merge without conflicts on the target: its commit, the task marked
    /// merged, its worktree removed (unless it holds work).
    fn land_clean(
        &mut self,
        m: &Merging<'_>,
        (target_tip, task_tip): (Oid, Oid),
        merged_tree: Oid,
        resolved: Option<u64>,
    ) -> anyhow::Result<Merge> {
        let commits = commits_in(m.repo, target_tip, task_tip);
        let message = words::commit_message(m.task, &m.branch, commits, resolved);
        let landing = land::Landing {
            target: &m.target,
            target_tip,
            task_tip,
            tree: merged_tree,
            message: &message,
            checkout: m.checkout.as_deref(),
        };
        // A signed merge starts git: compared with the settings when this run started
        // and when the task's own loop did (an earlier run's).
        let task_git = m
            .tree
            .as_ref()
            .and_then(|t| Project::at(&t.path).ok())
            .and_then(|p| plan::own_state(&p, self.env))
            .map(|s| s.git_config);
        let mut baselines = vec![self.start_git];
        if let Some(task_git) = &task_git {
            baselines.push(task_git.as_ref());
        }
        let git = RepoGit {
            root: &m.workdir,
            env: self.env,
            search: self.search,
            when: When::After(baselines),
        };
        let commit = land::land(m.repo, &landing, &git)?;
        plan::mark_merged(m.repo, &m.task.name, &commit.to_string())?;
        let kept = self.remove_worktree(&m.task.name, m.tree.as_ref());
        Ok(Merge::Merged {
            into: m.target.clone(),
            commit: short(&commit.to_string()),
            resolved,
            kept,
        })
    }

    /// Takes up a resolution an earlier run set up in the task's worktree: continues it
    /// when it was interrupted, leaves it when it gave up (unless `--force`). `None` when
    /// the queue goes on to merge.
    fn earlier_resolution(
        &mut self,
        task: &Task,
        tree: &Worktree,
        target: &str,
        resolved: &mut Option<u64>,
    ) -> anyhow::Result<Option<Merge>> {
        let Some(state) = Project::at(&tree.path)
            .ok()
            .and_then(|p| plan::own_state(&p, self.env))
            .filter(|s| s.workflow == RESOLVE_WORKFLOW)
        else {
            return Ok(None);
        };
        match state.status {
            Status::Complete => Ok(None),
            Status::Active => Ok(self.run_resolution(task, tree, target, resolved)),
            _ if self.args.force => {
                let repo =
                    crate::store::git::discover(&self.project.root).context("no repository")?;
                let Some(task_tip) = branch_tip(&repo, &tree.branch) else {
                    return Ok(Some(Merge::Left(words::branch_gone(
                        &tree.branch,
                        &self.project.root,
                    ))));
                };
                let keeping = resolve::previous_spec(&state)
                    .and_then(|s| Oid::from_str(&s.keeping).ok())
                    .unwrap_or(task_tip);
                resolve::set_up(self, task, tree, target, keeping)?;
                Ok(self.run_resolution(task, tree, target, resolved))
            }
            _ => {
                let mid_merge = crate::store::git::discover(&tree.path)
                    .is_some_and(|r| r.state() == git2::RepositoryState::Merge);
                let reason = state
                    .end_reason
                    .unwrap_or_else(|| state.status.as_words().to_owned());
                Ok(Some(Merge::Left(words::resolution_gave_up(
                    target, &reason, &tree.path, mid_merge,
                ))))
            }
        }
    }

    /// Runs the resolution loop set up in the worktree; `None` when it completed with the
    /// merge on the task's branch (the queue merges next), else how the task ends.
    fn run_resolution(
        &mut self,
        task: &Task,
        tree: &Worktree,
        target: &str,
        resolved: &mut Option<u64>,
    ) -> Option<Merge> {
        match resolve::run(self, task) {
            Resolved::Complete { iterations } => {
                *resolved = Some(resolved.unwrap_or(0) + iterations);
                // The agent works in the worktree on the task's branch; a merge it
                // committed on another branch is not the task's.
                let full = format!("refs/heads/{}", tree.branch);
                let on_branch = crate::store::git::discover(&tree.path)
                    .and_then(|wt| wt.head().ok()?.name().map(str::to_owned))
                    .is_some_and(|head| head == full);
                (!on_branch)
                    .then(|| Merge::Left(words::resolved_elsewhere(&tree.branch, &tree.path)))
            }
            Resolved::GaveUp(reason) => {
                let mid_merge = crate::store::git::discover(&tree.path)
                    .is_some_and(|r| r.state() == git2::RepositoryState::Merge);
                Some(Merge::Left(words::resolution_gave_up(
                    target, &reason, &tree.path, mid_merge,
                )))
            }
            Resolved::Interrupted => Some(Merge::Interrupted(words::resolution_interrupted(
                target, &tree.path,
            ))),
            Resolved::Failed(why) => Some(Merge::Left(words::resolution_failed(&why, &tree.path))),
        }
    }

    /// Removes a merged task's worktree unless work is uncommitted there; the words for
    /// a kept one.
    fn remove_worktree(&mut self, name: &str, tree: Option<&Worktree>) -> Option<String> {
        let tree = tree?;
        let files = holdings::uncommitted(&tree.path);
        if !files.is_empty() {
            return Some(words::worktree_kept(files.len()));
        }
        match worktree::remove(&self.project.root, name) {
            Ok(()) => None,
            Err(err) => Some(format!("its worktree could not be removed: {err:#}")),
        }
    }

    /// One line of what the queue is doing (a JSON note with `--json`).
    fn tell(&mut self, name: &str, text: &str) {
        if self.args.json {
            let event = json!({"event": "note", "task": name, "phase": "merge", "text": text});
            let _ = writeln!(self.out, "{event}");
        } else {
            let _ = writeln!(self.out, "[{name}] {text}");
        }
    }

    /// A resolution loop's event: forwarded with `--json`, a line per iteration else.
    fn tell_event(&mut self, name: &str, event: &LoopEvent) {
        if self.args.json {
            if let Ok(mut value) = serde_json::to_value(event) {
                value["task"] = json!(name);
                value["phase"] = json!("merge");
                let _ = writeln!(self.out, "{value}");
            }
            return;
        }
        if let LoopEvent::IterationFinished {
            stage,
            iteration,
            outcome,
            detail,
            ..
        } = event
        {
            let _ = writeln!(
                self.out,
                "[{name}] {stage} {iteration} ({}): {detail}",
                outcome.words()
            );
        }
    }
}

/// The repository's merge-queue lock (in its git folder), taken without waiting.
fn queue_lock(project: &Project) -> Result<pagent_door::files::Lock, String> {
    let repo = crate::store::git::discover(&project.root)
        .ok_or_else(|| "not merged: no git repository".to_owned())?;
    let git_dir = pagent_door::files::canonical_dir(repo.commondir())
        .and_then(|dir| pagent_door::files::Dir::open(&dir).map_err(std::io::Error::other))
        .map_err(|e| format!("not merged: cannot open the git folder: {e}"))?;
    git_dir
        .lock(Path::new("pagent-merge.lock"), std::time::Duration::ZERO)
        .map_err(|err| match err {
            pagent_door::files::DoorError::Busy(..) => {
                words::another_queue(&crate::store::git::work_tree(&repo).unwrap_or_default())
            }
            other => format!("not merged: cannot take the merge lock: {other}"),
        })
}

/// Commits of `task_tip` that `target_tip` does not have.
fn commits_in(repo: &git2::Repository, target_tip: Oid, task_tip: Oid) -> usize {
    repo.graph_ahead_behind(task_tip, target_tip)
        .map_or(0, |(ahead, _)| ahead)
}

fn short(id: &str) -> String {
    id.chars().take(10).collect()
}

fn same_folder(a: &Path, b: &Path) -> bool {
    let canonical = |p: &Path| pagent_door::files::canonical(p).unwrap_or_else(|_| p.to_path_buf());
    canonical(a) == canonical(b)
}

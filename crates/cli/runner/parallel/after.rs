//! Tasks that wait for others: a plan's stories that depend on other stories
//! (`Task::after`). A waiting task starts once every task it waits for completed (in this
//! run or an earlier one), and never when one of them did not; its branch then starts
//! from their work (their branches' tips, merged when there are several), so the story
//! builds on what it depends on instead of redoing it.

use git2::{BranchType, Commit, Repository, Signature};

use super::plan::merged_commit;
use super::table::{Row, RowState};
use crate::store::project::Project;

/// For each task, the tasks it waits for (indices into the rows).
pub(super) struct Waits(Vec<Vec<usize>>);

/// Whether a waiting task may start now.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Readiness {
    Ready,
    Wait,
    /// One of the tasks it waits for ended without completing: the words for its row.
    Never(String),
}

impl Waits {
    pub(super) fn of(rows: &[Row]) -> Waits {
        let index = |name: &String| rows.iter().position(|r| &r.task.name == name);
        Waits(
            rows.iter()
                .map(|row| row.task.after.iter().filter_map(index).collect())
                .collect(),
        )
    }

    /// The names of the tasks `i` waits for.
    pub(super) fn names<'a>(&self, i: usize, rows: &'a [Row]) -> Vec<&'a str> {
        self.0[i]
            .iter()
            .map(|&d| rows[d].task.name.as_str())
            .collect()
    }

    pub(super) fn readiness(&self, i: usize, rows: &[Row]) -> Readiness {
        let mut ready = Readiness::Ready;
        for &d in &self.0[i] {
            let how = match rows[d].state {
                RowState::Complete => continue,
                RowState::Queued | RowState::Running => {
                    ready = Readiness::Wait;
                    continue;
                }
                RowState::GaveUp => "gave up",
                RowState::Failed => "failed",
                RowState::Interrupted => "was interrupted",
                RowState::NotStarted | RowState::Blocked => "did not start",
            };
            return Readiness::Never(format!(
                "not started: it waits for {}, which {how}",
                rows[d].task.name
            ));
        }
        ready
    }
}

/// Makes the branch `pagent/NAME` of a task that waits for `after` start from their
/// work, unless it exists already (a resumed or restarted task keeps its own). Their
/// branches' tips, less those already merged home or contained in another; several are
/// merged into one commit, and a conflict between them is the row's words instead.
pub(super) fn start_branch(project: &Project, name: &str, after: &[&str]) -> Result<(), String> {
    let Some(repo) = crate::store::git::discover(&project.root) else {
        return Ok(());
    };
    let branch = format!("pagent/{name}");
    if after.is_empty() || repo.find_branch(&branch, BranchType::Local).is_ok() {
        return Ok(());
    }
    let tips = tips(&repo, project, after);
    let Some((first, rest)) = tips.split_first() else {
        return Ok(());
    };
    let mut base = first.clone();
    for tip in rest {
        base = merged(&repo, &base, tip).map_err(|why| {
            format!(
                "not started: the branches of {} (which it waits for) {why}; merge them (--merge-only), then run it again",
                after.join(" and ")
            )
        })?;
    }
    repo.branch(&branch, &base, false)
        .map(drop)
        .map_err(|err| format!("not started: cannot create its branch {branch}: {err}"))
}

/// The tips of the branches `after`, without one merged home already or contained in
/// another.
fn tips<'r>(repo: &'r Repository, project: &Project, after: &[&str]) -> Vec<Commit<'r>> {
    let found: Vec<Commit<'r>> = after
        .iter()
        .filter(|dep| merged_commit(project, dep).is_none())
        .filter_map(|dep| {
            repo.find_branch(&format!("pagent/{dep}"), BranchType::Local)
                .ok()?
                .get()
                .peel_to_commit()
                .ok()
        })
        .collect();
    found
        .iter()
        .enumerate()
        .filter(|(i, tip)| {
            !found.iter().enumerate().any(|(j, other)| {
                (other.id() == tip.id() && j < *i)
                    || repo
                        .graph_descendant_of(other.id(), tip.id())
                        .unwrap_or(false)
            })
        })
        .map(|(_, tip)| tip.clone())
        .collect()
}

/// A commit joining `ours` and `theirs`, when they merge without a conflict.
fn merged<'r>(
    repo: &'r Repository,
    ours: &Commit<'r>,
    theirs: &Commit<'r>,
) -> Result<Commit<'r>, String> {
    let mut index = repo
        .merge_commits(ours, theirs, None)
        .map_err(|err| format!("cannot be merged ({err})"))?;
    if index.has_conflicts() {
        return Err("conflict".to_owned());
    }
    let tree = index
        .write_tree_to(repo)
        .and_then(|id| repo.find_tree(id))
        .map_err(|err| format!("cannot be merged ({err})"))?;
    let signature = repo
        .signature()
        .or_else(|_| Signature::now("pagent", "pagent@localhost"))
        .map_err(|err| format!("cannot be merged ({err})"))?;
    let id = repo
        .commit(
            None,
            &signature,
            &signature,
            "pagent: the work of the stories this one depends on",
            &tree,
            &[ours, theirs],
        )
        .map_err(|err| format!("cannot be merged ({err})"))?;
    repo.find_commit(id)
        .map_err(|err| format!("cannot be merged ({err})"))
}

//! Every sentence the merge queue says: why a task was left unmerged (each naming the
//! folder to act in), what it is doing, and the merge commit's message. One place, so the
//! wording is reviewed in the summary's snapshots.

use std::path::Path;

use super::super::table::RowState;
use crate::setup::tasks::Task;

/// The line before the merge queue's own lines.
pub(in crate::runner::parallel) const HEADING: &str =
    "Merging the completed tasks, one at a time, in task order:";

/// A task `--merge-only` does not run: its row.
pub(in crate::runner::parallel) fn not_run(interrupted: bool) -> (RowState, String) {
    if interrupted {
        (
            RowState::Interrupted,
            "interrupted in an earlier run; not resumed (--merge-only)".to_owned(),
        )
    } else {
        (RowState::NotStarted, "not run (--merge-only)".to_owned())
    }
}

pub(super) fn not_completed(outcome: &str) -> String {
    format!("not merged: its loop did not complete ({outcome})")
}

pub(super) fn branch_gone(branch: &str, root: &Path) -> String {
    format!(
        "not merged: the branch {branch} no longer exists in {}",
        root.display()
    )
}

pub(super) fn no_target(root: &Path) -> String {
    format!(
        "not merged: no branch to merge into (HEAD is detached in {}); name one with --into BRANCH",
        root.display()
    )
}

pub(super) fn target_gone(target: &str, root: &Path) -> String {
    format!(
        "not merged: the branch {target} does not exist in {}",
        root.display()
    )
}

pub(super) fn target_elsewhere(target: &str, at: &Path) -> String {
    format!(
        "not merged: {target} is checked out in the worktree {}; pagent merges only into the main checkout's branch or one checked out nowhere (switch that worktree to another branch, or name another with --into)",
        at.display()
    )
}

pub(super) fn target_dirty(target: &str, root: &Path, why: &str) -> String {
    format!(
        "not merged: {target} is checked out in {} and {why}; pagent merges only into a clean checkout and never touches your changes: commit or stash them there (`git stash`), then run the same command again",
        root.display()
    )
}

pub(super) fn uncommitted(count: usize, tree: &Path) -> String {
    format!(
        "not merged: {count} file{} in {} {} not committed (a run with --no-checkpoint?); commit {} there, then run the same command again",
        if count == 1 { "" } else { "s" },
        tree.display(),
        if count == 1 { "is" } else { "are" },
        if count == 1 { "it" } else { "them" }
    )
}

pub(super) fn conflicts_without_worktree(target: &str, files: &[String]) -> String {
    format!(
        "not merged: it conflicts with {target} ({}) and its worktree is gone, so no agent can resolve it; merge it by hand",
        files.join(", ")
    )
}

pub(super) fn resolving(target: &str, files: &[String], tree: &Path) -> String {
    format!(
        "conflicts with {target} in {}; resolving them with the agent in {}",
        files.join(", "),
        tree.display()
    )
}

pub(super) fn resolution_gave_up(
    target: &str,
    reason: &str,
    tree: &Path,
    mid_merge: bool,
) -> String {
    let left = if mid_merge {
        format!(
            "{} is left mid-merge as the agent left it: finish the merge there and commit, or undo it with `git -C {} merge --abort`",
            tree.display(),
            tree.display()
        )
    } else {
        format!("{} is left as the agent left it", tree.display())
    };
    format!(
        "not merged: resolving its conflicts with {target} gave up ({reason}); {left}; run the same command with --force to let the agent try again"
    )
}

pub(super) fn resolution_failed(why: &str, tree: &Path) -> String {
    format!(
        "not merged: the resolution loop in {} failed: {why}",
        tree.display()
    )
}

pub(super) fn resolution_interrupted(target: &str, tree: &Path) -> String {
    format!(
        "interrupted while resolving its conflicts with {target}: {} is mid-merge; run the same command again to continue",
        tree.display()
    )
}

pub(super) fn resolved_elsewhere(branch: &str, tree: &Path) -> String {
    format!(
        "not merged: the resolution was committed, but not on {branch} (look at `git -C {} log`)",
        tree.display()
    )
}

pub(super) fn kept_moving(target: &str) -> String {
    format!("not merged: {target} kept moving while pagent merged; run the same command again")
}

pub(super) fn another_queue(root: &Path) -> String {
    format!(
        "not merged: another `pagent parallel` is merging in {} now; run the same command again when it is done",
        root.display()
    )
}

pub(super) fn not_reached() -> String {
    "not merged: stopped by a signal before its turn; run the same command again".to_owned()
}

pub(super) fn worktree_kept(count: usize) -> String {
    format!(
        "its worktree is kept: {count} file{} there {} not committed",
        if count == 1 { "" } else { "s" },
        if count == 1 { "is" } else { "are" }
    )
}

/// The merge commit's message: the task's first line as the subject, the whole task and
/// what the branch brought as the body.
pub(super) fn commit_message(
    task: &Task,
    branch: &str,
    commits: usize,
    resolved: Option<u64>,
) -> String {
    let first = task.task.lines().next().unwrap_or("").trim();
    let subject: String = if first.chars().count() > 60 {
        first.chars().take(59).collect::<String>() + "…"
    } else {
        first.to_owned()
    };
    let mut message = format!(
        "Merge {branch}: {subject}\n\npagent parallel's task {}:\n\n{}\n\n{} commit{} from {branch}",
        task.name,
        task.task.trim(),
        commits,
        if commits == 1 { "" } else { "s" },
    );
    match resolved {
        Some(n) => message.push_str(&format!(
            "; conflicts resolved by the agent in {n} iteration{}.\n",
            if n == 1 { "" } else { "s" }
        )),
        None => message.push_str(".\n"),
    }
    message
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every sentence of the queue, whole, so a wording change is a reviewed diff.
    #[test]
    fn every_sentence_of_the_merge_queue() {
        let root = Path::new("/home/me/app");
        let tree = Path::new("/home/me/app/.pagent/worktrees/gamma");
        let files = ["a.txt".to_owned(), "b.txt".to_owned()];
        let task = Task {
            name: "gamma".into(),
            task: "Fix the login bug\nand say why.".into(),
            promise: None,
            max_iterations: None,
            check: None,
            after: Vec::new(),
            story: None,
        };
        let lines = [
            HEADING.to_owned(),
            not_run(true).1,
            not_run(false).1,
            not_completed("gave up"),
            branch_gone("pagent/gamma", root),
            no_target(root),
            target_gone("release", root),
            target_elsewhere("release", Path::new("/home/me/release")),
            target_dirty("main", root, "it has uncommitted changes (a.txt)"),
            uncommitted(1, tree),
            uncommitted(3, tree),
            conflicts_without_worktree("main", &files),
            resolving("main", &files, tree),
            resolution_gave_up("main", "used all 10 iterations", tree, true),
            resolution_gave_up("main", "used all 10 iterations", tree, false),
            resolution_failed("claude is not on PATH", tree),
            resolution_interrupted("main", tree),
            resolved_elsewhere("pagent/gamma", tree),
            kept_moving("main"),
            another_queue(root),
            not_reached(),
            worktree_kept(2),
            commit_message(&task, "pagent/gamma", 1, None),
            commit_message(&task, "pagent/gamma", 3, Some(2)),
        ];
        insta::assert_snapshot!(lines.join("\n---\n"));
    }
}

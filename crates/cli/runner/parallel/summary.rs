//! The words at the end of `pagent parallel`: per task, how its loop ended and what its
//! branch holds (commits, files, work left uncommitted, the worktree's folder); with
//! `--merge`, what merged where and what was left and why; and the next steps, each
//! naming the folder it applies to. With `--json`, the same as one object.
//!
//! Every path is absolute and every hint says where to run it, so a summary read later,
//! from another folder or relayed by a model, is still right.

use std::io::Write;
use std::path::Path;

use serde_json::{Value, json};

use super::holdings::Holdings;
use super::merge::Merge;
use super::table::{Row, RowState, RowUsage};
use crate::cli::ui::Style;

/// Everything the summary tells, per task in order.
pub(super) struct Report<'a> {
    pub rows: &'a [Row],
    pub holdings: &'a [Holdings],
    /// With `--merge`: each task's merge.
    pub merges: Option<&'a [Merge]>,
    /// Where the command ran: "the same command again" is run there.
    pub cwd: &'a Path,
    /// The repository's work tree.
    pub root: &'a Path,
}

pub(super) fn print(report: &Report<'_>, style: Style, json: bool, out: &mut dyn Write) {
    if json {
        let _ = writeln!(out, "{}", as_json(report));
        return;
    }
    let _ = out.write_all(as_text(report, style).as_bytes());
}

/// The summary for a person.
pub(super) fn as_text(report: &Report<'_>, style: Style) -> String {
    let rows = report.rows;
    let width = rows
        .iter()
        .map(|r| r.task.name.chars().count())
        .max()
        .unwrap_or(4)
        .max(5);
    let mut text = format!(
        "\n{}\n",
        style.bold(&format!(
            "{:<width$}  {:<11} {:>10}  usage",
            "task", "outcome", "iterations"
        ))
    );
    let indent = " ".repeat(width + 2);
    for (i, row) in rows.iter().enumerate() {
        text.push_str(&format!(
            "{:<width$}  {:<11} {:>10}  {}\n",
            row.task.name,
            row.state.as_str(),
            row.iterations,
            row.usage.shown()
        ));
        if !row.detail.is_empty() {
            text.push_str(&format!("{indent}{}\n", row.detail));
        }
        if let Some(held) = report.holdings.get(i) {
            text.push_str(&format!("{indent}{}\n", holds_words(held)));
            if let Some(path) = &held.worktree {
                text.push_str(&format!("{indent}worktree {}\n", path.display()));
            }
        }
    }
    let iterations: u64 = rows.iter().map(|r| r.iterations).sum();
    text.push_str(&format!(
        "{:<width$}  {:<11} {:>10}  {}\n",
        "total",
        "",
        iterations,
        RowUsage::total(rows).shown()
    ));
    if let Some(merges) = report.merges {
        text.push_str(&format!("\n{}\n", style.bold("merge")));
        for (row, merge) in rows.iter().zip(merges) {
            text.push_str(&format!(
                "{:<width$}  {}\n",
                row.task.name,
                merge_words(merge)
            ));
        }
    }
    let hints = hints(report);
    if !hints.is_empty() {
        text.push('\n');
        for hint in hints {
            text.push_str(&format!("{hint}\n"));
        }
    }
    text
}

/// What a branch holds, in a few words.
fn holds_words(held: &Holdings) -> String {
    let branch = &held.branch;
    if !held.exists {
        return format!("{branch}: the branch does not exist");
    }
    let uncommitted = match held.uncommitted {
        0 => String::new(),
        1 => "1 file uncommitted in its worktree".to_owned(),
        n => format!("{n} files uncommitted in its worktree"),
    };
    let target = held.target.as_deref().unwrap_or("its target");
    let committed = match (held.commits, held.files) {
        (0, _) if !uncommitted.is_empty() => format!("nothing committed; {uncommitted}"),
        (0, _) if held.worktree.is_none() => format!("everything in it is in {target}"),
        (0, _) => "nothing committed yet".to_owned(),
        (commits, files) => {
            let mut words = format!(
                "{commits} commit{} ahead of {target}, {files} file{} changed",
                if commits == 1 { "" } else { "s" },
                if files == 1 { "" } else { "s" },
            );
            if !uncommitted.is_empty() {
                words.push_str(&format!("; {uncommitted}"));
            }
            words
        }
    };
    format!("{branch}: {committed}")
}

fn merge_words(merge: &Merge) -> String {
    let kept = |kept: &Option<String>| match kept {
        Some(why) => format!("; {why}"),
        None => "; worktree removed".to_owned(),
    };
    match merge {
        Merge::Merged {
            into,
            commit,
            resolved: None,
            kept: k,
        } => format!("merged into {into} as {commit}{}", kept(k)),
        Merge::Merged {
            into,
            commit,
            resolved: Some(n),
            kept: k,
        } => format!(
            "merged into {into} as {commit}, after the agent resolved its conflicts in {n} iteration{}{}",
            if *n == 1 { "" } else { "s" },
            kept(k)
        ),
        Merge::UpToDate { into, kept: k } => {
            format!(
                "nothing to merge: {into} already has its commits{}",
                kept(k)
            )
        }
        Merge::Earlier { commit } => format!("merged by an earlier run (as {commit})"),
        Merge::Left(why) | Merge::Interrupted(why) => why.clone(),
    }
}

/// The next steps, each naming the folder it applies to.
fn hints(report: &Report<'_>) -> Vec<String> {
    let cwd = report.cwd.display();
    let names = |pick: &dyn Fn(usize, &Row) -> bool| -> Vec<String> {
        report
            .rows
            .iter()
            .enumerate()
            .filter(|(i, r)| pick(*i, r))
            .map(|(_, r)| r.task.name.clone())
            .collect()
    };
    let mut hints = Vec::new();
    let unfinished = names(&|_, r| {
        matches!(
            r.state,
            RowState::Interrupted | RowState::NotStarted | RowState::Queued | RowState::Failed
        )
    });
    let interrupted_merges = report
        .merges
        .is_some_and(|m| m.iter().any(|m| matches!(m, Merge::Interrupted(_))));
    if !unfinished.is_empty() || interrupted_merges {
        let what = if unfinished.is_empty() {
            "the merge".to_owned()
        } else {
            unfinished.join(", ")
        };
        hints.push(format!(
            "To resume {what}: run the same command again in {cwd} (--force starts every task over)."
        ));
    }
    let unmerged = names(&|i, r| {
        r.state == RowState::Complete
            && report.merges.is_none()
            && report
                .holdings
                .get(i)
                .is_some_and(|h| h.exists && h.commits > 0)
    });
    if let Some(first) = unmerged.first() {
        let held = &report.holdings[report
            .rows
            .iter()
            .position(|r| &r.task.name == first)
            .unwrap_or(0)];
        let target = held.target.as_deref().unwrap_or("HEAD");
        hints.push(format!(
            "To review a branch: git -C {} log -p {target}..{}",
            report.root.display(),
            held.branch
        ));
        hints.push(format!(
            "To merge {} into {target}: run the same command with --merge-only in {cwd}.",
            unmerged.join(", ")
        ));
    }
    hints
}

/// The summary as one JSON object (`{"event": "summary", ...}`).
pub(super) fn as_json(report: &Report<'_>) -> Value {
    let tasks: Vec<Value> = report
        .rows
        .iter()
        .enumerate()
        .map(|(i, r)| {
            let held = report.holdings.get(i).cloned().unwrap_or_default();
            let mut task = json!({
                "task": r.task.name,
                "outcome": r.state.as_str(),
                "iterations": r.iterations,
                "branch": format!("pagent/{}", r.task.name),
                "detail": r.detail,
                "usage": r.usage.json(),
                "branch_exists": held.exists,
                "target": held.target,
                "commits": held.commits,
                "files_changed": held.files,
                "uncommitted": held.uncommitted,
                "worktree": held.worktree,
            });
            if let Some(merge) = report.merges.and_then(|m| m.get(i)) {
                task["merge"] = merge_json(merge);
            }
            task
        })
        .collect();
    json!({
        "event": "summary",
        "tasks": tasks,
        "total": RowUsage::total(report.rows).json(),
        "hints": hints(report),
    })
}

fn merge_json(merge: &Merge) -> Value {
    let mut value = json!({"outcome": merge.key(), "detail": merge_words(merge)});
    match merge {
        Merge::Merged {
            into,
            commit,
            resolved,
            kept,
        } => {
            value["into"] = json!(into);
            value["commit"] = json!(commit);
            value["resolved_iterations"] = json!(resolved);
            value["worktree_kept"] = json!(kept.is_some());
        }
        Merge::UpToDate { into, kept } => {
            value["into"] = json!(into);
            value["worktree_kept"] = json!(kept.is_some());
        }
        Merge::Earlier { commit } => value["commit"] = json!(commit),
        Merge::Left(_) | Merge::Interrupted(_) => {}
    }
    value
}

//! The prompt of `pagent parallel --merge`'s resolution loop: what an agent reads when a
//! task's branch does not merge cleanly into the target.

use super::templates::MERGE;

/// What the resolution prompt is filled with.
#[derive(Debug, Clone, Copy)]
pub struct MergeFill<'a> {
    /// The task's branch, being merged.
    pub branch: &'a str,
    /// The branch merged into, and the commit it was at.
    pub target: &'a str,
    pub target_commit: &'a str,
    /// The paths git left conflicted.
    pub conflicted: &'a [String],
    /// The command that must pass after the merge, if any.
    pub check: Option<&'a str>,
    /// The task's own text.
    pub task: &'a str,
}

/// The resolution prompt, filled in (the task's text last, so nothing in it is taken for
/// a placeholder; a `{{story}}` in it is spaced out, so no later pass fills it either).
pub fn prompt(fill: &MergeFill) -> String {
    let conflicts = if fill.conflicted.is_empty() {
        "(none left in the index: the merge may already be committed; check the files for markers)"
            .to_owned()
    } else {
        fill.conflicted
            .iter()
            .map(|p| format!("- {p}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    let (check_step, check_short) = match fill.check {
        Some(line) => (
            format!("4. Run `{line}` and make it pass without weakening it.\n"),
            format!(", and `{line}` passing"),
        ),
        None => (String::new(), String::new()),
    };
    let commit: String = fill.target_commit.chars().take(10).collect();
    MERGE
        .replace("{{branch}}", fill.branch)
        .replace("{{target_commit}}", &commit)
        .replace("{{target}}", fill.target)
        .replace("{{conflicts}}", &conflicts)
        .replace("{{check_short}}", &check_short)
        .replace("{{check}}", &check_step)
        .replace("{{task}}", &fill.task.replace("{{story}}", "{{ story }}"))
}

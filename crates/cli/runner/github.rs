//! GitHub through the user's own `gh`: the issues an `--issues` loop works through, a
//! comment on an issue when its story is done (`--comment-progress`), and the pull
//! request `--pr` opens at the end.
//!
//! pagent holds no token and calls no API itself: `gh` runs with the user's login and
//! configuration, in the project, as the user would run it. Every call goes through
//! [`gh`], the one place this binary starts it, so how it is started (which `gh`, with
//! which environment) is decided in one function: by `repo_git`, since gh runs git, after
//! an agent ran only while the repository's git configuration is what it was when the
//! loop started. Every failure carries gh's own words.

use std::time::Duration;

use anyhow::{Context, bail};
use pagent_engine::stories::Issue;

use crate::runner::repo_git::RepoGit;

/// Issues asked for at most (a search that finds more is cut, and says so).
pub const MAX_ISSUES: usize = 100;

/// How long one `gh` call may take (it talks to the network).
const GH_TIMEOUT: Duration = Duration::from_secs(300);

/// What is kept of gh's output: a hundred issues with long bodies fit, and more is cut
/// (the JSON then fails to parse, which says so) rather than held in memory.
const GH_KEEP: usize = 8 * 1024 * 1024;

/// Runs `gh ARGS` in the repository and returns its stdout: the user's own `gh`, found
/// on the cleaned `PATH` (never a `./gh` of the project), started through the process
/// door.
fn gh(git: &RepoGit<'_>, args: &[&str]) -> anyhow::Result<String> {
    let launch = git.launch("gh").map_err(|err| match err.downcast_ref() {
        Some(crate::process::ProgramError::NotFound(_)) => {
            err.context("cannot run gh (the GitHub CLI); is it installed and on PATH?")
        }
        _ => err,
    })?;
    let out = launch
        .args(args)
        .output(GH_TIMEOUT, GH_KEEP)
        .map_err(|why| anyhow::anyhow!("cannot run gh: {why}"))?;
    if !out.success() {
        let words: Vec<&str> = args.iter().take(2).copied().collect();
        let how = if out.timed_out {
            format!("timed out after {} s", GH_TIMEOUT.as_secs())
        } else {
            out.stderr.trim().to_owned()
        };
        bail!("gh {} failed: {how}", words.join(" "));
    }
    Ok(out.stdout)
}

/// Issue numbers, when `query` is nothing but numbers ("12,15 #18").
fn numbers(query: &str) -> Option<Vec<u64>> {
    let words: Vec<&str> = query
        .split([',', ' '])
        .map(|w| w.trim().trim_start_matches('#'))
        .filter(|w| !w.is_empty())
        .collect();
    if words.is_empty() {
        return None;
    }
    words.iter().map(|w| w.parse().ok()).collect()
}

/// The open issues `query` finds (a search, or numbers), and a note when the search
/// found more than [`MAX_ISSUES`].
pub fn issues(git: &RepoGit<'_>, query: &str) -> anyhow::Result<(Vec<Issue>, Option<String>)> {
    if let Some(numbers) = numbers(query) {
        let mut found = Vec::new();
        for number in numbers {
            let text = gh(
                git,
                &[
                    "issue",
                    "view",
                    &number.to_string(),
                    "--json",
                    "number,title,body",
                ],
            )?;
            let issue: Issue = serde_json::from_str(&text)
                .with_context(|| format!("gh issue view {number} printed no issue"))?;
            found.push(issue);
        }
        return Ok((found, None));
    }
    let limit = (MAX_ISSUES + 1).to_string();
    let text = gh(
        git,
        &[
            "issue",
            "list",
            "--state",
            "open",
            "--search",
            query,
            "--limit",
            &limit,
            "--json",
            "number,title,body",
        ],
    )?;
    let mut found: Vec<Issue> =
        serde_json::from_str(&text).context("gh issue list printed no list of issues")?;
    let note = (found.len() > MAX_ISSUES).then(|| {
        format!("the search {query:?} finds more than {MAX_ISSUES} issues; this loop takes the first {MAX_ISSUES}")
    });
    found.sort_by_key(|i| i.number);
    found.truncate(MAX_ISSUES);
    Ok((found, note))
}

/// Comments `body` on issue `number`.
pub fn comment(git: &RepoGit<'_>, number: u64, body: &str) -> anyhow::Result<()> {
    gh(
        git,
        &["issue", "comment", &number.to_string(), "--body", body],
    )
    .map(|_| ())
}

/// `gh pr create` for `branch`; returns what gh printed (the pull request's address).
pub fn open_pr(git: &RepoGit<'_>, branch: &str, title: &str, body: &str) -> anyhow::Result<String> {
    let out = gh(
        git,
        &[
            "pr", "create", "--head", branch, "--title", title, "--body", body,
        ],
    )?;
    Ok(out.trim().to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_are_told_from_a_search() {
        assert_eq!(numbers("12,15 #18"), Some(vec![12, 15, 18]));
        assert_eq!(numbers(" 7 "), Some(vec![7]));
        assert_eq!(numbers("label:ready"), None);
        assert_eq!(numbers("12 is:open"), None);
        assert_eq!(numbers(" , "), None);
    }
}

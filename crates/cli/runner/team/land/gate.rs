//! The gate: the team's checks, run on the exact tree a landing would push. The story's
//! worktree is checked out at the landing commit (detached), every check runs there with
//! `sh -c` through the process door (a time limit, its output's tail kept, stopped at
//! once when the team is cancelled or the claim lost), and the worktree is put back on
//! the story's branch afterwards, whatever happened. A contained worker's gate runs
//! inside pagent's walls (`walls`), writable in the story's worktree and the clone's git
//! folder only, like the story's loop and its checks.

use std::path::Path;
use std::time::Duration;

use git2::build::CheckoutBuilder;
use git2::{Oid, Repository};

use pagent_door::process::{Containment, Launch, Ran, RunLimits, SearchPath};

/// How long one check may take.
const CHECK_TIMEOUT: Duration = Duration::from_secs(30 * 60);
/// The tail of a check's output kept for the agent.
const KEEP: usize = 16 * 1024;

/// How the gate went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Gate {
    Passed,
    Failed {
        check: String,
        output: String,
    },
    /// Stopped before the end (cancel, a lost claim, Ctrl-C).
    Stopped,
    /// The worktree could not be set to the landing commit.
    Broken(String),
}

/// Runs `checks` in `tree` (a worktree of the story's `branch`) at `commit`, inside
/// `walls` when there are some.
pub fn run(
    tree: &Path,
    branch: &str,
    commit: Oid,
    checks: &[String],
    (search, walls): (&SearchPath, Option<&Containment>),
    keep_going: &mut dyn FnMut() -> bool,
) -> Gate {
    if checks.is_empty() {
        return Gate::Passed;
    }
    let Some(repo) = crate::store::git::discover(tree) else {
        return Gate::Broken(format!("{} is not a git worktree", tree.display()));
    };
    if let Err(err) = check_out(&repo, commit) {
        put_back(&repo, branch);
        return Gate::Broken(format!(
            "cannot check out the landing commit: {}",
            err.message()
        ));
    }
    // The worktree and the git folder its commits go into: the story's loop's walls.
    let walls = walls.map(|w| w.clone().writable(tree).writable(repo.commondir()));
    let gate = run_checks(tree, checks, (search, walls.as_ref()), keep_going);
    put_back(&repo, branch);
    gate
}

fn run_checks(
    tree: &Path,
    checks: &[String],
    (search, walls): (&SearchPath, Option<&Containment>),
    keep_going: &mut dyn FnMut() -> bool,
) -> Gate {
    for check in checks {
        let mut launch = Launch::shell(check, tree, search);
        if let Some(walls) = walls {
            launch = launch.contained(walls.clone());
        }
        let ran = launch.run(
            RunLimits {
                timeout: CHECK_TIMEOUT,
                keep: KEEP,
            },
            keep_going,
        );
        match ran {
            Ran::Exited { code: Some(0), .. } => {}
            Ran::Exited { output, code } => {
                let how = code.map_or("killed by a signal".to_owned(), |c| {
                    format!("exit code {c}")
                });
                return Gate::Failed {
                    check: check.clone(),
                    output: format!("{output}\n({how})"),
                };
            }
            Ran::TimedOut { output } => {
                return Gate::Failed {
                    check: check.clone(),
                    output: format!(
                        "{output}\n(stopped after {} minutes)",
                        CHECK_TIMEOUT.as_secs() / 60
                    ),
                };
            }
            Ran::NotStarted(why) => {
                return Gate::Failed {
                    check: check.clone(),
                    output: format!("it could not start: {why}"),
                };
            }
            Ran::Stopped => return Gate::Stopped,
        }
    }
    Gate::Passed
}

fn check_out(repo: &Repository, commit: Oid) -> Result<(), git2::Error> {
    let object = repo.find_object(commit, None)?;
    repo.checkout_tree(&object, Some(CheckoutBuilder::new().force()))?;
    repo.set_head_detached(commit)
}

/// The worktree back on its branch, its files as the branch has them.
fn put_back(repo: &Repository, branch: &str) {
    if repo.set_head(&format!("refs/heads/{branch}")).is_ok() {
        let _ = repo.checkout_head(Some(CheckoutBuilder::new().force()));
    }
}

//! What each task needs on this run of `pagent parallel`: a second run with the same
//! tasks file resumes the work instead of failing on it.
//!
//! A task's record is what git and its worktree already hold, nothing kept beside them:
//!
//! - its worktree's loop state: active (interrupted by Ctrl-C, a crash, a closed
//!   terminal) means the loop continues where it stopped; complete, gave up or cancelled
//!   means the loop ended and is left alone; a conflict resolution there (the merge
//!   queue's) means the task itself completed;
//! - no worktree, and the branch marked merged (`branch.pagent/NAME.pagentMerged` in the
//!   repository's config, which no clone can plant): merged by an earlier run;
//! - nothing at all: a new task.
//!
//! `--force` starts every loop over (on the branch as it is, its commits kept), merged
//! tasks excepted: what is merged is never redone.

use pagent_engine::{State, Status};

use crate::cli::env::Env;
use crate::runner::loop_event::UsageFigures;
use crate::runner::worktree;
use crate::store::project::Project;
use crate::store::{self, Ownership};

use super::child::Mode;
use super::tasks::Task;

/// The workflow name of a conflict resolution loop (set up by the merge queue).
pub const RESOLVE_WORKFLOW: &str = "merge";

/// What a task needs now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Step {
    /// Run its loop: new, resumed, or started over.
    Run(Mode),
    /// Nothing to run: its loop ended in an earlier run (or its branch is merged).
    Ended(Earlier),
}

/// How a task ended in an earlier run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Earlier {
    pub status: Status,
    pub iterations: u64,
    pub reason: String,
    pub usage: Option<UsageFigures>,
    /// Its branch was merged (and its worktree removed).
    pub merged: bool,
}

/// Each task's step, in task order.
pub(super) fn plan(project: &Project, env: &Env, tasks: &[Task], force: bool) -> Vec<Step> {
    tasks.iter().map(|t| step(project, env, t, force)).collect()
}

fn step(project: &Project, env: &Env, task: &Task, force: bool) -> Step {
    let Ok(Some(tree)) = worktree::existing(&project.root, &task.name) else {
        if merged_commit(project, &task.name).is_some() {
            return Step::Ended(Earlier {
                status: Status::Complete,
                iterations: 0,
                reason: "merged by an earlier run".into(),
                usage: None,
                merged: true,
            });
        }
        return Step::Run(Mode::Start { force });
    };
    let state = Project::at(&tree.path)
        .ok()
        .and_then(|p| own_state(&p, env));
    match state {
        // A resolution's worktree may be mid-merge: the task is done, never started over.
        Some(state) if state.workflow == RESOLVE_WORKFLOW => Step::Ended(Earlier {
            status: Status::Complete,
            iterations: 0,
            reason: "completed; its merge was under way".into(),
            usage: None,
            merged: false,
        }),
        Some(state) if force => Step::Run(Mode::Start {
            force: state.is_active(),
        }),
        Some(state) if state.is_active() => Step::Run(Mode::Resume),
        Some(state) => Step::Ended(Earlier {
            status: state.status,
            iterations: state.iterations.iter().map(|n| u64::from(*n)).sum(),
            reason: state.end_reason.clone().unwrap_or_default(),
            usage: Some(UsageFigures::of(&state.usage)),
            merged: false,
        }),
        None => Step::Run(Mode::Start { force }),
    }
}

/// The worktree's loop state, if this user set it up there (a planted one is nobody's).
pub(super) fn own_state(tree: &Project, env: &Env) -> Option<State> {
    let state = store::read_state(tree).ok().flatten()?;
    (store::ownership(tree, env.config_dir.as_deref(), &state) == Ownership::Own).then_some(state)
}

const MERGED_KEY: &str = "pagentMerged";

/// The merge commit an earlier run recorded for the task's branch.
pub(super) fn merged_commit(project: &Project, name: &str) -> Option<String> {
    let repo = crate::store::git::discover(&project.root)?;
    repo.find_branch(&format!("pagent/{name}"), git2::BranchType::Local)
        .ok()?;
    repo.config()
        .ok()?
        .get_string(&format!("branch.pagent/{name}.{MERGED_KEY}"))
        .ok()
        .filter(|id| !id.is_empty())
}

/// Records that the task's branch was merged as `commit`.
pub(super) fn mark_merged(repo: &git2::Repository, name: &str, commit: &str) -> anyhow::Result<()> {
    repo.config()?
        .set_str(&format!("branch.pagent/{name}.{MERGED_KEY}"), commit)?;
    Ok(())
}

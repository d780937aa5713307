//! A conflict resolution: the merge of the target started in the task's worktree
//! (libgit2: `MERGE_HEAD`, the conflicted index, marker lines in the files, as `git
//! merge` leaves them), a one-stage loop set up there whose exit condition is the merge
//! committed with both sides kept and no marker left (`merge_committed`) and the
//! `--check` command passing, and that loop run by a child `pagent loop` with the same
//! agent as the tasks: the same engine, retries, limits and Ctrl-C as any loop.
//!
//! The merge is started only where none is under way: a worktree left mid-merge (an
//! interrupted resolution, one that gave up, one the user began by hand) keeps its
//! partial work, and a branch that already holds the target's commit needs no merge,
//! only the loop (markers or a failing check left by an earlier attempt).

use std::sync::mpsc;
use std::time::Duration;

use anyhow::{Context, bail};
use git2::build::CheckoutBuilder;
use git2::{Oid, RepositoryState};
use pagent_engine::merge::MergeSpec;
use pagent_engine::prompt::merge::MergeFill;
use pagent_engine::{Action, Condition, Driver, SetupOptions, State, Workflow};
use serde_json::json;

use super::super::child::{Launcher, Mode, Msg};
use super::super::plan::{self, RESOLVE_WORKFLOW};
use super::Queue;
use crate::io::now;
use crate::runner::loop_event::LoopEvent;
use crate::runner::worktree::Worktree;
use crate::setup::tasks::Task;
use crate::setup::{self, Notes};
use crate::store::project::Project;
use crate::world::merge;
use pagent_door::process::signals;

/// Iterations a resolution may take (fewer when `--max-iterations` is lower).
const RESOLVE_ITERATIONS: u32 = 10;
/// How long `--check` may take.
const CHECK_TIMEOUT_SECS: u64 = 900;

/// How a resolution loop ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) enum Resolved {
    Complete { iterations: u64 },
    GaveUp(String),
    Interrupted,
    Failed(String),
}

/// Starts the merge of `target` (at `target_tip`) into the task's branch in its worktree,
/// unless one is under way or not needed, and installs the resolution loop's state there.
/// `keeping` is the branch's own work the resolution must keep.
pub(super) fn set_up(
    q: &Queue<'_>,
    task: &Task,
    tree: &Worktree,
    target: &str,
    keeping: Oid,
) -> anyhow::Result<Vec<String>> {
    let check = task.check.as_deref().or(q.args.check.as_deref());
    let settings = Resolution {
        env: q.env,
        checks: check.into_iter().collect(),
        trust: q.args.trust,
        max_iterations: q.args.max_iterations,
        budget: q.args.budget,
        task: &task.task,
        start_git: q.start_git,
    };
    // Merged from the branch itself, so the commit message the agent keeps reads
    // "Merge branch 'main'".
    start(
        &settings,
        tree,
        &format!("refs/heads/{target}"),
        target,
        keeping,
    )
}

/// What a resolution loop is set up with: the tasks' settings, the commands that must
/// pass besides the merge (`pagent parallel --check`, a team's checks), and the task's
/// text for the prompt.
#[derive(Debug, Clone)]
pub(in crate::runner) struct Resolution<'a> {
    pub env: &'a crate::cli::env::Env,
    pub checks: Vec<&'a str>,
    pub trust: bool,
    pub max_iterations: u32,
    pub budget: pagent_engine::Budget,
    pub task: &'a str,
    /// The repository's git settings when the run began (before any agent of it ran).
    pub start_git: Option<&'a crate::runner::repo_git::Settings>,
}

/// [`set_up`] for any ref to merge (`target_ref`, its name for the words `target`): a
/// local branch, or a team's shared branch as last fetched. The conflicted paths.
pub(in crate::runner) fn start(
    settings: &Resolution<'_>,
    tree: &Worktree,
    target_ref: &str,
    target: &str,
    keeping: Oid,
) -> anyhow::Result<Vec<String>> {
    let mut repo = crate::store::git::discover(&tree.path)
        .with_context(|| format!("{} is not a git worktree", tree.path.display()))?;
    let mut under_way = None;
    if repo.state() == RepositoryState::Merge {
        // A merge under way (an earlier attempt, or the user's): it is the one to finish.
        let _ = repo.mergehead_foreach(|id| {
            under_way = Some(*id);
            false
        });
    }
    let reference = repo
        .find_reference(target_ref)
        .with_context(|| format!("the branch {target} does not exist"))?;
    let theirs = repo.reference_to_annotated_commit(&reference)?;
    let target_tip = under_way.unwrap_or(theirs.id());
    match repo.state() {
        RepositoryState::Merge => {}
        RepositoryState::Clean => {
            let head = repo.head()?.peel_to_commit()?.id();
            if !merge::holds(&repo, head, target_tip) {
                let mut checkout = CheckoutBuilder::new();
                checkout
                    .safe()
                    .allow_conflicts(true)
                    .conflict_style_merge(true);
                repo.merge(&[&theirs], None, Some(&mut checkout))
                    .with_context(|| {
                        format!("cannot start merging {target} in {}", tree.path.display())
                    })?;
            }
        }
        other => bail!(
            "{} is in progress in {}; finish or abort it there first",
            merge::operation(other),
            tree.path.display()
        ),
    }
    let conflicted = merge::conflicted_paths(&repo)?;
    let spec = MergeSpec {
        merged: target_tip.to_string(),
        keeping: keeping.to_string(),
        name: target.to_owned(),
    };
    let project = Project::at(&tree.path)?;
    let mut state = resolution_state(settings, &project, &tree.branch, &spec, &conflicted)?;
    // The git settings the task's loop started with (else this run's start): the
    // resolution's agent runs after the task's, and a signed merge is compared with them.
    state.git_config = plan::own_state(&project, settings.env)
        .and_then(|s| s.git_config)
        .or_else(|| settings.start_git.cloned());
    setup::install_state(
        &project,
        &crate::store::user::UserDir::of(settings.env),
        &state,
        true,
        Action::Run,
        &mut |_: &str| {},
    )?;
    Ok(conflicted)
}

/// The spec of the resolution an earlier run set up in this worktree, so a retry keeps
/// the same branch work to keep.
pub(super) fn previous_spec(state: &State) -> Option<MergeSpec> {
    if state.workflow != RESOLVE_WORKFLOW {
        return None;
    }
    let find = |c: &Condition| match c {
        Condition::MergeCommitted(spec) => Some(spec.clone()),
        _ => None,
    };
    match &state.stages.first()?.exit_when {
        Condition::All(items) => items.iter().find_map(find),
        other => find(other),
    }
}

fn resolution_state(
    settings: &Resolution<'_>,
    project: &Project,
    branch: &str,
    spec: &MergeSpec,
    conflicted: &[String],
) -> anyhow::Result<State> {
    let mut exit_when = vec![spec.to_json()];
    for check in &settings.checks {
        exit_when.push(json!({"custom": check, "timeout": CHECK_TIMEOUT_SECS}));
    }
    let workflow = Workflow::from_json(
        &json!({"name": RESOLVE_WORKFLOW, "stages": [{"name": "resolve", "prompt": "-", "exit_when": {"all": exit_when}}]}),
        RESOLVE_WORKFLOW,
    )
    .map_err(|e| anyhow::anyhow!("--check: {e}"))?;
    let mut notes = Notes::default();
    let backpressure = setup::consented_config(
        project,
        &crate::store::user::UserDir::of(settings.env),
        None,
        settings.trust,
        &mut notes,
    )?;
    let options = SetupOptions {
        max_iterations: Some(RESOLVE_ITERATIONS.min(settings.max_iterations)),
        no_progress_limit: Some(3),
        driver: Driver::Loop,
        backpressure,
        budget: settings.budget,
        ..SetupOptions::default()
    };
    let check = (!settings.checks.is_empty()).then(|| settings.checks.join("` and `"));
    let prompt = pagent_engine::prompt::merge::prompt(&MergeFill {
        branch,
        target: &spec.name,
        target_commit: &spec.merged,
        conflicted,
        check: check.as_deref(),
        task: settings.task,
    });
    let mut state = State::new_pipeline(&workflow, vec![prompt], options, None, now());
    // Progress as every loop measures it (the tree and any plan), from the start.
    state.fingerprint = crate::world::progress_mark(project, &state);
    Ok(state)
}

/// Runs the resolution loop set up in the task's worktree to its end, telling `q`'s
/// output what it does.
pub(super) fn run(q: &mut Queue<'_>, task: &Task) -> Resolved {
    let (tx, rx) = mpsc::channel();
    let launcher = Launcher {
        exe: q.exe,
        search: q.search,
        project: q.project,
        args: q.args,
    };
    let mut child = match launcher.spawn(task, Mode::Resume, 0, &tx) {
        Ok(child) => child,
        Err(err) => return Resolved::Failed(format!("{err:#}")),
    };
    drop(tx);
    let mut stderr = String::new();
    let mut ending: Option<(u64, String)> = None;
    let mut told = false;
    loop {
        if signals::interrupted() && !told {
            child.interrupt();
            told = true;
        }
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Msg::Line(_, line)) => {
                let Ok(event) = serde_json::from_str::<LoopEvent>(&line) else {
                    continue;
                };
                q.tell_event(&task.name, &event);
                if let LoopEvent::Finished {
                    iterations, reason, ..
                } = event
                {
                    ending = Some((iterations.map_or(0, u64::from), reason));
                }
            }
            Ok(Msg::Stderr(_, line)) => {
                stderr.push_str(&line);
                if stderr.len() > 4096 {
                    let cut = stderr.len() - 4096;
                    let cut = (cut..stderr.len())
                        .find(|c| stderr.is_char_boundary(*c))
                        .unwrap_or(stderr.len());
                    stderr.drain(..cut);
                }
            }
            Ok(Msg::Exit(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {}
        }
    }
    let code = child.wait();
    let (iterations, reason) = ending.unwrap_or_default();
    match code {
        Some(0) => Resolved::Complete { iterations },
        Some(3) => Resolved::GaveUp(reason),
        Some(130) => Resolved::Interrupted,
        _ => Resolved::Failed(if reason.is_empty() {
            stderr
                .lines()
                .rfind(|l| !l.trim().is_empty())
                .unwrap_or("the loop ended without a word")
                .trim()
                .to_owned()
        } else {
            reason
        }),
    }
}

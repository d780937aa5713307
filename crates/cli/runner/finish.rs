//! How `pagent loop` ends besides its decisions: the state saved at Ctrl-C (mid-run or
//! mid-wait) so the next `pagent loop` resumes exactly there, and what a completed loop
//! does next when asked (push, open a pull request).

use pagent_engine::{Action, Decision, LogEntry, Outcome, State};

use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::now;
use crate::process::SearchPath;
use crate::runner::loop_event::Ending;
use crate::runner::pause::apply_over_pause;
use crate::runner::progress::Progress;
use crate::runner::repo_git::{Refused, RepoGit, When, refusal};
use crate::runner::watch::{ended_elsewhere, stopped_elsewhere};
use crate::runner::{github, stories, worktree};
use crate::setup::plan::LoopPlan;
use crate::store::eventlog::Event;
use crate::store::project::Project;

/// Ctrl-C while the agent ran: the state keeps the iteration's prompt.
pub(super) fn interrupted(
    project: &Project,
    env: &Env,
    state: &State,
    prompt: String,
    progress: &mut Progress,
) -> anyhow::Result<ExitStatus> {
    let mut paused = state.clone();
    paused.pending_prompt = Some(prompt);
    let outcome = Outcome {
        decision: Decision::Allow,
        write: Some(paused),
        log: Some(LogEntry {
            action: Action::Interrupted,
            stage: state.current().name.clone(),
            iteration: state.iterations[state.stage],
            detail: format!("stopped by a signal{}", resume_words(project, env)),
        }),
    };
    let logged = |entry| Event::of(entry, now(), None);
    let stderr = progress.stderr();
    if apply_over_pause(project, env, state, outcome, logged, &mut |m: &str| {
        ui::warn(stderr, m)
    })?
    .is_none()
    {
        let ended = ended_elsewhere(project, state)
            .unwrap_or_else(|| "the state changed meanwhile".to_owned());
        return Ok(stopped_elsewhere(state, &ended, progress));
    }
    progress.finished(
        state,
        Ending::Interrupted,
        &format!(
            "stopped by a signal; the state is saved{}",
            resume_words(project, env)
        ),
    );
    Ok(ExitStatus::Interrupted)
}

/// How to go on after a Ctrl-C: `, run `pagent loop` in ROOT to resume`. A loop of
/// `pagent parallel` says nothing of it: the parallel run's own summary gives the one
/// instruction that resumes every task (its rows showed a second, different one).
pub(super) fn resume_words(project: &Project, env: &Env) -> String {
    if env.parallel {
        String::new()
    } else {
        format!(
            ", run `pagent loop` in {} to resume",
            project.root.display()
        )
    }
}

/// Ctrl-C during a usage-limit wait: the wait stays in the state, so `pagent loop` goes
/// on waiting where it was.
pub(super) fn interrupted_waiting(
    project: &Project,
    env: &Env,
    state: &State,
    progress: &mut Progress,
) -> ExitStatus {
    progress.finished(
        state,
        Ending::Interrupted,
        &format!(
            "stopped by a signal while waiting for a usage limit to reset; the state is saved{}",
            resume_words(project, env)
        ),
    );
    ExitStatus::Interrupted
}

/// Push and open a pull request, as asked; any failure is reported and makes the exit
/// status a failure, though the loop itself completed.
pub(super) fn after_completion(
    project: &Project,
    env: &Env,
    branch: Option<String>,
    args: &LoopPlan,
    state: &State,
    progress: &mut Progress,
) -> ExitStatus {
    if !args.push && !args.pr {
        return ExitStatus::Success;
    }
    let branch = branch.or_else(|| {
        crate::store::git::discover(&project.root)?
            .head()
            .ok()?
            .shorthand()
            .map(str::to_owned)
    });
    let Some(branch) = branch else {
        progress.note("cannot push: the project is not on a branch");
        return ExitStatus::Failure;
    };
    let search = SearchPath::new(env.path.as_deref(), &[&project.root]);
    let git = RepoGit {
        root: &project.root,
        env,
        search: &search,
        when: When::After(vec![state.git_config.as_ref()]),
    };
    if let Err(err) = worktree::push(&git, &branch) {
        progress.note(&match err.downcast_ref::<Refused>() {
            Some(refused) => not_pushed(&branch, refused),
            None => format!("the loop completed, but pushing {branch} failed: {err:#}"),
        });
        return ExitStatus::Failure;
    }
    progress.note(&format!("pushed {branch}"));
    if args.pr {
        let title = match stories::current_plan(project, state) {
            Some((rel, _)) => format!("pagent: the stories of {}", rel.display()),
            None => format!("pagent: {}", state.workflow),
        };
        let body = stories::pr_body(project, state);
        match github::open_pr(&git, &branch, &title, &body) {
            Ok(url) => progress.note(&format!("opened a pull request: {url}")),
            Err(err) => {
                progress.note(&match err.downcast_ref::<Refused>() {
                    Some(refused) => format!(
                        "the loop completed and {branch} is pushed, but {}",
                        refusal(
                            "open the pull request",
                            refused,
                            Some(&format!("open it yourself: gh pr create --head {branch}"))
                        )
                    ),
                    None => format!("the loop completed and {branch} is pushed, but opening a pull request failed: {err:#}"),
                });
                return ExitStatus::Failure;
            }
        }
    }
    ExitStatus::Success
}

/// The push refused: what changed, and how the user pushes once they have looked.
fn not_pushed(branch: &str, refused: &Refused) -> String {
    let then = format!("push it yourself: git push -u origin {branch}");
    format!(
        "the loop completed, but {}",
        refusal(&format!("push {branch}"), refused, Some(&then))
    )
}

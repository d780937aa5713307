//! `pagent loop --stories FILE` and `--issues QUERY`: the runner's side of a stories loop
//! (the state itself is `setup::stories`, shared with the Stop hook's loop).
//!
//! - `--issues` asks `gh` for the issues once and writes them down as a plan of pagent's
//!   own, `.claude/pagent/issues.md`; the loop then works through that file like any plan.
//! - After each iteration a line goes to the `progress.md` beside the plan (where the
//!   agent keeps its own notes too), and, with `--comment-progress`, each GitHub issue
//!   whose story the iteration finished gets a comment.
//! - At the end, `--pr` opens a pull request whose body closes every issue done.

use std::path::{Path, PathBuf};

use pagent_engine::State;
use pagent_stories::{Format, Plan, issue_number, render_issues};

use crate::cli::env::Env;
use crate::io::now;
use crate::runner::github;
use crate::runner::progress::Progress;
use crate::runner::repo_git::{Refused, RepoGit, When, refusal};
use crate::setup::plan::LoopPlan;
use crate::setup::stories::{StoriesSpec, read_plan};
use crate::store::project::Project;
use pagent_door::process::SearchPath;

/// Where an `--issues` loop writes its plan (ignored by git with the rest of
/// `.claude/pagent/`).
pub const ISSUES_PLAN: &str = ".claude/pagent/issues.md";

/// What `--stories` or `--issues` asks for, the issues fetched and written down first.
pub(super) fn stories_spec(
    project: &Project,
    env: &Env,
    args: &LoopPlan,
    search: &SearchPath,
    progress: &mut Progress,
) -> anyhow::Result<Option<StoriesSpec>> {
    let (file, format) = match (&args.stories, &args.issues) {
        (Some(file), _) => (file.clone(), args.plan.format),
        (None, Some(query)) => {
            let written = write_issues_plan(project, env, search, query)?;
            if let Some(note) = &written.note {
                progress.warn(note);
            }
            progress.note(&written.summary());
            (written.path, Some(Format::Issues))
        }
        (None, None) => return Ok(None),
    };
    Ok(Some(StoriesSpec {
        file,
        format,
        checks: args.plan.checks.clone(),
        max_iterations: args.max_iterations,
        no_progress_limit: None,
        budget: args.budget,
        trust: args.trust,
        driver: pagent_engine::Driver::Loop,
        review: None,
    }))
}

/// A loop has one start, and `--check` and `--format` read its plan: what would be
/// ignored is refused before anything runs, saying what to write instead (issue 31: a
/// ralph loop given `--check` ended on its promise alone, the check never run).
pub(super) fn refuse_what_the_start_ignores(args: &LoopPlan) -> anyhow::Result<()> {
    let plan = args.stories.is_some() || args.issues.is_some();
    let plan_flags = args.plan.format.is_some() || !args.plan.checks.is_empty();
    match (args.start.as_ref().map(|s| s.name()), plan, plan_flags) {
        (Some(start), true, _) => anyhow::bail!(
            "--stories and --issues start a loop of their own: give either them or `{start}`, not both"
        ),
        (Some("ralph"), false, true) => anyhow::bail!(
            "--check and --format go with --stories or --issues: a ralph loop ends on its promise alone; to end on a command passing too, give the loop a plan (`pagent loop --stories PLAN --check COMMAND`)"
        ),
        (Some(start), false, true) => anyhow::bail!(
            "--check and --format of `pagent loop {start}` go after `{start}` (`pagent loop {start} --stories PLAN --check COMMAND`)"
        ),
        (None, false, true) => anyhow::bail!("--format and --check go with --stories or --issues"),
        _ => Ok(()),
    }
}

/// The issues `--issues` asked for, written down as the plan [`ISSUES_PLAN`].
#[derive(Debug, Clone)]
pub struct IssuesPlan {
    /// The plan file's full path.
    pub path: PathBuf,
    pub count: usize,
    /// Said when the search found more issues than are taken.
    pub note: Option<String>,
}

impl IssuesPlan {
    /// "3 issues from gh, written to .claude/pagent/issues.md"
    pub fn summary(&self) -> String {
        format!(
            "{} issue{} from gh, written to {ISSUES_PLAN}",
            self.count,
            if self.count == 1 { "" } else { "s" }
        )
    }
}

/// Asks `gh` for the issues `query` finds (through the process door, bounded in time and
/// output: [`github::issues`]) and writes them down as [`ISSUES_PLAN`] through the file
/// door: the one way `pagent loop --issues` and `pagent team start --issues` get a plan.
pub fn write_issues_plan(
    project: &Project,
    env: &Env,
    search: &SearchPath,
    query: &str,
) -> anyhow::Result<IssuesPlan> {
    let git = RepoGit {
        root: &project.root,
        env,
        search,
        when: When::BeforeAnyAgent,
    };
    let (issues, note) = github::issues(&git, query)?;
    anyhow::ensure!(!issues.is_empty(), "gh finds no open issue for {query:?}");
    project.dir().write_atomic(
        Path::new(ISSUES_PLAN),
        render_issues(query, &issues).as_bytes(),
    )?;
    Ok(IssuesPlan {
        path: project.root.join(ISSUES_PLAN),
        count: issues.len(),
        note,
    })
}

/// The plan a stories stage works through, as it is now (`None` for other loops).
pub(super) fn current_plan(project: &Project, state: &State) -> Option<(PathBuf, Plan)> {
    let (path, format) = state.current().exit_when.stories_source()?;
    let rel = PathBuf::from(path.as_str());
    let plan = read_plan(project, &rel, format).ok()?;
    Some((rel, plan))
}

/// After an iteration: a line in progress.md beside the plan, and a comment on each
/// issue whose story is done now and was not before (`before`), through `comment` when
/// asked.
pub(super) fn note_stories(
    project: &Project,
    state: &State,
    iteration: u32,
    before: Option<&Plan>,
    comment: Option<&RepoGit<'_>>,
    progress: &mut Progress,
) {
    let Some((rel, plan)) = current_plan(project, state) else {
        return;
    };
    let next = plan.next_story().map_or_else(
        || "none left".to_owned(),
        |s| format!("{}: {}", s.id, s.title),
    );
    let verb = if plan.format == Format::PrdJson {
        "pass"
    } else {
        "done"
    };
    let line = format!(
        "- {} iteration {iteration}: {} of {} stories {verb}; next: {next}\n",
        now(),
        plan.done_count(),
        plan.required_count()
    );
    let file = rel.with_file_name("progress.md");
    let header = if project.dir().kind(&file).ok().flatten().is_some() {
        ""
    } else {
        "# Progress\n\nAppend-only: pagent adds a line per iteration, the agent adds its notes.\n\n"
    };
    if let Err(err) = project
        .dir()
        .append(&file, format!("{header}{line}").as_bytes())
    {
        progress.warn(&format!("cannot append to {}: {err}", file.display()));
    }
    let Some(git) = comment.filter(|_| plan.format == Format::Issues) else {
        return;
    };
    for story in plan.stories.iter().filter(|s| s.done) {
        let was_done = before
            .and_then(|b| b.story(&story.id))
            .is_none_or(|s| s.done);
        let Some(number) = issue_number(&story.id).filter(|_| !was_done) else {
            continue;
        };
        let body = format!(
            "pagent: the story for this issue is done (iteration {iteration} of a `pagent loop --issues` loop); the pull request will close it."
        );
        match github::comment(git, number, &body) {
            Ok(()) => progress.note(&format!("commented on #{number}")),
            Err(err) => match err.downcast_ref::<Refused>() {
                Some(refused) => {
                    progress.warn(&refusal(&format!("comment on #{number}"), refused, None));
                }
                None => progress.warn(&format!("cannot comment on #{number}: {err:#}")),
            },
        }
    }
}

/// The pull request's body after a stories loop: what completed, and a `Closes #N` line
/// per issue done.
pub(super) fn pr_body(project: &Project, state: &State) -> String {
    let mut body = format!(
        "Opened by `pagent loop` after the {} loop completed: {}.",
        state.workflow,
        state.end_reason.as_deref().unwrap_or("")
    );
    if let Some((_, plan)) = current_plan(project, state)
        && plan.format == Format::Issues
    {
        let closes: Vec<String> = plan
            .stories
            .iter()
            .filter(|s| s.done)
            .filter_map(|s| issue_number(&s.id))
            .map(|n| format!("Closes #{n}"))
            .collect();
        if !closes.is_empty() {
            body.push_str("\n\n");
            body.push_str(&closes.join("\n"));
        }
    }
    body
}

//! Every loop on this machine at a glance: one [`LoopRow`] per loop in the register, read
//! from its state as it is now. `pagent status --all` prints the rows, the dashboard
//! serves them; both read them here, so the terminal and the page never disagree.
//!
//! The register names the projects; each state is read through the door, capped like any
//! state, and trusted only when it is the user's own (sealed): a stranger's state in a
//! registered project is listed as such, with nothing from it but its project. Texts that
//! came from a project or an agent (a task, feedback, a reviewer's findings) are cut to a
//! bound here; escaping them is the printer's business (the terminal's `printable`, the
//! page's text nodes).
//!
//! Reading drops what is over: a project that is gone (its folder or its state file), and
//! a loop that ended more than [`KEEP_ENDED`] ago, leave the register.

mod print;

use std::path::Path;

use pagent_engine::usage::{format_cost, format_count};
use pagent_engine::{Budget, Kind, State, Status, Timestamp, format_duration};
use serde::Serialize;

use crate::store::project::Project;
use crate::store::register::{self, Origin, Registered};
use crate::store::user::UserDir;
use crate::store::{self, Ownership};
use crate::world::driven::Driven;

pub use print::print_all;

/// How long an ended loop stays listed.
pub const KEEP_ENDED: u64 = 24 * 3600;
/// The longest text of a row (a task's first line, feedback, findings), in characters.
pub const TEXT_CAP: usize = 600;
const TITLE_CAP: usize = 160;

#[derive(Debug, Clone, Serialize)]
pub struct LoopRow {
    /// The register's key: the loop's id on the dashboard.
    pub id: String,
    /// The project's folder (lossy when it is not UTF-8) and a short name for it.
    pub project: String,
    pub name: String,
    pub origin: Origin,
    /// `active`, `paused`, `waiting` (for the agent's usage limit to reset), `complete`,
    /// `cancelled`, `gave_up`; or `not_yours` (a state not sealed by this user, which
    /// pagent ignores) and `unreadable`.
    pub status: &'static str,
    /// Empty unless the state is the user's own.
    #[serde(flatten)]
    pub figures: Option<Figures>,
    /// Why a state could not be read (`unreadable` only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub problem: Option<String>,
}

/// What a loop of the user's own shows.
#[derive(Debug, Clone, Serialize)]
pub struct Figures {
    pub kind: Kind,
    pub workflow: String,
    /// The ralph task's first line, or the pipeline's PRD.
    pub title: String,
    pub stage: String,
    /// 1-based, of `stages` (the stages this loop runs).
    pub stage_number: usize,
    pub stages: usize,
    pub iteration: u32,
    pub max_iterations: u32,
    pub total_iterations: u32,
    /// The time worked: waiting for usage limits to reset is in `limit_waited_secs`.
    pub elapsed_secs: u64,
    /// Active: since the last step (the iteration under way); paused: since the pause.
    pub waiting_secs: Option<u64>,
    pub limit_waited_secs: u64,
    /// While the agent's usage limit is waited out: how long is left, and why; and what
    /// happens then (what the user must do for it, in a session that will not go on by
    /// itself, or for a `pagent loop` that was interrupted).
    pub limit_wait: Option<String>,
    pub limit_then: Option<String>,
    /// `pagent loop`: the agent's last failed run since an iteration ended, its class
    /// (`outage`, `crash`) and in words.
    pub last_failure: Option<String>,
    pub last_failure_class: Option<pagent_engine::failure::FailureClass>,
    pub tokens: u64,
    pub cost_microusd: u64,
    /// Whether any cost figure is known (else `cost_microusd` means nothing).
    pub cost_known: bool,
    /// The figures above as people read them (`4m10s`, `12.3k`, `$0.04`), so the page
    /// and the terminal format them one way.
    pub elapsed_text: String,
    pub waiting_text: Option<String>,
    pub tokens_text: String,
    pub cost_text: Option<String>,
    pub budget: Budget,
    /// What is left of each budget, in words (`1h20m, 300k tokens`), if any is set.
    pub budget_left: Option<String>,
    pub last_feedback: Option<String>,
    pub review: Option<ReviewRow>,
    pub paused_because: Option<String>,
    /// `pagent loop --sandbox`: the loop's agent runs contained.
    pub contained: bool,
    /// What to type to go on with a paused loop, and to end it, as its driver takes it.
    pub go_on: Option<String>,
    pub started_at: Timestamp,
    pub updated_at: Timestamp,
    pub ended_at: Option<Timestamp>,
    pub end_reason: Option<String>,
    /// Which of pause, resume and cancel apply now.
    pub actions: Vec<&'static str>,
}

#[derive(Debug, Clone, Serialize)]
pub struct ReviewRow {
    pub met: bool,
    pub summary: String,
    pub detail: String,
    pub at: Timestamp,
}

/// Every registered loop as it is at `now`: active ones first, by folder. Drops from
/// the register what is gone or ended long ago.
pub fn gather(user_dir: &UserDir, now: Timestamp) -> Vec<LoopRow> {
    let mut rows: Vec<LoopRow> = register::list(user_dir)
        .into_iter()
        .filter_map(|entry| {
            let found = row(user_dir, &entry, now);
            if found.is_none() {
                let _ = register::forget(user_dir, &entry.key);
            }
            found.map(|found| found.row)
        })
        .collect();
    // Stable places, so a live page does not shuffle: running loops first, then by folder.
    rows.sort_by(|a, b| {
        let ended = |row: &LoopRow| !matches!(row.status, "active" | "paused" | "waiting");
        ended(a)
            .cmp(&ended(b))
            .then_with(|| a.project.cmp(&b.project))
    });
    rows
}

/// One registered loop as it is now: its project, its row, and its state when it is the
/// user's own (the one read for the row).
#[derive(Debug)]
pub struct Found {
    pub project: Project,
    pub row: LoopRow,
    pub state: Option<State>,
}

/// The registered loop `entry` at `now`, or `None` when it has left: folder or state
/// gone, or ended more than [`KEEP_ENDED`] ago.
pub fn row(user_dir: &UserDir, entry: &Registered, now: Timestamp) -> Option<Found> {
    let project = Project::at(&entry.root).ok()?;
    // A folder that now resolves elsewhere is not the project that was registered.
    if project.root != entry.root {
        return None;
    }
    let mut row = LoopRow {
        id: entry.key.clone(),
        project: entry.root.to_string_lossy().into_owned(),
        name: short_name(&entry.root),
        origin: entry.origin,
        status: "unreadable",
        figures: None,
        problem: None,
    };
    let state = match store::read_state(&project) {
        Ok(Some(state)) => state,
        Ok(None) => return None,
        Err(err) => {
            row.problem = Some(cap(&format!("{err:#}"), TEXT_CAP));
            return Some(Found {
                project,
                row,
                state: None,
            });
        }
    };
    if state
        .ended_at
        .is_some_and(|end| now.since(end) > KEEP_ENDED)
    {
        return None;
    }
    if store::ownership(&project, user_dir, &state) != Ownership::Own {
        row.status = "not_yours";
        return Some(Found {
            project,
            row,
            state: None,
        });
    }
    row.status = status(&state);
    let mut shown = figures(&state, now);
    if state.limit_wait.is_some() {
        let running = (state.driver == pagent_engine::Driver::Loop)
            .then(|| project.runner_is_running())
            .flatten();
        shown.limit_then = Some(crate::world::report::after_the_wait(&state, running));
    }
    if state.paused.is_some() {
        let driven = Driven::from_origin(&state, || Some(entry.origin));
        shown.go_on = Some(driven.go_on(&state, &project.root));
    }
    row.figures = Some(shown);
    Some(Found {
        project,
        row,
        state: Some(state),
    })
}

fn status(state: &State) -> &'static str {
    match state.status {
        Status::Active if state.paused.is_some() => "paused",
        Status::Active if state.limit_wait.is_some() => "waiting",
        other => other.as_str(),
    }
}

/// The figures of the user's own `state` at `now`.
pub fn figures(state: &State, now: Timestamp) -> Figures {
    let end = state.ended_at.unwrap_or(now);
    // As `pagent status`: the loop's own clock, or the wall clock if that says more.
    let waited = pagent_engine::budget::waited_secs(state, end);
    let elapsed = pagent_engine::budget::worked_secs(state, end)
        .max(end.since(state.started_at).saturating_sub(waited));
    let waiting = match (&state.paused, state.is_active()) {
        (Some(pause), true) => Some(now.since(pause.since)),
        (None, true) => Some(now.since(state.updated_at)),
        _ => None,
    };
    let title = match state.kind {
        Kind::Ralph => state.stages[0].prompt.lines().next().unwrap_or("").trim(),
        Kind::Pipeline => state.prd_file.as_deref().unwrap_or(""),
    };
    let actions = match (state.is_active(), state.paused.is_some()) {
        (true, false) => vec!["pause", "cancel"],
        (true, true) => vec!["resume", "cancel"],
        _ => Vec::new(),
    };
    Figures {
        kind: state.kind,
        workflow: cap(&state.workflow, TITLE_CAP),
        title: cap(title, TITLE_CAP),
        stage: cap(&state.current().name, TITLE_CAP),
        stage_number: state.stage + 1,
        stages: state.max_stages,
        iteration: state.iterations[state.stage],
        max_iterations: state.stage_limit(state.stage),
        total_iterations: state.total_iterations(),
        elapsed_secs: elapsed,
        waiting_secs: waiting,
        limit_waited_secs: waited,
        limit_wait: state.limit_wait.as_ref().map(|wait| {
            let left = wait.until.map_or_else(
                || "no reset time was named: ".to_owned(),
                |until| format!("{} left: ", format_duration(until.since(now))),
            );
            cap(&format!("{left}{}", wait.why), TEXT_CAP)
        }),
        limit_then: None,
        last_failure: state
            .last_failure
            .as_ref()
            .map(|f| cap(&f.describe(now), TEXT_CAP)),
        last_failure_class: state.last_failure.as_ref().map(|f| f.class),
        tokens: state.usage.tokens.total(),
        cost_microusd: state.usage.cost_microusd,
        cost_known: state.usage.cost_known(),
        elapsed_text: format_duration(elapsed),
        waiting_text: waiting.map(format_duration),
        tokens_text: format_count(state.usage.tokens.total()),
        cost_text: state
            .usage
            .cost_known()
            .then(|| format_cost(state.usage.cost_microusd)),
        budget: state.budget,
        budget_left: budget_left(state, elapsed),
        last_feedback: state.last_feedback.as_deref().map(|f| cap(f, TEXT_CAP)),
        review: state.review.as_ref().map(|r| ReviewRow {
            met: r.met,
            summary: cap(&r.summary, TEXT_CAP),
            detail: cap(&r.detail, TEXT_CAP),
            at: r.at,
        }),
        paused_because: state.paused.as_ref().map(|p| cap(&p.why, TEXT_CAP)),
        contained: state.contained,
        go_on: None,
        started_at: state.started_at,
        updated_at: state.updated_at,
        ended_at: state.ended_at,
        end_reason: state.end_reason.as_deref().map(|r| cap(r, TEXT_CAP)),
        actions,
    }
}

/// `1h20m, 300k tokens, $2.10`: what is left of each budget that is set.
fn budget_left(state: &State, elapsed: u64) -> Option<String> {
    let budget = &state.budget;
    let usage = &state.usage;
    let mut parts = Vec::new();
    if let Some(limit) = budget.max_duration_secs {
        parts.push(format_duration(limit.saturating_sub(elapsed)));
    }
    if let Some(limit) = budget.max_tokens {
        let left = limit.saturating_sub(usage.tokens.total());
        parts.push(format!("{} tokens", format_count(left)));
    }
    if let Some(limit) = budget.max_cost_microusd {
        parts.push(if usage.cost_known() {
            format_cost(limit.saturating_sub(usage.cost_microusd))
        } else {
            format!("{} (no cost yet)", format_cost(limit))
        });
    }
    (!parts.is_empty()).then(|| parts.join(", "))
}

/// The project's folder name; a worktree of `pagent loop --worktree` or `pagent
/// parallel` (`<project>/.pagent/worktrees/<name>`) as `<project>/<name>`.
pub fn short_name(root: &Path) -> String {
    let name = |p: &Path| {
        p.file_name()
            .map_or_else(|| p.to_string_lossy(), |n| n.to_string_lossy())
            .into_owned()
    };
    let worktrees = Path::new(crate::store::project::WORKTREES_DIR);
    match root.parent().and_then(|parent| {
        let base = parent.to_str()?.strip_suffix(worktrees.to_str()?)?;
        Some(Path::new(base.trim_end_matches('/')).to_path_buf())
    }) {
        Some(base) => format!("{}/{}", name(&base), name(root)),
        None => name(root),
    }
}

/// `text` cut to at most `max` characters, an ellipsis marking the cut.
pub fn cap(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        None => text.to_owned(),
        Some((at, _)) => {
            let mut cut = text[..at].to_owned();
            cut.pop();
            cut.push('…');
            cut
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worktrees_are_named_after_their_project() {
        assert_eq!(short_name(Path::new("/work/app")), "app");
        assert_eq!(
            short_name(Path::new("/work/app/.pagent/worktrees/fix-1")),
            "app/fix-1"
        );
        assert_eq!(short_name(Path::new("/")), "/");
    }

    fn ralph(task: &str) -> State {
        State::new_ralph(
            task.into(),
            "DONE".into(),
            pagent_engine::SetupOptions::default(),
            None,
            Timestamp(1_000),
        )
    }

    #[test]
    fn figures_say_what_is_left_and_what_may_be_done() {
        let mut state = ralph("First line of the task\nsecond line");
        state.budget = Budget {
            max_duration_secs: Some(3_600),
            max_tokens: Some(100_000),
            max_cost_microusd: Some(5_000_000),
        };
        state.updated_at = Timestamp(1_300);
        let f = figures(&state, Timestamp(1_400));
        assert_eq!(f.title, "First line of the task");
        assert_eq!((f.elapsed_secs, f.waiting_secs), (400, Some(100)));
        assert_eq!(
            f.budget_left.as_deref(),
            Some("53m20s, 100.0k tokens, $5.00 (no cost yet)")
        );
        assert_eq!(f.actions, ["pause", "cancel"]);
        state.usage.add(
            &pagent_engine::Report {
                model: None,
                tokens: pagent_engine::Tokens {
                    input: 30_000,
                    ..Default::default()
                },
                cost_microusd: Some(1_250_000),
            },
            &pagent_engine::Prices::built_in(),
        );
        state.paused = pagent_engine::pause::pause(&state, "you paused it", Timestamp(1_350))
            .and_then(|s| s.paused);
        let f = figures(&state, Timestamp(1_400));
        assert_eq!(
            f.budget_left.as_deref(),
            Some("53m20s, 70.0k tokens, $3.75")
        );
        assert_eq!(
            (f.tokens_text.as_str(), f.cost_text.as_deref()),
            ("30.0k", Some("$1.25"))
        );
        assert_eq!(f.waiting_secs, Some(50));
        assert_eq!(f.actions, ["resume", "cancel"]);
        state.finish(Status::Cancelled, "by you".into(), Timestamp(1_500));
        let f = figures(&state, Timestamp(9_999));
        assert_eq!((f.elapsed_secs, f.waiting_secs), (500, None));
        assert!(f.actions.is_empty());
        // Spent past the budget: nothing left, never a negative figure.
        state.usage.cost_microusd = 9_000_000;
        assert!(
            figures(&state, Timestamp(9_999))
                .budget_left
                .unwrap()
                .ends_with("$0.00")
        );
    }

    #[test]
    fn texts_are_cut_at_a_character_boundary() {
        assert_eq!(cap("abc", 3), "abc");
        assert_eq!(cap("abcd", 3), "ab…");
        assert_eq!(cap("ééééé", 4), "ééé…");
        assert_eq!(cap("", 0), "");
    }
}

//! `pagent team status`: the team as the remote shows it now, from any machine with the
//! remote: every story (waiting, claimed by which worker on which host since when,
//! landing, landed as which commit, gave up and why) and every worker (what it holds,
//! what it spent, when it was last heard of), as words or as JSON.
//!
//! The times are the workers' own clocks, said as such: nothing is decided on them.

use std::io::Write;

use pagent_engine::{Timestamp, format_duration};
use serde::Serialize;

use super::names;
use super::records::{Phase, one_line};
use super::view::View;

/// One story's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct StoryRow {
    pub name: String,
    /// `waiting`, `ready`, `working`, `landing`, `resolving`, `paused`, `released`,
    /// `landed`, `gave_up`, `blocked`, or `unknown` (an unreadable claim).
    pub state: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub worker: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub renewed_at: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub commit: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub waits_for: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iterations: Option<u32>,
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub taken_over: bool,
}

/// One worker's line.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct WorkerRow {
    pub worker: String,
    pub host: String,
    pub state: String,
    pub holds: Vec<String>,
    pub landed: u32,
    pub tokens: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cost_microusd: Option<u64>,
    pub started_at: Timestamp,
    pub updated_at: Timestamp,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<Timestamp>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub unreadable: Option<String>,
}

/// The whole status.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Report {
    pub team: String,
    pub remote: String,
    pub branch: String,
    pub control: String,
    pub control_by: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub control_at: Option<Timestamp>,
    pub lease_secs: u64,
    pub stories: Vec<StoryRow>,
    pub workers: Vec<WorkerRow>,
    /// Refs under the team's namespace that are not the team's.
    pub ignored_refs: usize,
}

/// The report of `view`.
pub fn report(view: &View, remote: &str) -> Report {
    let plan = &view.plan;
    let stories = plan
        .stories
        .iter()
        .map(|s| story_row(view, &s.name))
        .collect();
    let workers = view
        .workers
        .iter()
        .map(|(name, seen)| match &seen.record {
            Ok(r) => WorkerRow {
                worker: name.clone(),
                host: one_line(&r.host),
                state: one_line(&r.state),
                holds: r.holds.clone(),
                landed: r.landed,
                tokens: r.tokens,
                cost_microusd: r.cost_known.then_some(r.cost_microusd),
                started_at: r.started_at,
                updated_at: r.updated_at,
                until: r.until,
                unreadable: None,
            },
            Err(why) => WorkerRow {
                worker: name.clone(),
                host: String::new(),
                state: "unknown".into(),
                holds: Vec::new(),
                landed: 0,
                tokens: 0,
                cost_microusd: None,
                started_at: Timestamp(0),
                updated_at: Timestamp(0),
                until: None,
                unreadable: Some(one_line(why)),
            },
        })
        .collect();
    Report {
        team: plan.team.clone(),
        remote: remote.to_owned(),
        branch: plan.branch.clone(),
        control: view.state.control.as_str().to_owned(),
        control_by: one_line(&view.state.control_by),
        control_at: view.state.control_at,
        lease_secs: plan.lease_secs,
        stories,
        workers,
        ignored_refs: view.strays,
    }
}

fn story_row(view: &View, name: &str) -> StoryRow {
    let mut row = StoryRow {
        name: name.to_owned(),
        state: String::new(),
        worker: None,
        host: None,
        since: None,
        renewed_at: None,
        commit: None,
        reason: None,
        waits_for: Vec::new(),
        iterations: None,
        taken_over: false,
    };
    if let Some(landed) = view.state.landed.get(name) {
        row.state = "landed".into();
        row.commit = Some(landed.commit.clone());
        row.worker = Some(landed.worker.clone());
        row.since = Some(landed.at);
        row.reason = landed
            .not_ticked
            .as_deref()
            .map(|w| format!("its marker was not ticked: {}", one_line(w)));
        return row;
    }
    if let Some(gave_up) = view.state.gave_up.get(name) {
        row.state = "gave_up".into();
        row.worker = Some(gave_up.worker.clone());
        row.since = Some(gave_up.at);
        row.reason = Some(one_line(&gave_up.reason));
        return row;
    }
    if let Some(seen) = view.claims.get(name) {
        match &seen.claim {
            Ok(claim) => {
                row.state = match claim.phase {
                    Phase::GaveUp => "gave_up".into(),
                    other => other.as_str().replace(' ', "_"),
                };
                row.worker = Some(claim.worker.clone());
                row.host = Some(one_line(&claim.host));
                row.since = Some(claim.since);
                row.renewed_at = Some(claim.renewed_at);
                row.iterations = Some(claim.iterations);
                row.taken_over = claim.taken_over;
            }
            Err(why) => {
                row.state = "unknown".into();
                row.reason = Some(format!("its claim cannot be read: {}", one_line(why)));
            }
        }
        return row;
    }
    let story = view.plan.story(name);
    let waits: Vec<String> = story
        .map(|s| {
            s.after
                .iter()
                .filter(|d| !view.state.landed.contains_key(*d))
                .cloned()
                .collect()
        })
        .unwrap_or_default();
    let blocked = waits.iter().any(|d| view.state.gave_up.contains_key(d));
    row.state = if blocked {
        "blocked".into()
    } else if waits.is_empty() {
        "ready".into()
    } else {
        "waiting".into()
    };
    row.waits_for = waits;
    row
}

/// The report in words.
pub fn print(report: &Report, now: Timestamp, out: &mut dyn Write) -> std::io::Result<()> {
    for line in headline(report) {
        writeln!(out, "{line}")?;
    }
    let width = report
        .stories
        .iter()
        .map(|s| s.name.len())
        .max()
        .unwrap_or(0);
    for row in &report.stories {
        writeln!(out, "  {:width$}  {}", row.name, story_words(row, now))?;
    }
    if report.workers.is_empty() {
        writeln!(out, "{NO_WORKER}")?;
    } else {
        writeln!(out, "workers:")?;
        for worker in &report.workers {
            writeln!(out, "  {}", worker_words(worker, now))?;
        }
    }
    if let Some(ignored) = ignored(report) {
        writeln!(out, "{ignored}")?;
    }
    Ok(())
}

/// What status says when no worker has a record yet.
pub const NO_WORKER: &str = "no worker has joined yet";

/// The refs that were ignored, said, if any.
pub fn ignored(report: &Report) -> Option<String> {
    (report.ignored_refs > 0).then(|| {
        format!(
            "{} under the team's refs on the remote are not the team's and were ignored",
            pagent_engine::count(report.ignored_refs as u64, "ref")
        )
    })
}

/// The team's control (`done` once every story settled), as status and the dashboard
/// say it.
pub fn control_words(report: &Report) -> &str {
    let settled = report
        .stories
        .iter()
        .all(|s| matches!(s.state.as_str(), "landed" | "gave_up" | "blocked"));
    if settled && report.control == "running" {
        "done"
    } else {
        report.control.as_str()
    }
}

/// The lines above the stories: the team, who paused or cancelled it, the stories
/// counted.
pub fn headline(report: &Report) -> Vec<String> {
    let count = |states: &[&str]| {
        report
            .stories
            .iter()
            .filter(|s| states.contains(&s.state.as_str()))
            .count()
    };
    let mut lines = vec![format!(
        "team {} on {}: {} (stories land on {}; lease {})",
        report.team,
        report.remote,
        control_words(report),
        report.branch,
        format_duration(report.lease_secs)
    )];
    if report.control != "running"
        && let Some(at) = report.control_at
    {
        lines.push(format!(
            "  {} by {} at {at}",
            report.control, report.control_by
        ));
    }
    let parts = [
        (count(&["landed"]), "landed"),
        (
            count(&["working", "landing", "resolving", "paused", "unknown"]),
            "in work",
        ),
        (count(&["waiting", "ready", "released"]), "waiting or ready"),
        (count(&["gave_up"]), "gave up"),
        (count(&["blocked"]), "can never start"),
    ];
    let said: Vec<String> = parts
        .iter()
        .filter(|(n, _)| *n > 0)
        .map(|(n, what)| format!("{n} {what}"))
        .collect();
    lines.push(format!(
        "{}: {}",
        stories(report.stories.len()),
        said.join(", ")
    ));
    lines
}

/// "1 story", "3 stories".
pub fn stories(n: usize) -> String {
    match n {
        1 => "1 story".to_owned(),
        n => format!("{n} stories"),
    }
}

fn ago(now: Timestamp, then: Timestamp) -> String {
    format!("{} ago", format_duration(now.since(then)))
}

/// One story's state in words, as status and the dashboard say it.
pub fn story_words(row: &StoryRow, now: Timestamp) -> String {
    let who = || {
        let worker = row.worker.as_deref().map(names::shown).unwrap_or_default();
        match row.host.as_deref().filter(|h| !h.is_empty()) {
            Some(host) => format!("{worker} on {host}"),
            None => worker,
        }
    };
    match row.state.as_str() {
        "landed" => {
            let commit: String = row
                .commit
                .as_deref()
                .unwrap_or("")
                .chars()
                .take(10)
                .collect();
            let mut text = format!("landed as {commit} by {}", who());
            if let Some(reason) = &row.reason {
                text.push_str(&format!(" ({reason})"));
            }
            text
        }
        "gave_up" => format!(
            "gave up ({}): {}",
            who(),
            row.reason.as_deref().unwrap_or("")
        ),
        "waiting" => format!("waiting for {}", row.waits_for.join(", ")),
        "blocked" => format!(
            "never starts: it waits for {}, which gave up",
            row.waits_for.join(", ")
        ),
        "ready" => "ready to be claimed".to_owned(),
        "unknown" => row.reason.clone().unwrap_or_default(),
        state => {
            let since = row.since.map(|t| format!(" since {t}")).unwrap_or_default();
            let renewed = row
                .renewed_at
                .map(|t| format!(", renewed {} (its clock)", ago(now, t)))
                .unwrap_or_default();
            let taken = if row.taken_over { ", taken over" } else { "" };
            let iterations = row
                .iterations
                .map(|n| format!(", {} done", pagent_engine::count(u64::from(n), "iteration")))
                .unwrap_or_default();
            format!(
                "{}: {}{since}{renewed}{iterations}{taken}",
                state.replace('_', " "),
                who()
            )
        }
    }
}

/// One worker in words, as status and the dashboard say it.
pub fn worker_words(row: &WorkerRow, now: Timestamp) -> String {
    if let Some(why) = &row.unreadable {
        return format!(
            "{}: its record cannot be read: {why}",
            names::shown(&row.worker)
        );
    }
    let holds = if row.holds.is_empty() {
        "holds nothing".to_owned()
    } else {
        format!("holds {}", row.holds.join(", "))
    };
    let cost = row
        .cost_microusd
        .map(|c| format!(", {}", pagent_engine::usage::format_cost(c)))
        .unwrap_or_default();
    format!(
        "{} on {}: {}, {holds}, {} landed, {} tokens{cost}, last heard {} (its clock)",
        names::shown(&row.worker),
        row.host,
        row.state,
        row.landed,
        pagent_engine::usage::format_count(row.tokens),
        ago(now, row.updated_at)
    )
}

//! `pagent status --all` in a terminal: a few lines per loop, the status first so a
//! glance down the left edge finds what needs the user. Every text that came from a
//! project or an agent goes through `printable`.

use std::io::Write;

use pagent_engine::usage::{format_cost, format_count};
use pagent_engine::{Kind, format_duration};

use super::{Figures, LoopRow};
use crate::cli::ui::{Style, printable};
use crate::store::register::Origin;

const INDENT: &str = "            ";

pub fn print_all(rows: &[LoopRow], style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    if rows.is_empty() {
        return writeln!(
            out,
            "pagent: no loops on this machine (loops started with /pagent:ralph, /pagent:run, \
             pagent loop or pagent parallel are listed here, and for a day after they end)."
        );
    }
    let active = rows
        .iter()
        .filter(|r| matches!(r.status, "active" | "paused" | "waiting"))
        .count();
    writeln!(
        out,
        "pagent: {} loop{} on this machine ({active} active)",
        rows.len(),
        if rows.len() == 1 { "" } else { "s" }
    )?;
    for row in rows {
        writeln!(out)?;
        print_row(row, style, out)?;
    }
    Ok(())
}

fn print_row(row: &LoopRow, style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    let label = format!("{:<11}", row.status.replace('_', " "));
    let label = match row.status {
        "active" | "paused" | "waiting" => style.yellow(&label),
        "complete" => style.green(&label),
        "gave_up" | "not_yours" | "unreadable" => style.red(&label),
        _ => style.dim(&label),
    };
    let name = style.bold(&printable(&row.name, false));
    let Some(figures) = &row.figures else {
        let why = match &row.problem {
            Some(problem) => printable(problem, false).into_owned(),
            None => "a state not set up by you for this project; pagent ignores it".to_owned(),
        };
        writeln!(out, " {label}{name} · {why}")?;
        return writeln!(
            out,
            "{INDENT}{}",
            style.dim(&printable(&row.project, false))
        );
    };
    writeln!(
        out,
        " {label}{name} · {} · {}{}",
        shape(figures),
        origin(row.origin),
        if figures.contained { ", contained" } else { "" }
    )?;
    if !figures.title.is_empty() {
        writeln!(out, "{INDENT}{}", printable(&figures.title, false))?;
    }
    writeln!(out, "{INDENT}{}", progress_line(figures))?;
    if let Some(why) = &figures.paused_because {
        writeln!(
            out,
            "{INDENT}paused because {}: {}",
            printable(why, false),
            printable(figures.go_on.as_deref().unwrap_or_default(), false)
        )?;
    }
    if let Some(wait) = &figures.limit_wait {
        writeln!(
            out,
            "{INDENT}{} {}",
            style.yellow("waiting for a usage limit to reset:"),
            printable(wait, false)
        )?;
    }
    if let Some(then) = &figures.limit_then {
        writeln!(out, "{INDENT}then: {}", printable(then, false))?;
    }
    if let Some(failure) = &figures.last_failure {
        writeln!(
            out,
            "{INDENT}{} {}",
            style.red("last failed run:"),
            printable(failure, false)
        )?;
    }
    if let Some(reason) = &figures.end_reason {
        writeln!(out, "{INDENT}ended: {}", printable(reason, false))?;
    } else if let Some(feedback) = &figures.last_feedback {
        writeln!(out, "{INDENT}last feedback: {}", printable(feedback, false))?;
    }
    if let Some(review) = &figures.review {
        let verdict = format!("review: {}", printable(&review.summary, false));
        let verdict = if review.met {
            style.green(&verdict)
        } else {
            style.red(&verdict)
        };
        writeln!(out, "{INDENT}{verdict}")?;
    }
    writeln!(
        out,
        "{INDENT}{}",
        style.dim(&printable(&row.project, false))
    )
}

fn shape(figures: &Figures) -> String {
    match figures.kind {
        Kind::Ralph => "ralph loop".to_owned(),
        Kind::Pipeline => format!("pipeline {}", printable(&figures.workflow, false)),
    }
}

fn origin(origin: Origin) -> &'static str {
    match origin {
        Origin::Session => "in a Claude Code session",
        Origin::Loop => "pagent loop",
        Origin::Parallel => "pagent parallel",
    }
}

/// `stage 2 of 5 (qa) · iteration 3 of 25 · 4m10s, waiting 12s · 12.3k tokens · $0.04 ·
/// budget left: 1h50m`.
fn progress_line(f: &Figures) -> String {
    let mut parts = vec![
        format!(
            "stage {} of {} ({})",
            f.stage_number,
            f.stages,
            printable(&f.stage, false)
        ),
        format!("iteration {} of {}", f.iteration, f.max_iterations),
    ];
    parts.push(match f.waiting_secs {
        Some(waiting) => format!(
            "{}, waiting {}",
            format_duration(f.elapsed_secs),
            format_duration(waiting)
        ),
        None => format_duration(f.elapsed_secs),
    });
    if f.tokens > 0 {
        parts.push(format!("{} tokens", format_count(f.tokens)));
    }
    if f.cost_known {
        parts.push(format_cost(f.cost_microusd));
    }
    if let Some(left) = &f.budget_left {
        parts.push(format!("budget left: {left}"));
    }
    parts.join(" · ")
}

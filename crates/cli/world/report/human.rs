//! `pagent status` for a person: the header (shape, status, iterations, time), the usage
//! line, one row per stage, who drives the loop (and, for an interrupted `pagent loop`,
//! how to resume it), the last review and checks. Every field that a state or an event
//! log can plant goes through `printable`.

use std::io::Write;

use pagent_engine::usage::{format_cost, format_count};
use pagent_engine::{Driver, Kind, Status};

use super::Report;
use crate::cli::ui::{Style, printable};

/// `usage: 12.3k tokens · $0.04 (estimated from pagent's list prices) · budget: 2h00m,
/// 500k tokens`.
fn usage_line(report: &Report) -> String {
    let usage = &report.usage;
    let mut line = if usage.reports == 0 {
        match report.driver {
            Driver::Hook => {
                "usage: no tokens counted yet (each stop reads them from the session's transcript)"
                    .to_owned()
            }
            Driver::Loop => "usage: no tokens reported by the agent yet".to_owned(),
        }
    } else {
        let t = &usage.tokens;
        format!(
            "usage: {} tokens (input {}, output {}, cache read {}, cache write {}) · {} ({})",
            format_count(usage.total_tokens),
            format_count(t.input),
            format_count(t.output),
            format_count(t.cache_read),
            format_count(t.cache_write),
            format_cost(usage.cost_microusd),
            usage.cost_source
        )
    };
    if !report.budget.is_empty() {
        line.push_str(&format!(" · budget: {}", report.budget.describe()));
    }
    line
}

/// `logs: 212.4 MiB on disk (runs 200.1 MiB in 420 files, the oldest dropped past 256 MiB;
/// events 12.3 MiB)` (the cap is applied before each run: the run under way comes on top), or for a loop without run logs (a session's) `logs: 4.2 KiB on disk (the
/// event log)`.
fn logs_line(logs: &super::LogsReport) -> String {
    if logs.run_files == 0 {
        return format!("logs: {} on disk (the event log)", size(logs.events_bytes));
    }
    format!(
        "logs: {} on disk (runs {} in {}, the oldest dropped past {}; events {})",
        size(logs.bytes),
        size(logs.runs_bytes),
        pagent_engine::count(u32::try_from(logs.run_files).unwrap_or(u32::MAX), "file"),
        size(logs.cap_bytes),
        size(logs.events_bytes)
    )
}

/// Bytes for a person: `0 B`, `812 B`, `4.2 KiB`, `12.3 MiB`, `256 MiB`, `1.1 GiB`.
fn size(bytes: u64) -> String {
    let (unit, name) = match bytes {
        0..1024 => return format!("{bytes} B"),
        1024..1_048_576 => (1u64 << 10, "KiB"),
        1_048_576..1_073_741_824 => (1 << 20, "MiB"),
        _ => (1 << 30, "GiB"),
    };
    if bytes.is_multiple_of(unit) {
        return format!("{} {name}", bytes / unit);
    }
    #[allow(clippy::cast_precision_loss)]
    let n = bytes as f64 / unit as f64;
    format!("{n:.1} {name}")
}

pub fn print_human(report: &Report, style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    let status = match report.status {
        Status::Active if report.paused => style.yellow("paused"),
        Status::Active if report.interrupted() => style.yellow("interrupted"),
        Status::Active if report.limit_wait.is_some() => style.yellow("waiting"),
        Status::Active => style.yellow("active"),
        Status::Complete => style.green("complete"),
        Status::GaveUp => style.red("gave up"),
        Status::Cancelled => style.dim("cancelled"),
    };
    let shape = match report.kind {
        Kind::Ralph => "ralph loop".to_owned(),
        Kind::Pipeline => format!("pipeline {}", printable(&report.workflow, false)),
    };
    let iterations = format!(
        "{} iteration{}",
        report.iterations,
        if report.iterations == 1 { "" } else { "s" }
    );
    writeln!(
        out,
        "{} · {status} · {iterations} · {}",
        style.bold(&format!("pagent {shape}")),
        super::limit::time_text(report.elapsed_secs, report.waited_secs)
    )?;
    if let Some(prd) = &report.prd_file {
        writeln!(out, "PRD: {}", printable(prd, false))?;
    }
    writeln!(out, "{}", printable(&usage_line(report), false))?;
    if let Some(logs) = &report.logs {
        writeln!(out, "{}", logs_line(logs))?;
    }
    print_stages(report, style, out)?;
    match report.status {
        Status::Active => print_active(report, style, out)?,
        _ => writeln!(
            out,
            "ended: {}",
            printable(
                report
                    .end_reason
                    .as_deref()
                    .unwrap_or("(no reason recorded)"),
                false
            )
        )?,
    }
    print_review_and_checks(report, style, out)?;
    if !report.sealed {
        writeln!(out,
            "{}",
            style.red("warning: this state was not set up by you for this project (its seal does not verify); pagent ignores it.")
        )?;
    }
    Ok(())
}

/// One line per stage: where it stands, its iterations, what its condition says.
fn print_stages(report: &Report, style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    let names: Vec<_> = report
        .stages
        .iter()
        .map(|s| printable(&s.name, false))
        .collect();
    let width = names.iter().map(|n| n.chars().count()).max().unwrap_or(0);
    for (stage, name) in report.stages.iter().zip(&names) {
        let label = format!("{:<9}", stage.state.replace('_', " "));
        let label = match stage.state {
            "done" => style.green(&label),
            "current" => style.yellow(&label),
            "gave_up" => style.red(&label),
            _ => style.dim(&label),
        };
        let counts = if stage.iterations == 0 {
            String::new()
        } else {
            format!("{} of {}", stage.iterations, stage.max_iterations)
        };
        writeln!(
            out,
            "  {label} {name:<width$}  {counts:<10}  {}",
            printable(&stage.progress, false)
        )?;
    }
    Ok(())
}

/// An active loop: who drives it, its no-progress count, and what holds it (a usage
/// limit, a failure, an interruption, a pause, failing checks).
fn print_active(report: &Report, style: Style, out: &mut dyn Write) -> std::io::Result<()> {
    let owner = match (report.driver, report.session_id.as_deref()) {
        (Driver::Loop, _) if report.interrupted() => {
            "not running: its `pagent loop` was interrupted, or crashed".to_owned()
        }
        (Driver::Loop, _) if report.contained => {
            "driven by `pagent loop` (fresh agent processes, contained by --sandbox)".to_owned()
        }
        (Driver::Loop, _) => {
            "driven by `pagent loop` (fresh agent processes, not contained)".to_owned()
        }
        (Driver::Hook, Some(session)) => {
            format!("session: {}", printable(session, false))
        }
        (Driver::Hook, None) => {
            "session: not yet claimed (the next session that stops takes it)".to_owned()
        }
    };
    let no_progress = if report.no_progress_limit == 0 {
        "turns that change no file are not counted".to_owned()
    } else {
        format!(
            "turns in a row with no file changed: {} of {}",
            report.no_progress_count, report.no_progress_limit
        )
    };
    writeln!(out, "{owner} · {no_progress}")?;
    if let Some(wait) = &report.limit_wait {
        super::limit::print_limit(wait, style, out)?;
    }
    if let Some(failure) = &report.last_failure {
        super::limit::print_failure(&failure.text, style, out)?;
    }
    if report.interrupted() {
        writeln!(
            out,
            "`pagent loop` in {} resumes it; `pagent cancel` ends it",
            printable(&report.root, false)
        )?;
    }
    if let (Some(why), Some(go_on)) = (&report.paused_because, &report.go_on) {
        writeln!(
            out,
            "paused because {}: {}",
            printable(why, false),
            printable(go_on, false)
        )?;
    }
    if !report.failing_checks.is_empty() {
        let files: Vec<_> = report
            .failing_checks
            .iter()
            .map(|f| printable(f, false))
            .collect();
        writeln!(
            out,
            "{}",
            style.red(&format!(
                "held back until their checks pass: {}",
                files.join(", ")
            ))
        )?;
    }
    Ok(())
}

/// The last review's verdict and the latest checks.
fn print_review_and_checks(
    report: &Report,
    style: Style,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    if let Some(review) = &report.review {
        let verdict = format!("review: {}", printable(&review.summary, false));
        let verdict = if review.met {
            style.green(&verdict)
        } else {
            style.red(&verdict)
        };
        writeln!(
            out,
            "{verdict} (stage {}, iteration {}, {})",
            printable(&review.stage, false),
            review.iteration,
            review.at
        )?;
    }
    for (i, check) in report.checks.iter().enumerate() {
        let label = if i == 0 { "checks:" } else { "       " };
        let ms = check
            .ms
            .map_or_else(String::new, |ms| format!(" ({ms} ms)"));
        let detail = printable(&check.detail, false);
        let detail = if detail.contains(": failed") || detail.contains(": timed out") {
            style.red(&detail)
        } else {
            detail.into_owned()
        };
        writeln!(out, "{label} {detail}{ms}")?;
    }
    Ok(())
}

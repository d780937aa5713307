//! `pagent log`: the event log, one line per decision (or raw JSON lines with `--json`).

#![allow(clippy::print_stdout)]

use pagent_engine::Action;

use crate::cli::args::{Global, LogArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui::{self, Style, printable, printable_json};
use crate::store::eventlog::read_events;
use crate::store::project::Project;

pub fn run(global: &Global, env: &Env, args: &LogArgs) -> anyhow::Result<ExitStatus> {
    let project = Project::resolve(global, env, None)?;
    let (events, bad) = read_events(&project)?;
    let skip = args.tail.map_or(0, |n| events.len().saturating_sub(n));
    let style = Style::for_stdout(env.no_color);
    if events.is_empty() && !args.json {
        println!(
            "pagent: the event log is empty (no loop has run in {}).",
            printable(&project.root.display().to_string(), false)
        );
    }
    for event in &events[skip..] {
        if args.json {
            println!("{}", printable_json(&serde_json::to_string(event)?));
            continue;
        }
        let action_text = format!("{:<13}", event.action.as_str());
        let action = match event.action {
            Action::Complete | Action::Advance => style.green(&action_text),
            Action::GaveUp | Action::Unsealed => style.red(&action_text),
            Action::Block => style.yellow(&action_text),
            _ => action_text,
        };
        let stage = printable(event.stage.as_deref().unwrap_or("-"), false);
        let iteration = event
            .iteration
            .map_or_else(String::new, |i| format!("#{i}"));
        let ms = event
            .ms
            .map_or_else(String::new, |ms| style.dim(&format!(" ({ms} ms)")));
        println!(
            "{}  {action} {stage:<12} {iteration:<4} {}{ms}",
            style.dim(&event.ts.to_string()),
            printable(&event.detail, false)
        );
    }
    if bad > 0 {
        ui::warn(&format!(
            "skipped {bad} unreadable line(s) in {}",
            crate::store::project::EVENTS_FILE
        ));
    }
    Ok(ExitStatus::Success)
}

//! `pagent log`: the event log, one line per decision in words (or the raw JSON lines,
//! with the actions' machine names, with `--json`).

use pagent_engine::Action;

use crate::cli::args::{Global, LogArgs};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui::{self, Style, printable, printable_json};
use crate::io::Io;
use crate::store::eventlog::read_events;
use crate::store::nearest::project_of_loop;

pub fn run(global: &Global, env: &Env, args: &LogArgs, io: &mut Io) -> anyhow::Result<ExitStatus> {
    let project = project_of_loop(global.project.as_deref(), env, &mut |m: &str| {
        let _ = writeln!(io.stderr, "pagent: {m}");
    })?;
    let (events, bad) = read_events(&project)?;
    let skip = args.tail.map_or(0, |n| events.len().saturating_sub(n));
    let style = Style::for_stdout(env.no_color, io.stdout_is_terminal);
    if events.is_empty() && !args.json {
        writeln!(
            io.stdout,
            "pagent: the event log is empty (no loop has run in {}).",
            printable(&project.root.display().to_string(), false)
        )?;
    }
    for event in &events[skip..] {
        if args.json {
            writeln!(
                io.stdout,
                "{}",
                printable_json(&serde_json::to_string(event)?)
            )?;
            continue;
        }
        let action_text = format!("{:<13}", event.action.words());
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
        writeln!(
            io.stdout,
            "{}  {action} {stage:<12} {iteration:<4} {}{ms}",
            style.dim(&event.ts.to_string()),
            printable(&event.detail, false)
        )?;
    }
    if bad > 0 {
        ui::warn(
            io.stderr,
            &format!(
                "skipped {} in {}",
                pagent_engine::count(bad as u64, "unreadable line"),
                crate::store::project::EVENTS_FILE
            ),
        );
    }
    Ok(ExitStatus::Success)
}

//! `pagent parallel TASKS_FILE -j N`: one ralph loop per task, each in its own git
//! worktree and branch, N at a time, with a live table and a final summary.
//!
//! Each loop is a child `pagent loop --json --worktree NAME ralph ...`: the same runner,
//! crash-safe and resumable on its own, reporting its progress as JSON lines that this
//! command folds into one row per task. Ctrl-C reaches the children too (they share the
//! terminal's process group); each saves its state and stops, and a second
//! `pagent parallel` with the same file resumes every unfinished task.
//!
//! This file is the orchestration: the run loop, `--stdin-args` and `--dry-run`'s plan.
//! The tasks file is read in `tasks`, a child loop is started and heard from in `child`,
//! the rows it folds into and the summary are in `table`, the live table in `live`.

mod child;
mod live;
mod table;
mod tasks;

use std::collections::VecDeque;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::cli::args::ParallelArgs;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::screen::Size;
use crate::cli::ui::Style;
use crate::io::Io;
use crate::process::{Running, SearchPath};
use crate::runner::signals;
use crate::store::project::Project;

use child::{Msg, spawn};
pub use child::{agent_cli, budget_cli};
use table::{Row, RowState, apply, summary};
pub use tasks::{Task, read_tasks};

/// Runs `tasks` to the end: N child loops at a time, the live table, the summary.
pub fn run_tasks(
    env: &Env,
    project: &Project,
    args: &ParallelArgs,
    tasks: Vec<Task>,
    exe: &Path,
    io: &mut Io,
) -> anyhow::Result<ExitStatus> {
    let style = Style::for_stdout(env.no_color, io.stdout_is_terminal);
    let live = !args.json && io.stdout_is_terminal;
    let out = &mut *io.stdout;
    let mut rows: Vec<Row> = tasks
        .into_iter()
        .map(|task| Row {
            task,
            state: RowState::Queued,
            stage_iteration: String::new(),
            tool: String::new(),
            iterations: 0,
            started: None,
            finished: None,
            detail: String::new(),
            stderr: String::new(),
            usage: table::RowUsage::default(),
        })
        .collect();
    let mut queue: VecDeque<usize> = (0..rows.len()).collect();
    let (tx, rx) = mpsc::channel();
    let search = SearchPath::new(env.path.as_deref(), &[&project.root]);
    let mut children: Vec<(usize, Running)> = Vec::new();
    let mut drawn = 0;
    let mut done = 0;
    while done < rows.len() {
        while children.len() < args.jobs as usize && !signals::interrupted() {
            let Some(i) = queue.pop_front() else { break };
            let child = spawn(exe, &search, project, args, &rows[i].task, i, &tx)?;
            rows[i].state = RowState::Running;
            rows[i].started = Some(Instant::now());
            children.push((i, child));
            if !live && !args.json {
                let _ = writeln!(
                    out,
                    "[{}] started on branch pagent/{}",
                    rows[i].task.name, rows[i].task.name
                );
            }
        }
        if signals::interrupted() {
            // Unstarted tasks stay unstarted; running ones got the signal themselves.
            for i in queue.drain(..) {
                rows[i].state = RowState::NotStarted;
                done += 1;
            }
        }
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Msg::Line(i, line)) => {
                if args.json
                    && let Ok(mut event) = serde_json::from_str::<Value>(&line)
                {
                    event["task"] = json!(rows[i].task.name);
                    let _ = writeln!(out, "{event}");
                }
                let plain = !live && !args.json;
                apply(&mut rows[i], &line, plain, out);
            }
            Ok(Msg::Stderr(i, line)) => {
                let stderr = &mut rows[i].stderr;
                stderr.push_str(&line);
                if stderr.len() > 4096 {
                    let cut = stderr.len() - 4096;
                    let cut = (cut..stderr.len())
                        .find(|c| stderr.is_char_boundary(*c))
                        .unwrap_or(stderr.len());
                    stderr.drain(..cut);
                }
            }
            Ok(Msg::Exit(i)) => {
                let code = children
                    .iter()
                    .position(|(j, _)| *j == i)
                    .and_then(|pos| children.remove(pos).1.wait());
                let row = &mut rows[i];
                row.finished = row.started.map(|s| s.elapsed());
                row.state = RowState::from_exit(code);
                if row.state == RowState::Failed && row.detail.is_empty() {
                    row.detail = row
                        .stderr
                        .lines()
                        .rfind(|l| !l.trim().is_empty())
                        .unwrap_or("")
                        .trim()
                        .to_owned();
                }
                done += 1;
                if !live && !args.json {
                    let _ = writeln!(
                        out,
                        "[{}] {} after {}: {}",
                        row.task.name,
                        row.state.as_str(),
                        pagent_engine::count(row.iterations, "iteration"),
                        row.detail
                    );
                }
            }
            Err(_) => {}
        }
        if live {
            drawn = live::draw(&rows, drawn, Size::ask(Size::from_env(env)), style, out);
        }
    }
    if live {
        live::draw(&rows, drawn, Size::ask(Size::from_env(env)), style, out);
    }
    summary(&rows, style, args.json, out);
    let states: Vec<RowState> = rows.iter().map(|r| r.state).collect();
    Ok(if states.iter().all(|s| *s == RowState::Complete) {
        ExitStatus::Success
    } else if states
        .iter()
        .any(|s| matches!(s, RowState::Interrupted | RowState::NotStarted))
    {
        ExitStatus::Interrupted
    } else if states.contains(&RowState::Failed) {
        ExitStatus::Failure
    } else {
        ExitStatus::GaveUp
    })
}

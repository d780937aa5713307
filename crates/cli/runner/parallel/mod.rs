//! `pagent parallel TASKS_FILE -j N`: one ralph loop per task, each in its own git
//! worktree and branch, N at a time, with a live table and a final summary; with
//! `--merge`, each completed branch merged home afterwards.
//!
//! Each loop is a child `pagent loop --json --worktree NAME ralph ...`: the same runner,
//! crash-safe and resumable on its own, committing every iteration on the task's branch
//! (unless `--no-checkpoint`), reporting its progress as JSON lines that this command
//! folds into one row per task. Ctrl-C reaches the children too (they share the
//! terminal's process group; a signal to this process alone is passed on): each saves its
//! state and stops, and the same command run again resumes every unfinished task and
//! leaves the finished ones alone (`plan`).
//!
//! This file is the orchestration. The tasks file is read by the set-up
//! (`setup/tasks.rs`, which the slash command reads too), what each task needs on this
//! run in `plan`, a child loop is started and heard from in `child`, rows are in
//! `table`, the live table in `live`, what a branch holds in `holdings`, the end's words
//! in `summary`, and the merge queue in `merge`.

mod after;
mod child;
mod holdings;
mod live;
pub mod merge;
mod plan;
mod summary;
mod table;

use std::collections::VecDeque;
use std::path::Path;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use pagent_engine::Status;
use serde_json::{Value, json};

use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::screen::Size;
use crate::cli::ui::Style;
use crate::io::Io;
use crate::runner::repo_git;
use crate::setup::plan::ParallelPlan;
use crate::setup::tasks::Task;
use crate::store::project::Project;
use pagent_door::process::signals;
use pagent_door::process::{Running, SearchPath};

use child::{Msg, spawn};

use plan::Step;
use table::{Row, RowState, apply};

/// Runs `tasks` to the end: N child loops at a time, the live table, the summary; then
/// the merge queue when asked.
pub fn run_tasks(
    env: &Env,
    project: &Project,
    args: &ParallelPlan,
    tasks: Vec<Task>,
    exe: &Path,
    io: &mut Io,
) -> anyhow::Result<ExitStatus> {
    let search = SearchPath::new(env.path.as_deref(), &[&project.root]);
    super::sandbox::refuse_early(&args.agent, &search)?;
    let style = Style::for_stdout(env.no_color, io.stdout_is_terminal);
    let live = !args.json && io.stdout_is_terminal && !args.merge_only;
    let out = &mut *io.stdout;
    let steps = plan::plan(project, env, &tasks, args.force);
    let mut rows: Vec<Row> = tasks.into_iter().map(new_row).collect();
    let mut queue: VecDeque<usize> = VecDeque::new();
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Ended(earlier) => ended_earlier(&mut rows[i], earlier),
            Step::Run(mode) if args.merge_only => {
                let (state, detail) = merge::not_run(*mode == child::Mode::Resume);
                rows[i].state = state;
                rows[i].detail = detail;
            }
            Step::Run(_) => queue.push_back(i),
        }
    }
    let (tx, rx) = mpsc::channel();
    // Before any task's agent runs: what a signed merge's git is compared with.
    let start_git = repo_git::record(&project.root, env, &search);
    let mut children: Vec<(usize, Running)> = Vec::new();
    let mut drawn = 0;
    let mut done = rows.len() - queue.len();
    let mut passed_on = false;
    let waits = after::Waits::of(&rows);
    while done < rows.len() {
        while children.len() < args.jobs as usize && !signals::interrupted() {
            let plain = !live && !args.json;
            let idle = children.is_empty();
            let (next, blocked) = next_ready(&mut queue, &mut rows, &waits, idle, out, plain);
            done += blocked;
            let Some(i) = next else { break };
            let Step::Run(mode) = steps[i] else { continue };
            if mode != child::Mode::Resume
                && let Err(why) =
                    after::start_branch(project, &rows[i].task.name, &waits.names(i, &rows))
            {
                block(&mut rows[i], why, out, plain);
                done += 1;
                continue;
            }
            let child = spawn(exe, &search, project, args, &rows[i].task, mode, i, &tx)?;
            rows[i].state = RowState::Running;
            rows[i].started = Some(Instant::now());
            children.push((i, child));
            if !live && !args.json {
                let how = if mode == child::Mode::Resume {
                    "resumed"
                } else {
                    "started"
                };
                let _ = writeln!(
                    out,
                    "[{}] {how} on branch pagent/{}",
                    rows[i].task.name, rows[i].task.name
                );
            }
        }
        if signals::interrupted() {
            // Unstarted tasks stay unstarted; running ones stop as Ctrl-C stops them (a
            // signal sent to this process alone is passed on to them, once).
            for i in queue.drain(..) {
                rows[i].state = RowState::NotStarted;
                done += 1;
            }
            if !passed_on {
                children.iter_mut().for_each(|(_, child)| child.interrupt());
                passed_on = true;
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
            Ok(Msg::Stderr(i, line)) => keep_tail(&mut rows[i].stderr, &line),
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
    let cwd = env
        .current_dir
        .clone()
        .unwrap_or_else(|| project.root.clone());
    let root = crate::store::git::discover(&project.root)
        .and_then(|r| crate::store::git::work_tree(&r))
        .unwrap_or_else(|| project.root.clone());
    let report_rows_only = |merges: Option<&[merge::Merge]>, out: &mut dyn std::io::Write| {
        let holdings: Vec<_> = rows
            .iter()
            .map(|r| holdings::holdings(project, &r.task.name, args.into.as_deref()))
            .collect();
        let report = summary::Report {
            rows: &rows,
            holdings: &holdings,
            merges,
            cwd: &cwd,
            root: &root,
        };
        summary::print(&report, style, args.json, out);
    };
    if !(args.merge || args.merge_only) || signals::interrupted() {
        report_rows_only(None, out);
        return Ok(exit_status(&rows, None, false));
    }
    if !args.json {
        let _ = writeln!(out, "\n{}", merge::HEADING);
    }
    let outcomes: Vec<Option<String>> = rows
        .iter()
        .map(|r| (r.state != RowState::Complete).then(|| r.state.as_str().to_owned()))
        .collect();
    let tasks: Vec<Task> = rows.iter().map(|r| r.task.clone()).collect();
    let merges = merge::Queue {
        env,
        project,
        args,
        exe,
        search: &search,
        start_git: start_git.as_ref(),
        out: &mut *out,
    }
    .merge_all(&tasks, &outcomes);
    report_rows_only(Some(&merges), out);
    Ok(exit_status(&rows, Some(&merges), args.merge_only))
}

/// The first queued task that may start now, taken from the queue; and how many queued
/// tasks it found will never start (their rows say why). With nothing running (`idle`)
/// and nothing ready, every task left waits in vain: each is blocked, never waited on.
fn next_ready(
    queue: &mut VecDeque<usize>,
    rows: &mut [Row],
    waits: &after::Waits,
    idle: bool,
    out: &mut dyn std::io::Write,
    plain: bool,
) -> (Option<usize>, usize) {
    let mut blocked = 0;
    let mut at = 0;
    while at < queue.len() {
        let i = queue[at];
        match waits.readiness(i, rows) {
            after::Readiness::Ready => {
                queue.remove(at);
                return (Some(i), blocked);
            }
            after::Readiness::Wait => at += 1,
            after::Readiness::Never(why) => {
                queue.remove(at);
                block(&mut rows[i], why, out, plain);
                blocked += 1;
            }
        }
    }
    if idle && blocked == 0 {
        for i in queue.drain(..) {
            let why = "not started: what it waits for did not complete".to_owned();
            block(&mut rows[i], why, out, plain);
            blocked += 1;
        }
    }
    (None, blocked)
}

/// A task that will not start: its row says why (and, without the live table, a line).
fn block(row: &mut Row, why: String, out: &mut dyn std::io::Write, plain: bool) {
    row.state = RowState::Blocked;
    row.detail = why;
    if plain {
        let _ = writeln!(out, "[{}] {}", row.task.name, row.detail);
    }
}

fn new_row(task: Task) -> Row {
    Row {
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
    }
}

/// A row for a task whose loop ended in an earlier run.
fn ended_earlier(row: &mut Row, earlier: &plan::Earlier) {
    row.state = match earlier.status {
        Status::Complete => RowState::Complete,
        _ => RowState::GaveUp,
    };
    row.iterations = earlier.iterations;
    row.detail = match earlier.status {
        Status::Cancelled => format!("cancelled in an earlier run: {}", earlier.reason),
        _ if earlier.reason.is_empty() => "ended in an earlier run".to_owned(),
        _ => format!("{} (an earlier run)", earlier.reason),
    };
    if let Some(usage) = earlier.usage {
        row.usage = table::RowUsage {
            tokens: usage.tokens,
            cost_microusd: usage.cost_microusd,
            cost_known: usage.cost_known,
            reported: usage.reports > 0,
        };
    }
}

fn keep_tail(stderr: &mut String, line: &str) {
    stderr.push_str(line);
    if stderr.len() > 4096 {
        let cut = stderr.len() - 4096;
        let cut = (cut..stderr.len())
            .find(|c| stderr.is_char_boundary(*c))
            .unwrap_or(stderr.len());
        stderr.drain(..cut);
    }
}

/// 0 when every task completed (and merged, when asked); 130 when anything was stopped
/// by a signal; 1 when a loop failed; 3 when a task gave up or a merge was left (or, with
/// `--merge-only`, a task was not run).
fn exit_status(rows: &[Row], merges: Option<&[merge::Merge]>, merge_only: bool) -> ExitStatus {
    let states: Vec<RowState> = rows.iter().map(|r| r.state).collect();
    let merge_interrupted =
        merges.is_some_and(|m| m.iter().any(|m| matches!(m, merge::Merge::Interrupted(_))));
    let stopped = !merge_only
        && states
            .iter()
            .any(|s| matches!(s, RowState::Interrupted | RowState::NotStarted));
    if stopped || merge_interrupted {
        return ExitStatus::Interrupted;
    }
    if states.contains(&RowState::Failed) {
        return ExitStatus::Failure;
    }
    let all_merged = merges.is_none_or(|m| m.iter().all(merge::Merge::is_merged));
    if states.iter().all(|s| *s == RowState::Complete) && all_merged {
        ExitStatus::Success
    } else {
        ExitStatus::GaveUp
    }
}

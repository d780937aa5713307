//! `pagent parallel TASKS_FILE -j N`: one ralph loop per task, each in its own git
//! worktree and branch, N at a time, with a live table and a final summary; with
//! `--merge`, each completed branch merged home afterwards.
//!
//! Each loop is a child `pagent loop --json --worktree NAME --child-plan FILE`, its plan
//! (agent, limits, task) handed over as data in a file (`setup/child_plan.rs`): the same
//! runner,
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
pub(in crate::runner) mod child;
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
use crate::runner::repo_git::{self, Settings};
use crate::setup::plan::ParallelPlan;
use crate::setup::tasks::Task;
use crate::store::project::Project;
use pagent_door::process::signals;
use pagent_door::process::{Running, SearchPath};

use child::{Launcher, Msg};

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
    // Before any worktree is made: where no loop could contain its agent, none starts.
    super::sandbox::refuse_early(&args.agent, &search)?;
    let steps = plan::plan(project, env, &tasks, args.force);
    let (rows, queue) = first_rows(tasks, &steps, args.merge_only);
    let mut board = Board {
        env,
        args,
        live: !args.json && io.stdout_is_terminal && !args.merge_only,
        style: Style::for_stdout(env.no_color, io.stdout_is_terminal),
        out: &mut *io.stdout,
        waits: after::Waits::of(&rows),
        rows,
        steps,
        queue,
        drawn: 0,
    };
    // Before any task's agent runs: what a signed merge's git is compared with.
    let start_git = repo_git::record(&project.root, env, &search);
    let launcher = Launcher {
        exe,
        search: &search,
        project,
        args,
    };
    board.run(&launcher)?;
    if board.live {
        board.draw();
    }
    Ok(board.report(&launcher, start_git.as_ref()))
}

/// Each task's first row (a loop ended in an earlier run is shown as it ended), and the
/// queue of the tasks to run.
fn first_rows(tasks: Vec<Task>, steps: &[Step], merge_only: bool) -> (Vec<Row>, VecDeque<usize>) {
    let mut rows: Vec<Row> = tasks.into_iter().map(new_row).collect();
    let mut queue: VecDeque<usize> = VecDeque::new();
    for (i, step) in steps.iter().enumerate() {
        match step {
            Step::Ended(earlier) => ended_earlier(&mut rows[i], earlier),
            Step::Run(mode) if merge_only => {
                let (state, detail) = merge::not_run(*mode == child::Mode::Resume);
                rows[i].state = state;
                rows[i].detail = detail;
            }
            Step::Run(_) => queue.push_back(i),
        }
    }
    (rows, queue)
}

/// The tasks of one run as they go: their rows, what each needs on this run, the queue
/// of those still to start, and where their lines are shown.
struct Board<'a> {
    env: &'a Env,
    args: &'a ParallelPlan,
    /// The live table is drawn (a terminal, not `--json`).
    live: bool,
    style: Style,
    out: &'a mut dyn std::io::Write,
    rows: Vec<Row>,
    steps: Vec<Step>,
    queue: VecDeque<usize>,
    waits: after::Waits,
    /// How many lines the live table took when last drawn.
    drawn: usize,
}

impl Board<'_> {
    /// Plain lines, one per event: neither the live table nor `--json`.
    fn plain(&self) -> bool {
        !self.live && !self.args.json
    }

    /// Runs the queued tasks, `--jobs` at a time, until every row has ended.
    fn run(&mut self, launcher: &Launcher<'_>) -> anyhow::Result<()> {
        let (tx, rx) = mpsc::channel();
        let mut children: Vec<(usize, Running)> = Vec::new();
        let mut done = self.rows.len() - self.queue.len();
        let mut passed_on = false;
        while done < self.rows.len() {
            done += self.start_ready(launcher, &mut children, &tx)?;
            if signals::interrupted() {
                // Unstarted tasks stay unstarted; running ones stop as Ctrl-C stops them
                // (a signal sent to this process alone is passed on to them, once).
                for i in self.queue.drain(..) {
                    self.rows[i].state = RowState::NotStarted;
                    done += 1;
                }
                if !passed_on {
                    children.iter_mut().for_each(|(_, child)| child.interrupt());
                    passed_on = true;
                }
            }
            match rx.recv_timeout(Duration::from_millis(200)) {
                Ok(Msg::Line(i, line)) => self.line(i, &line),
                Ok(Msg::Stderr(i, line)) => keep_tail(&mut self.rows[i].stderr, &line),
                Ok(Msg::Exit(i)) => {
                    let code = children
                        .iter()
                        .position(|(j, _)| *j == i)
                        .and_then(|pos| children.remove(pos).1.wait());
                    self.exited(i, code);
                    done += 1;
                }
                Err(_) => {}
            }
            if self.live {
                self.draw();
            }
        }
        Ok(())
    }

    /// Starts queued tasks while a job is free and one is ready; how many it found will
    /// never start.
    fn start_ready(
        &mut self,
        launcher: &Launcher<'_>,
        children: &mut Vec<(usize, Running)>,
        tx: &mpsc::Sender<Msg>,
    ) -> anyhow::Result<usize> {
        let mut done = 0;
        let plain = self.plain();
        while children.len() < self.args.jobs as usize && !signals::interrupted() {
            let idle = children.is_empty();
            let (next, blocked) = next_ready(
                &mut self.queue,
                &mut self.rows,
                &self.waits,
                idle,
                self.out,
                plain,
            );
            done += blocked;
            let Some(i) = next else { break };
            let Step::Run(mode) = self.steps[i] else {
                continue;
            };
            if mode != child::Mode::Resume
                && let Err(why) = after::start_branch(
                    launcher.project,
                    &self.rows[i].task.name,
                    &self.waits.names(i, &self.rows),
                )
            {
                block(&mut self.rows[i], why, self.out, plain);
                done += 1;
                continue;
            }
            let row = &mut self.rows[i];
            let child = launcher.spawn(&row.task, mode, i, tx)?;
            row.state = RowState::Running;
            row.started = Some(Instant::now());
            children.push((i, child));
            if plain {
                let how = if mode == child::Mode::Resume {
                    "resumed"
                } else {
                    "started"
                };
                let name = &row.task.name;
                let _ = writeln!(self.out, "[{name}] {how} on branch pagent/{name}");
            }
        }
        Ok(done)
    }

    /// A line of a child's JSON output: passed on under `--json`, folded into its row.
    fn line(&mut self, i: usize, line: &str) {
        if self.args.json
            && let Ok(mut event) = serde_json::from_str::<Value>(line)
        {
            event["task"] = json!(self.rows[i].task.name);
            let _ = writeln!(self.out, "{event}");
        }
        let plain = self.plain();
        apply(&mut self.rows[i], line, plain, self.out);
    }

    /// A child ended with `code`: its row says how, a failure with its last stderr line.
    fn exited(&mut self, i: usize, code: Option<i32>) {
        let plain = self.plain();
        let row = &mut self.rows[i];
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
        if plain {
            let _ = writeln!(
                self.out,
                "[{}] {} after {}: {}",
                row.task.name,
                row.state.as_str(),
                pagent_engine::count(row.iterations, "iteration"),
                row.detail
            );
        }
    }

    fn draw(&mut self) {
        let size = Size::ask(Size::from_env(self.env));
        self.drawn = live::draw(&self.rows, self.drawn, size, self.style, self.out);
    }

    /// The summary, after the merge queue when asked (and not interrupted); the exit
    /// status of the whole run.
    fn report(mut self, launcher: &Launcher<'_>, start_git: Option<&Settings>) -> ExitStatus {
        let args = self.args;
        if !(args.merge || args.merge_only) || signals::interrupted() {
            self.summary(launcher.project, None);
            return exit_status(&self.rows, None, false);
        }
        if !args.json {
            let _ = writeln!(self.out, "\n{}", merge::HEADING);
        }
        let outcomes: Vec<Option<String>> = self
            .rows
            .iter()
            .map(|r| (r.state != RowState::Complete).then(|| r.state.as_str().to_owned()))
            .collect();
        let tasks: Vec<Task> = self.rows.iter().map(|r| r.task.clone()).collect();
        let merges = merge::Queue {
            env: self.env,
            project: launcher.project,
            args,
            exe: launcher.exe,
            search: launcher.search,
            start_git,
            out: &mut *self.out,
        }
        .merge_all(&tasks, &outcomes);
        self.summary(launcher.project, Some(&merges));
        exit_status(&self.rows, Some(&merges), args.merge_only)
    }

    /// The end's words: each task's row and what its branch holds, and the merges.
    fn summary(&mut self, project: &Project, merges: Option<&[merge::Merge]>) {
        let cwd = self
            .env
            .current_dir
            .clone()
            .unwrap_or_else(|| project.root.clone());
        let root = crate::store::git::discover(&project.root)
            .and_then(|r| crate::store::git::work_tree(&r))
            .unwrap_or_else(|| project.root.clone());
        let holdings: Vec<_> = self
            .rows
            .iter()
            .map(|r| holdings::holdings(project, &r.task.name, self.args.into.as_deref()))
            .collect();
        let report = summary::Report {
            rows: &self.rows,
            holdings: &holdings,
            merges,
            cwd: &cwd,
            root: &root,
        };
        summary::print(&report, self.style, self.args.json, self.out);
    }
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

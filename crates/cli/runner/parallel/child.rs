//! One child loop: the `pagent loop --json --worktree NAME --child-plan FILE` that runs
//! a task, and the threads that forward its output to the orchestrator.
//!
//! Every child gets the agent options `pagent parallel` was given, so all tasks run the
//! same agent the same way, as data: the plan file `setup/child_plan.rs` writes in the
//! project's plans folder and the child reads back (its SHA-256 on the child's command
//! line), not flags to be parsed again. What every child is started with is one
//! [`Launcher`]. Each pipe has its own reader thread feeding one channel; the stdout
//! reader's end is how the parent learns that a child is exiting.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::mpsc;
use std::thread;

use anyhow::Context;

use crate::setup::child_plan::{ChildPlan, ChildStart};
use crate::setup::plan::ParallelPlan;
use crate::setup::tasks::Task;
use crate::store::project::Project;
use pagent_door::process::{Input, Launch, Program, Running, SearchPath, Streams};

pub(in crate::runner) enum Msg {
    Line(usize, String),
    Stderr(usize, String),
    /// The child closed its stdout: it is ending.
    Exit(usize),
}

/// How a child takes up its task's worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(in crate::runner) enum Mode {
    /// A new ralph loop for the task (`force`: replacing one that is active there).
    Start { force: bool },
    /// The loop active in the worktree continues: an interrupted task, or a conflict
    /// resolution the merge queue set up there.
    Resume,
}

/// What every child loop of one `pagent parallel` is started with: this binary, the
/// cleaned PATH, the project and the parallel plan.
pub(in crate::runner) struct Launcher<'a> {
    pub exe: &'a Path,
    pub search: &'a SearchPath,
    pub project: &'a Project,
    pub args: &'a ParallelPlan,
}

impl Launcher<'_> {
    /// Starts the loop for `task` (row `i`), its output forwarded to `tx`.
    pub(in crate::runner) fn spawn(
        &self,
        task: &Task,
        mode: Mode,
        i: usize,
        tx: &mpsc::Sender<Msg>,
    ) -> anyhow::Result<Running> {
        let Launcher {
            exe,
            search,
            project,
            args,
        } = *self;
        let (plan, sha256) = child_plan(args, task, mode)
            .write(project, &task.name)
            .with_context(|| format!("cannot start the loop for task {}", task.name))?;
        // In the terminal's process group: Ctrl-C reaches each loop, which stops cleanly.
        let command = Launch::new(Program::at(exe.to_path_buf()), &project.root, search)
            .in_callers_group()
            .arg("--project")
            .arg(&project.root)
            .args(["loop", "--json", "--worktree", &task.name, "--child-plan"])
            .arg(&plan)
            .args(["--child-plan-sha256", &sha256]);
        let mut child = command
            .env(crate::cli::env::PAGENT_PARALLEL, "1")
            .spawn(Streams {
                stdin: Input::Null,
                output: true,
            })
            .with_context(|| format!("cannot start the loop for task {}", task.name))?;
        forward(child.take_stdout(), tx.clone(), i, Msg::Line, true);
        forward(child.take_stderr(), tx.clone(), i, Msg::Stderr, false);
        Ok(child)
    }
}

/// What the child loop of `task` is started with: the agent and limits of the whole run,
/// and for a new loop the task with its promise and iterations.
fn child_plan(args: &ParallelPlan, task: &Task, mode: Mode) -> ChildPlan {
    let start = match mode {
        Mode::Start { force } => Some(ChildStart {
            task: task.task.clone(),
            promise: task.promise.clone().unwrap_or_else(|| "DONE".to_owned()),
            max_iterations: task.max_iterations.unwrap_or(args.max_iterations),
            trust: args.trust,
            force,
        }),
        Mode::Resume => None,
    };
    ChildPlan::new(args.agent.clone(), args.budget, !args.no_checkpoint, start)
}

/// Sends each line of `pipe`; the stdout reader also reports the exit when it closes.
fn forward(
    pipe: Option<impl Read + Send + 'static>,
    tx: mpsc::Sender<Msg>,
    i: usize,
    wrap: fn(usize, String) -> Msg,
    report_exit: bool,
) {
    let Some(pipe) = pipe else { return };
    thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if tx.send(wrap(i, format!("{line}\n"))).is_err() {
                return;
            }
        }
        if report_exit {
            let _ = tx.send(Msg::Exit(i));
        }
    });
}

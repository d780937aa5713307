//! The one seam between a team and the loop runner: a story's loop is a child `pagent
//! loop --json --worktree STORY ralph ...`, started exactly as `pagent parallel` starts a
//! task's (`parallel::child`): the same runner as `pagent loop`, with its budgets, limit
//! waits, retries, checkpoints after every iteration and Ctrl-C, in the story's worktree
//! of the worker's clone, on branch `pagent/STORY`. The worker hears its JSON events and
//! its end; it never reaches into the runner's insides, so a change of the runner's
//! shape touches nothing here.

use std::path::PathBuf;
use std::sync::mpsc;
use std::time::Duration;

use crate::runner::loop_event::LoopEvent;
use crate::runner::parallel::child::{Launcher, Mode, Msg};
use crate::setup::plan::ParallelPlan;
use crate::setup::tasks::Task;
use crate::store::project::Project;
use pagent_door::process::{Running, SearchPath};

/// What every story's loop of a worker is started with.
#[derive(Debug, Clone)]
pub struct LoopSettings {
    pub exe: PathBuf,
    pub search: SearchPath,
    /// The worker's clone.
    pub project: Project,
    /// The agent, budgets, iterations and `--trust`, as a parallel task's loop takes them.
    pub plan: ParallelPlan,
}

/// How the loop takes up the story's worktree.
#[derive(Debug, Clone)]
pub enum How {
    /// A new ralph loop with this task (replacing whatever loop is there).
    New {
        task: String,
        promise: Option<String>,
        max_iterations: Option<u32>,
    },
    /// The loop set up there continues (after a pause, or a resolution set up there).
    Resume,
}

/// What the worker hears from a running loop.
#[derive(Debug)]
pub enum Heard {
    Event(LoopEvent),
    Stderr(String),
    /// The loop ended with this exit code (`None`: a signal ended it).
    Ended(Option<i32>),
}

/// A story's loop, running.
#[derive(Debug)]
pub struct StoryLoop {
    child: Running,
    rx: mpsc::Receiver<Msg>,
    ended: bool,
}

impl StoryLoop {
    /// Starts the loop of `story` in its worktree.
    pub fn start(settings: &LoopSettings, story: &str, how: &How) -> anyhow::Result<StoryLoop> {
        let (task, mode) = match how {
            How::New {
                task,
                promise,
                max_iterations,
            } => (
                Task {
                    name: story.to_owned(),
                    task: task.clone(),
                    promise: promise.clone(),
                    max_iterations: *max_iterations,
                    check: None,
                    after: Vec::new(),
                    story: None,
                },
                Mode::Start { force: true },
            ),
            How::Resume => (
                Task {
                    name: story.to_owned(),
                    task: String::new(),
                    promise: None,
                    max_iterations: None,
                    check: None,
                    after: Vec::new(),
                    story: None,
                },
                Mode::Resume,
            ),
        };
        let (tx, rx) = mpsc::channel();
        let launcher = Launcher {
            exe: &settings.exe,
            search: &settings.search,
            project: &settings.project,
            args: &settings.plan,
        };
        let child = launcher.spawn(&task, mode, 0, &tx)?;
        Ok(StoryLoop {
            child,
            rx,
            ended: false,
        })
    }

    /// The next thing the loop says, waiting at most `wait`.
    pub fn hear(&mut self, wait: Duration) -> Option<Heard> {
        if self.ended {
            return None;
        }
        match self.rx.recv_timeout(wait) {
            Ok(Msg::Line(_, line)) => Some(match serde_json::from_str::<LoopEvent>(&line) {
                Ok(event) => Heard::Event(event),
                Err(_) => Heard::Stderr(line),
            }),
            Ok(Msg::Stderr(_, line)) => Some(Heard::Stderr(line)),
            Ok(Msg::Exit(_)) | Err(mpsc::RecvTimeoutError::Disconnected) => {
                self.ended = true;
                Some(Heard::Ended(self.child.wait()))
            }
            Err(mpsc::RecvTimeoutError::Timeout) => None,
        }
    }

    /// Ctrl-C for the loop alone: it saves its state and stops (exit 130).
    pub fn interrupt(&mut self) {
        self.child.interrupt();
    }
}

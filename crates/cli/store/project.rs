//! The project pagent works in, and where its files live inside it.
//!
//! ```text
//! .claude/pagent-pipeline.json    the state (sealed, written atomically)
//! .claude/pagent/events.jsonl     the event log
//! .claude/pagent/lock             the lock that serialises state writers
//! .claude/pagent/workflows/*.json the project's own workflows
//! .claude/pagent/config.json      the project's own settings
//! .claude/prompts/<stage>.md      prompt overrides
//! .claude/pagent/runs/            `pagent loop`: each agent run's prompt and output
//! .claude/pagent/runner.lock      held by the `pagent loop` driving the state
//! .claude/pagent/worktrees/NAME   `pagent loop --worktree NAME` (see `worktree.rs`)
//! ```
//!
//! Every path here is relative to the root and reached through the project's
//! [`Dir`](crate::store::door::Dir), the one door to its files.

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::store::door::{self, Dir};

pub const STATE_FILE: &str = ".claude/pagent-pipeline.json";
pub const PAGENT_DIR: &str = ".claude/pagent";
pub const EVENTS_FILE: &str = ".claude/pagent/events.jsonl";
pub const LOCK_FILE: &str = ".claude/pagent/lock";
pub const WORKFLOWS_DIR: &str = ".claude/pagent/workflows";
pub const CONFIG_FILE: &str = ".claude/pagent/config.json";
pub const PROMPTS_DIR: &str = ".claude/prompts";
pub const RUNS_DIR: &str = ".claude/pagent/runs";
pub const RUNNER_LOCK: &str = ".claude/pagent/runner.lock";

#[derive(Debug, Clone)]
pub struct Project {
    /// Canonical (symlinks resolved), so the seal binds the real folder.
    pub root: PathBuf,
    /// The root, held open: every file access goes through it.
    dir: Arc<Dir>,
}

/// The root named by the flag or Claude Code's environment, before any stdin is read.
pub fn root_from_flag_or_env(global: &Global, env: &Env) -> Option<PathBuf> {
    global.project.clone().or_else(|| env.project_dir.clone())
}

impl Project {
    /// `--project`, else `CLAUDE_PROJECT_DIR`, else `hook_cwd`, else the current folder.
    pub fn resolve(global: &Global, env: &Env, hook_cwd: Option<&Path>) -> anyhow::Result<Project> {
        let chosen = root_from_flag_or_env(global, env)
            .or_else(|| hook_cwd.map(Path::to_path_buf))
            .or_else(|| env.current_dir.clone())
            .context("cannot tell which project to use: pass --project DIR")?;
        Project::at(&chosen)
    }

    pub fn at(path: &Path) -> anyhow::Result<Project> {
        let root = door::canonical_dir(path)
            .with_context(|| format!("the project folder {} cannot be opened", path.display()))?;
        let dir = Dir::open(&root)
            .with_context(|| format!("the project folder {} cannot be opened", root.display()))?;
        Ok(Project {
            root,
            dir: Arc::new(dir),
        })
    }

    /// The one door to the project's files.
    pub fn dir(&self) -> &Dir {
        &self.dir
    }

    /// What the seal binds the state to: the real path's bytes, never a lossy rendering
    /// (two folders whose names differ only in bytes that are not UTF-8 would share it).
    pub fn seal_key(&self) -> Vec<u8> {
        self.root.as_os_str().as_bytes().to_vec()
    }

    /// `path` relative to the root when inside it, else as given.
    pub fn display_path(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }
}

//! The project pagent works in, and where its files live inside it.
//!
//! ```text
//! .claude/pagent-pipeline.json    the state (sealed, written atomically)
//! .claude/pagent/events.jsonl     the event log
//! .claude/pagent/lock             the lock that serialises state writers
//! .claude/pagent/workflows/*.json the project's own workflows
//! .claude/prompts/<stage>.md      prompt overrides
//! ```

use std::os::unix::ffi::OsStrExt;
use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::args::Global;
use crate::env::Env;

pub const STATE_FILE: &str = ".claude/pagent-pipeline.json";
pub const PAGENT_DIR: &str = ".claude/pagent";

#[derive(Debug, Clone)]
pub struct Project {
    /// Canonical (symlinks resolved), so the seal binds the real folder.
    pub root: PathBuf,
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
        let root = path
            .canonicalize()
            .with_context(|| format!("the project folder {} cannot be opened", path.display()))?;
        anyhow::ensure!(
            root.is_dir(),
            "the project path {} is not a folder",
            root.display()
        );
        Ok(Project { root })
    }

    pub fn state_path(&self) -> PathBuf {
        self.root.join(STATE_FILE)
    }

    pub fn pagent_dir(&self) -> PathBuf {
        self.root.join(PAGENT_DIR)
    }

    pub fn events_path(&self) -> PathBuf {
        self.pagent_dir().join("events.jsonl")
    }

    pub fn lock_path(&self) -> PathBuf {
        self.pagent_dir().join("lock")
    }

    pub fn workflows_dir(&self) -> PathBuf {
        self.pagent_dir().join("workflows")
    }

    pub fn prompts_dir(&self) -> PathBuf {
        self.root.join(".claude").join("prompts")
    }

    /// Marker remembering which unsealed state the user was already warned about.
    pub fn unsealed_marker(&self) -> PathBuf {
        self.pagent_dir().join("unsealed-warned")
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

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
//! .pagent/worktrees/NAME          `pagent loop --worktree NAME` and `pagent parallel`'s
//!                                 tasks (see `worktree.rs`), at the work tree's root
//! ```
//!
//! The worktrees are the one thing outside `.claude/`: Claude Code (2.1.197 and 2.1.330
//! alike) refuses every edit under a `.claude` folder ("a sensitive file") in `-p`, so an
//! agent working in a worktree there could change nothing at all.
//!
//! Every path here is relative to the root and reached through the project's
//! [`Dir`](pagent_door::files::Dir), the one door to its files.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;

use crate::cli::env::Env;
use pagent_door::files::{self, Dir};

pub const STATE_FILE: &str = ".claude/pagent-pipeline.json";
/// The state before the last write, beside it: the file the next write fills and swaps
/// in (`Dir::write_atomic_swapping`). Its name is in the folder of [`STATE_FILE`].
pub const STATE_SHADOW: &str = ".pagent-pipeline.json.prev";
pub const PAGENT_DIR: &str = ".claude/pagent";
pub const EVENTS_FILE: &str = ".claude/pagent/events.jsonl";
pub const LOCK_FILE: &str = ".claude/pagent/lock";
pub const WORKFLOWS_DIR: &str = ".claude/pagent/workflows";
pub const CONFIG_FILE: &str = ".claude/pagent/config.json";
pub const PROMPTS_DIR: &str = ".claude/prompts";
pub const RUNS_DIR: &str = ".claude/pagent/runs";
pub const RUNNER_LOCK: &str = ".claude/pagent/runner.lock";
/// The plans `pagent parallel` hands its child loops, one file per task.
pub const CHILD_PLANS_DIR: &str = ".claude/pagent/parallel";
/// Where loop worktrees live, relative to the repository's work tree.
pub const WORKTREES_DIR: &str = ".pagent/worktrees";

#[derive(Debug, Clone)]
pub struct Project {
    /// Canonical (symlinks resolved), so the seal binds the real folder.
    pub root: PathBuf,
    /// The root, held open: every file access goes through it.
    dir: Arc<Dir>,
}

/// The root named by the flag (`--project`, as `cmd/` read it) or Claude Code's
/// environment, before any stdin is read.
pub fn root_from_flag_or_env(flag: Option<&Path>, env: &Env) -> Option<PathBuf> {
    flag.map(Path::to_path_buf)
        .or_else(|| env.project_dir.clone())
}

impl Project {
    /// `--project`, else `CLAUDE_PROJECT_DIR`, else `hook_cwd`, else the current folder.
    pub fn resolve(
        flag: Option<&Path>,
        env: &Env,
        hook_cwd: Option<&Path>,
    ) -> anyhow::Result<Project> {
        let chosen = root_from_flag_or_env(flag, env)
            .or_else(|| hook_cwd.map(Path::to_path_buf))
            .or_else(|| env.current_dir.clone())
            .context("cannot tell which project to use: pass --project DIR")?;
        let project = Project::at(&chosen)?;
        if let Some(config) = &env.config_dir {
            project.refuse_config_inside(config, env.current_dir.as_deref())?;
        }
        Ok(project)
    }

    /// pagent's config folder holds the secret that seals states, the trust list and the
    /// notification command: a project must not be able to hold it. A cloned repository's
    /// `.claude/settings.json` can set environment variables for hooks (`"env"`), so
    /// `PAGENT_CONFIG_DIR`, `XDG_CONFIG_HOME` or `HOME` pointing into the project would
    /// let it forge a sealed state and trust its own commands. Refused, unless the project
    /// is the user's home folder itself (or above it), whose `.config` is legitimately
    /// inside; the home comes from the password database, which no setting can change.
    fn refuse_config_inside(&self, config: &Path, cwd: Option<&Path>) -> anyhow::Result<()> {
        let config = files::absolute_real(config, cwd.unwrap_or(&self.root));
        // The password database only when it matters: a hook asks it nothing otherwise.
        if config_may_live_at(&self.root, &config, files::passwd_home) {
            return Ok(());
        }
        anyhow::bail!(
            "pagent's config folder {} is inside the project {}: a project must not hold pagent's \
             secret and trust files (is PAGENT_CONFIG_DIR, XDG_CONFIG_HOME or HOME set by the \
             project's .claude/settings.json?). Nothing was done.",
            config.display(),
            self.root.display()
        )
    }

    pub fn at(path: &Path) -> anyhow::Result<Project> {
        let root = files::canonical_dir(path)
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

    /// Whether a `pagent loop` holds the runner lock now (drives the state); `None` when
    /// that cannot be told (the lock file is not a regular file, an I/O error).
    pub fn runner_is_running(&self) -> Option<bool> {
        self.dir.lock_is_held(Path::new(RUNNER_LOCK)).ok()
    }

    /// What the seal binds the state to: the real path's bytes, never a lossy rendering
    /// (two folders whose names differ only in bytes that are not UTF-8 would share it).
    pub fn seal_key(&self) -> Vec<u8> {
        files::os_bytes(self.root.as_os_str()).to_vec()
    }

    /// `path` relative to the root when inside it, else as given.
    pub fn display_path(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .to_string_lossy()
            .into_owned()
    }
}

/// Whether pagent's config folder may be `config` for a project at `root`: anywhere
/// outside the project, or inside it only when the project is the user's home (or an
/// ancestor of it), the home asked of `home` only then.
fn config_may_live_at(root: &Path, config: &Path, home: impl FnOnce() -> Option<PathBuf>) -> bool {
    !config.starts_with(root) || home().is_some_and(|home| home.starts_with(root))
}

/// A path the user (or Claude Code) named, relative to the project root; an error when it
/// is not inside. Decided on the path's words first (`..` folded), so a symlink on the way
/// is left for the door to refuse; a path through a symlink to the project itself (a
/// non-canonical root) is tried with its folder resolved.
pub fn rel_in_project(project: &Project, cwd: &Path, path: &Path) -> anyhow::Result<PathBuf> {
    let joined = if path.is_absolute() {
        path.to_path_buf()
    } else {
        cwd.join(path)
    };
    let mut lexical = PathBuf::new();
    for component in joined.components() {
        match component {
            std::path::Component::ParentDir => {
                lexical.pop();
            }
            std::path::Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    if let Ok(rel) = lexical.strip_prefix(&project.root) {
        return Ok(rel.to_path_buf());
    }
    let parent = lexical.parent().unwrap_or(Path::new("/"));
    let name = lexical
        .file_name()
        .ok_or_else(|| anyhow::anyhow!("{} names no file", joined.display()))?;
    let real_parent =
        files::canonical(parent).map_err(|e| anyhow::anyhow!("{}: {e}", joined.display()))?;
    match real_parent.join(name).strip_prefix(&project.root) {
        Ok(rel) => Ok(rel.to_path_buf()),
        Err(_) => anyhow::bail!(
            "{} is not inside the project {}",
            path.display(),
            project.root.display()
        ),
    }
}

#[cfg(test)]
mod config_place_tests {
    use super::*;

    #[test]
    fn a_config_folder_inside_the_project_is_refused_unless_the_project_is_home() {
        let home = Some(PathBuf::from("/home/u"));
        let cases = [
            ("/work/p", "/work/p/.evil", home.clone(), false),
            ("/work/p", "/work/p", home.clone(), false),
            ("/work/p", "/work/pp/.config", home.clone(), true),
            ("/work/p", "/home/u/.config/pagent", home.clone(), true),
            ("/home/u/code/p", "/home/u/code/p/x", home.clone(), false),
            ("/home/u", "/home/u/.config/pagent", home.clone(), true),
            ("/", "/home/u/.config/pagent", home.clone(), true),
            ("/work/p", "/work/p/.evil", None, false),
        ];
        for (root, config, home, allowed) in cases {
            assert_eq!(
                config_may_live_at(Path::new(root), Path::new(config), || home),
                allowed,
                "{root} {config}"
            );
        }
    }
}

//! The search path: `PATH` as pagent uses it to find programs, and as every child gets it.
//!
//! An empty entry (`PATH=:/usr/bin`, a trailing `:`) and a relative one (`.`, `bin`) mean
//! "wherever the process happens to be", which for pagent is a project: `sh` would be the
//! repository's `./sh`. An absolute entry inside the project (`/home/me/repo/bin`, put
//! there by a tool that edits `PATH` per folder) means the same. All of them are dropped,
//! in the order kept, once, when the search path is made; lookups then only ever return
//! an executable regular file under what is left. A project that is the user's home
//! folder (or above it) is the one exception: `~/.local/bin` is the user's, not a
//! stranger's, and the home comes from the password database, which no setting changes.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::files;

/// `PATH` with its empty, relative and in-project entries removed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SearchPath {
    dirs: Vec<PathBuf>,
    /// Canonical folders no entry may be inside (the project, a worktree's repository).
    projects: Vec<PathBuf>,
}

impl SearchPath {
    /// `path_env` (the `PATH` pagent was started with) cleaned for work in `projects`.
    pub fn new(path_env: Option<&OsStr>, projects: &[&Path]) -> SearchPath {
        let mut projects: Vec<PathBuf> = projects
            .iter()
            .map(|p| files::canonical(p).unwrap_or_else(|_| p.to_path_buf()))
            .collect();
        if !projects.is_empty()
            && let Some(home) = files::passwd_home()
        {
            projects.retain(|p| !home.starts_with(p));
        }
        let inside = |dir: &Path| {
            let real = files::canonical(dir).unwrap_or_else(|_| dir.to_path_buf());
            projects
                .iter()
                .any(|p| real.starts_with(p) || dir.starts_with(p))
        };
        let mut dirs: Vec<PathBuf> = Vec::new();
        for dir in path_env.map(std::env::split_paths).into_iter().flatten() {
            if dir.as_os_str().is_empty() || !dir.is_absolute() || inside(&dir) {
                continue;
            }
            if !dirs.contains(&dir) {
                dirs.push(dir);
            }
        }
        SearchPath { dirs, projects }
    }

    /// The first executable regular file called `name` in the kept folders (on Windows
    /// `name.exe`, `.com`, `.cmd` or `.bat` when `name` has no extension, in that order in
    /// each folder, as Windows' own search does).
    pub fn find(&self, name: &str) -> Option<PathBuf> {
        let names: Vec<String> = if cfg!(windows) && Path::new(name).extension().is_none() {
            ["exe", "com", "cmd", "bat"]
                .iter()
                .map(|ext| format!("{name}.{ext}"))
                .collect()
        } else {
            vec![name.to_owned()]
        };
        self.dirs
            .iter()
            .flat_map(|dir| names.iter().map(move |n| dir.join(n)))
            .find(|candidate| files::is_executable_file(candidate))
    }

    /// Whether `path` is inside one of the projects this search path was made for.
    pub(crate) fn is_in_project(&self, path: &Path) -> bool {
        let real = files::canonical(path).unwrap_or_else(|_| path.to_path_buf());
        self.projects
            .iter()
            .any(|p| real.starts_with(p) || path.starts_with(p))
    }

    /// The value children get as their `PATH`.
    pub(crate) fn to_env(&self) -> OsString {
        std::env::join_paths(&self.dirs).unwrap_or_default()
    }

    /// The folders kept, in order.
    #[cfg(test)]
    #[cfg(unix)]
    pub(crate) fn dirs(&self) -> &[PathBuf] {
        &self.dirs
    }
}

//! The project a terminal command means when none is named: the current folder, or the
//! folder above it whose loop it is in, as git finds its repository from a subfolder.
//! `pagent status` (and `cancel`, `pause`, `resume`, `log`, `prompt`) in `src/` of a
//! project with a loop once said "no loop" and invited starting another.
//!
//! The walk is careful about whose folder it enters. It goes up from the current folder
//! and takes the first folder whose `.claude/pagent-pipeline.json` is the user's own
//! (sealed with their secret for that very folder, the current generation): a state a
//! stranger planted in a parent, or committed to a repository, is never taken. It stops
//! without a loop at
//!
//! - a project of its own: a folder with a `.claude/` or `.git` but no loop of the
//!   user's (a nested project, a repository inside another, or a `.claude/` planted in a
//!   parent that is not the user's project);
//! - the top of the git work tree the current folder is in;
//! - the user's home folder (never looked at: `~/.claude` is Claude Code's own folder)
//!   and the filesystem's root.
//!
//! When the current folder itself holds a state file, it is the project, as before
//! (whoever's the state is: `status` then says it is not the user's). Every file is read
//! through the project's door.

use std::path::{Path, PathBuf};

use crate::cli::env::Env;
use crate::store::project::{Project, STATE_FILE, root_from_flag_or_env};
use crate::store::user::UserDir;
use crate::store::{Ownership, ownership, read_state};
use pagent_door::files as door;

/// `--project`, else `CLAUDE_PROJECT_DIR`, else the folder above the current one whose
/// loop it is in, else the current folder. A loop found above is said to `note` ("the
/// loop of ROOT, above the current folder"), so a cancel in `src/` names what it ends.
pub fn project_of_loop(
    flag: Option<&Path>,
    env: &Env,
    note: &mut dyn FnMut(&str),
) -> anyhow::Result<Project> {
    if root_from_flag_or_env(flag, env).is_some() {
        return Project::resolve(flag, env, None);
    }
    let found = env
        .current_dir
        .as_deref()
        .and_then(|cwd| loop_above(cwd, env));
    let project = Project::resolve(found.as_deref(), env, None)?;
    if found.is_some() {
        note(&format!(
            "the loop of {}, above the current folder",
            project.root.display()
        ));
    }
    Ok(project)
}

/// The nearest folder above `cwd` that holds the user's own loop, within the bounds the
/// module says.
fn loop_above(cwd: &Path, env: &Env) -> Option<PathBuf> {
    let start = door::canonical_dir(cwd).ok()?;
    if is_project(&Project::at(&start).ok()?) {
        return None;
    }
    let top = crate::store::git::discover(&start)
        .and_then(|repo| crate::store::git::work_tree(&repo))
        .and_then(|top| door::canonical_dir(&top).ok());
    let homes: Vec<PathBuf> = [door::passwd_home(), env.install.home.clone()]
        .into_iter()
        .flatten()
        .filter_map(|home| door::canonical_dir(&home).ok())
        .collect();
    let user_dir = UserDir::of(env);
    for dir in start.ancestors().skip(1) {
        if homes.iter().any(|home| home == dir) || dir.parent().is_none() {
            return None;
        }
        if top.as_ref().is_some_and(|top| !dir.starts_with(top)) {
            return None;
        }
        let project = Project::at(dir).ok()?;
        if owns_loop(&project, &user_dir) {
            return Some(dir.to_path_buf());
        }
        if is_project(&project) {
            return None;
        }
    }
    None
}

/// Whether the folder is a project of its own: its `.claude/`, its `.git`, or a state
/// (anything there, even a link the door will not follow, or an error: only "nothing
/// there" lets the walk go on).
fn is_project(project: &Project) -> bool {
    [".claude", ".git", STATE_FILE]
        .iter()
        .any(|rel| !matches!(project.dir().kind(Path::new(rel)), Ok(None)))
}

/// Whether the folder's state file is the user's own.
fn owns_loop(project: &Project, user_dir: &UserDir) -> bool {
    read_state(project)
        .ok()
        .flatten()
        .is_some_and(|state| ownership(project, user_dir, &state) == Ownership::Own)
}

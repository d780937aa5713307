//! What `pagent uninstall` leaves in a HOME, and why it says so: a HOME is left with the
//! files it had, or uninstall names each one it leaves and the reason.
//!
//! Two kinds remain. Claude Code's own files that its first `claude plugin` command
//! created in a fresh HOME (`~/.claude.json`, `~/.claude/backups`, and `~/.claude`
//! holding them): they are Claude Code's settings, which may hold more by now, so
//! pagent never deletes them, but it names them when its record says they were not there
//! before the install. And pagent's own config folder (`~/.config/pagent`: the secret
//! that seals loop states, the trust list, your `config.json`, the register of loops),
//! which loops create, not the install: kept, and named, unless `--purge` asks for it
//! to go. Even then only the names pagent writes there are removed (the folder may be a
//! `PAGENT_CONFIG_DIR` of the user's choosing), and the folder itself once it is empty.
//!
//! Outside HOME's install, two more things stay, and uninstall names them with how to
//! remove them: what loops left in each project (its state, event log and run logs,
//! worktrees, the lines in `.git/info/exclude`), named from the register of loops, and
//! pagent itself, the binary that is running (npm's, cargo's, or a copy).

#![allow(clippy::disallowed_methods)] // the user's own folders, as in files.rs

use std::path::{Path, PathBuf};

use super::{Layout, files};
use crate::store::project::{PAGENT_DIR, Project, STATE_FILE, STATE_SHADOW, WORKTREES_DIR};
use crate::store::register;
use crate::store::user::UserDir;
use pagent_door::files::Dir;

/// What pagent keeps in its config folder (store/secret.rs, trust.rs, config.rs,
/// user.rs and register.rs under `projects/`, dashboard/open.rs), and `cache`, where
/// versions before issue 30 left the byte code of their Python checks.
const CONFIG_ITEMS: &[&str] = &[
    "secret",
    "trust.json",
    "config.json",
    "projects",
    "dashboard.html",
    "cache",
    crate::store::user::CREATED,
];

/// The line pagent writes above its entries in a repository's `info/exclude`.
const EXCLUDE_MARK: &str = "# pagent's state and event log (added by pagent)";

/// What pagent leaves in the projects its loops ran in, as lines to say: the projects
/// pagent's register of loops names (read before a purge removes it), each with what it
/// still holds of pagent's, and how to remove it. Nothing when no registered project
/// holds anything. A project whose loop ended over a day ago has left the register, and
/// the words say so.
pub fn in_projects(user_dir: &UserDir) -> Vec<String> {
    let held: Vec<(PathBuf, Vec<&str>)> = register::list(user_dir)
        .into_iter()
        .filter_map(|entry| {
            let items = project_leftovers(&entry.root);
            (!items.is_empty()).then_some((entry.root, items))
        })
        .collect();
    if held.is_empty() {
        return Vec::new();
    }
    let mut lines = vec![format!(
        "left pagent's files in the projects its loops ran in (the register of loops names {}; one whose loop ended over a day ago has left the register and may hold them too):",
        pagent_engine::count(held.len() as u64, "project")
    )];
    for (root, items) in &held {
        lines.push(format!("  {}: {}", root.display(), items.join(", ")));
    }
    lines.push(format!(
        "to remove them, delete those in each project (its .claude/pagent/ also holds the workflows and config.json you wrote there, if any; `git worktree remove` each of .pagent/worktrees/ first), and the lines under \"{EXCLUDE_MARK}\" in its .git/info/exclude"
    ));
    lines
}

/// pagent's files in the project at `root`, through its door.
fn project_leftovers(root: &Path) -> Vec<&'static str> {
    let Ok(project) = Project::at(root) else {
        return Vec::new();
    };
    let there = |rel: &str| {
        project
            .dir()
            .kind_no_follow(Path::new(rel))
            .ok()
            .flatten()
            .is_some()
    };
    let shadow = format!(".claude/{STATE_SHADOW}");
    let mut items: Vec<&str> = [STATE_FILE, &shadow, PAGENT_DIR, WORKTREES_DIR]
        .into_iter()
        .filter(|rel| there(rel))
        .map(|rel| match rel {
            STATE_FILE => ".claude/pagent-pipeline.json",
            PAGENT_DIR => ".claude/pagent/",
            WORKTREES_DIR => ".pagent/worktrees/",
            _ => ".claude/.pagent-pipeline.json.prev",
        })
        .collect();
    if excludes_marked(&project) {
        items.push("pagent's lines in .git/info/exclude");
    }
    items
}

/// Whether the project's repository's `info/exclude` holds pagent's lines.
fn excludes_marked(project: &Project) -> bool {
    let Some(repo) = crate::store::git::discover(&project.root) else {
        return false;
    };
    let Ok(common) = Dir::open(repo.commondir()) else {
        return false;
    };
    common
        .read_if_exists(Path::new("info/exclude"), 1024 * 1024)
        .ok()
        .flatten()
        .is_some_and(|text| {
            String::from_utf8_lossy(&text)
                .lines()
                .any(|l| l == EXCLUDE_MARK)
        })
}

/// pagent itself, which no uninstall removes (it is running): how it was installed, told
/// by where it is, and how to remove it.
pub fn the_binary(exe: &Path) -> String {
    let parts: Vec<String> = exe
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    let shown = exe.display();
    if let Some(at) = parts.iter().position(|p| p == "_npx") {
        let fetched: PathBuf = parts.iter().take(at + 2).collect();
        return format!(
            "pagent itself ({shown}) stays in npx's folder {}: delete that folder to remove it",
            fetched.display()
        );
    }
    if parts.iter().any(|p| p == "node_modules") {
        return format!(
            "pagent itself ({shown}) stays installed: `npm uninstall -g pagent` removes it"
        );
    }
    let cargo_bin = exe
        .parent()
        .filter(|bin| bin.file_name().is_some_and(|n| n == "bin"))
        .and_then(Path::parent)
        .and_then(Path::file_name)
        .is_some_and(|n| n == ".cargo");
    if cargo_bin {
        return format!(
            "pagent itself ({shown}) stays installed: `cargo uninstall pagent` removes it"
        );
    }
    format!("pagent itself ({shown}) stays: delete it to remove it")
}

/// Why a path the install brought into being is still there after uninstall.
pub fn why_left(layout: &Layout, path: &Path) -> String {
    if path == layout.claude_json {
        "Claude Code created it when pagent installed its plugin (this HOME had none); it holds Claude Code's own settings, so it stays".to_owned()
    } else if path == layout.config_dir.join("backups") {
        "Claude Code's backups of its settings, made at the same time; they stay with them"
            .to_owned()
    } else if path == layout.config_dir {
        "Claude Code's folder, created by the install, holds Claude Code's own files now".to_owned()
    } else {
        "the install created it, and it holds more than pagent put there now".to_owned()
    }
}

/// pagent's config folder, named (without `--purge`): what it holds and how to remove it.
pub fn kept_config(dir: &Path) -> Option<String> {
    files::is_dir(dir).then(|| {
        format!(
            "left pagent's config folder {} (your settings, the trust list, the secret that seals loop states): `pagent uninstall --purge` removes it too",
            dir.display()
        )
    })
}

/// What `--purge` did to the config folder.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Purged {
    pub removed: Vec<PathBuf>,
    /// Entries pagent does not write there, left alone.
    pub left: Vec<PathBuf>,
    /// The folder itself went (it held nothing else).
    pub folder: bool,
    /// The folders above it that pagent created with it, empty again and removed.
    pub emptied: Vec<PathBuf>,
}

/// Removes pagent's items from its config folder, then the folder if nothing else is in
/// it. A folder that holds none of pagent's items, or is HOME itself, is not touched.
pub fn purge_config(dir: &Path, home: Option<&Path>) -> anyhow::Result<Purged> {
    let mut purged = Purged::default();
    if !files::is_dir(dir) || home.is_some_and(|h| h == dir) {
        return Ok(purged);
    }
    let ours = |name: &str| CONFIG_ITEMS.contains(&name);
    let created = created_above(dir, home);
    let entries = files::entries(dir)?;
    if !entries.iter().any(|p| name_of(p).is_some_and(ours)) {
        purged.left = entries;
        return Ok(purged);
    }
    for entry in entries {
        if name_of(&entry).is_some_and(ours) {
            if files::remove_tree(&entry)? {
                purged.removed.push(entry);
            }
        } else {
            purged.left.push(entry);
        }
    }
    purged.folder = purged.left.is_empty() && files::remove_empty_dir(dir);
    if purged.folder {
        // Deepest first: `~/.config` before `~`'s own parents, were they pagent's too.
        purged.emptied = created
            .into_iter()
            .filter(|p| files::remove_empty_dir(p))
            .collect();
    }
    Ok(purged)
}

/// The folders above `dir` that pagent created along with it ([`CREATED`]), deepest
/// first: only `dir`'s own ancestors below HOME, whatever the file says.
///
/// [`CREATED`]: crate::store::user::CREATED
fn created_above(dir: &Path, home: Option<&Path>) -> Vec<PathBuf> {
    let (Some(home), Ok(Some(text))) = (
        home,
        files::read_text(&dir.join(crate::store::user::CREATED)),
    ) else {
        return Vec::new();
    };
    let listed: Vec<&Path> = text.lines().map(Path::new).collect();
    dir.ancestors()
        .skip(1)
        .take_while(|a| a.starts_with(home) && *a != home)
        .filter(|a| listed.contains(a))
        .map(Path::to_path_buf)
        .collect()
}

fn name_of(path: &Path) -> Option<&str> {
    path.file_name().and_then(|n| n.to_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Uninstall said nothing of `npm uninstall -g pagent`: pagent itself is named, with
    /// the way it came.
    #[cfg(unix)]
    #[test]
    fn issue_30_uninstall_says_how_pagent_itself_is_removed() {
        let said = [
            "/usr/lib/node_modules/pagent/node_modules/pagent-linux-x64/bin/pagent",
            "/home/u/.npm/_npx/6f2a/node_modules/pagent-linux-x64/bin/pagent",
            "/home/u/.cargo/bin/pagent",
            "/opt/pagent/pagent",
        ]
        .map(|exe| the_binary(Path::new(exe)));
        assert_eq!(
            said,
            [
                "pagent itself (/usr/lib/node_modules/pagent/node_modules/pagent-linux-x64/bin/pagent) stays installed: `npm uninstall -g pagent` removes it",
                "pagent itself (/home/u/.npm/_npx/6f2a/node_modules/pagent-linux-x64/bin/pagent) stays in npx's folder /home/u/.npm/_npx/6f2a: delete that folder to remove it",
                "pagent itself (/home/u/.cargo/bin/pagent) stays installed: `cargo uninstall pagent` removes it",
                "pagent itself (/opt/pagent/pagent) stays: delete it to remove it",
            ]
        );
    }

    #[test]
    fn item_13_purge_removes_only_pagents_items_and_then_the_empty_folder() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("pagent");
        std::fs::create_dir_all(dir.join("projects/abc")).unwrap();
        std::fs::write(dir.join("secret"), "s").unwrap();
        std::fs::write(dir.join("trust.json"), "{}").unwrap();
        // What versions before issue 30 left: their Python checks' byte code.
        std::fs::create_dir_all(dir.join("cache/pycache/usr/lib")).unwrap();
        std::fs::write(dir.join("cache/pycache/usr/lib/a.cpython-311.pyc"), "b").unwrap();
        let purged = purge_config(&dir, None).unwrap();
        assert!(purged.folder, "{purged:?}");
        assert!(!dir.exists());

        // A folder of the user's that also holds pagent's files: only those go.
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("secret"), "s").unwrap();
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        let purged = purge_config(&dir, None).unwrap();
        assert_eq!(purged.left, [dir.join("notes.txt")]);
        assert!(!purged.folder && dir.join("notes.txt").exists());

        // Nothing of pagent's, or HOME itself: untouched.
        std::fs::write(dir.join("config.json"), "theirs").unwrap();
        std::fs::remove_file(dir.join("notes.txt")).unwrap();
        let purged = purge_config(&dir, Some(&dir)).unwrap();
        assert_eq!(purged, Purged::default());
        assert!(dir.join("config.json").exists());
        std::fs::remove_file(dir.join("config.json")).unwrap();
        std::fs::write(dir.join("notes.txt"), "mine").unwrap();
        let purged = purge_config(&dir, None).unwrap();
        assert_eq!((purged.removed.len(), purged.folder), (0, false));
        assert!(dir.join("notes.txt").exists());
    }
}

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

#![allow(clippy::disallowed_methods)] // the user's own folders, as in files.rs

use std::path::{Path, PathBuf};

use super::{Layout, files};

/// What pagent keeps in its config folder (store/secret.rs, trust.rs, config.rs,
/// user.rs and register.rs under `projects/`, dashboard/open.rs).
const CONFIG_ITEMS: &[&str] = &[
    "secret",
    "trust.json",
    "config.json",
    "projects",
    "dashboard.html",
];

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
}

/// Removes pagent's items from its config folder, then the folder if nothing else is in
/// it. A folder that holds none of pagent's items, or is HOME itself, is not touched.
pub fn purge_config(dir: &Path, home: Option<&Path>) -> anyhow::Result<Purged> {
    let mut purged = Purged::default();
    if !files::is_dir(dir) || home.is_some_and(|h| h == dir) {
        return Ok(purged);
    }
    let ours = |name: &str| CONFIG_ITEMS.contains(&name);
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
    Ok(purged)
}

fn name_of(path: &Path) -> Option<&str> {
    path.file_name().and_then(|n| n.to_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn item_13_purge_removes_only_pagents_items_and_then_the_empty_folder() {
        let base = tempfile::tempdir().unwrap();
        let dir = base.path().join("pagent");
        std::fs::create_dir_all(dir.join("projects/abc")).unwrap();
        std::fs::write(dir.join("secret"), "s").unwrap();
        std::fs::write(dir.join("trust.json"), "{}").unwrap();
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

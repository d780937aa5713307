//! What pagent remembers about projects in the user's own folder (beside the secret),
//! never in the project: a stranger's repository must not be written to, and nothing in
//! it may decide what pagent remembers.
//!
//! ```text
//! <config dir>/projects/<key>/newest       newest state generation written here (a
//!                                          marker: see `Dir::write_marker`; before
//!                                          it, the file `generation`)
//! <config dir>/projects/<key>/notices      notices already given, one per line
//! <config dir>/projects/<key>/loop.json    the register of loops (see `register.rs`)
//! ```
//!
//! `<key>` is a SHA-256 of the project root's raw bytes, so a folder name needs no
//! escaping and two names that differ only in bytes that are not UTF-8 stay apart.
//!
//! [`UserDir`] is the folder as one value, passed down from where the environment was
//! read, instead of a bare `Option<&Path>`: what lives there is asked of it.

use std::path::{Path, PathBuf};

use anyhow::Context;
use sha2::{Digest, Sha256};

use crate::cli::env::Env;
use pagent_door::files::{self as door, Dir};

mod notices;

pub use notices::NoticeKey;

const CAP: u64 = 64 * 1024;

/// In pagent's config folder: the folders above it that pagent created along with it,
/// one path a line, so `uninstall --purge` removes them again once empty (in a fresh
/// HOME, `~/.config` is pagent's doing).
pub const CREATED: &str = "created";

/// Opens pagent's config folder `dir`, creating it (private to the user) if needed, and
/// remembers in it ([`CREATED`]) each folder above it that this created.
pub fn open_or_create_config(dir: &Path) -> Result<Dir, door::DoorError> {
    let missing: Vec<&Path> = dir
        .ancestors()
        .skip(1)
        .take_while(|a| !a.as_os_str().is_empty() && !door::exists_no_follow(a))
        .collect();
    let opened = Dir::open_or_create_private(dir)?;
    if !missing.is_empty() {
        let mut text = opened
            .read_if_exists(Path::new(CREATED), CAP)?
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .unwrap_or_default();
        for folder in missing {
            text.push_str(&format!("{}\n", folder.display()));
        }
        opened.write_atomic(Path::new(CREATED), text.as_bytes())?;
    }
    Ok(opened)
}

/// pagent's folder in the user's home (`PAGENT_CONFIG_DIR`, else the XDG or home
/// default), or none when the environment names none: then nothing is remembered and
/// no state is the user's own.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct UserDir {
    path: Option<PathBuf>,
}

impl UserDir {
    pub fn at(path: Option<&Path>) -> UserDir {
        UserDir {
            path: path.map(Path::to_path_buf),
        }
    }

    /// The folder the environment names (`PAGENT_CONFIG_DIR`, else the default).
    pub fn of(env: &Env) -> UserDir {
        UserDir::at(env.config_dir.as_deref())
    }

    pub fn path(&self) -> Option<&Path> {
        self.path.as_deref()
    }

    /// Opens the folder, creating it (private to the user) if needed.
    pub(super) fn open(&self) -> anyhow::Result<Dir> {
        let dir = self
            .path()
            .context("no config folder for pagent: set HOME or PAGENT_CONFIG_DIR")?;
        open_or_create_config(dir)
            .with_context(|| format!("cannot open pagent's config folder {}", dir.display()))
    }

    fn read(&self, root: &Path, file: &str) -> Option<String> {
        let dir = Dir::open(self.path()?).ok()?;
        let bytes = dir
            .read_if_exists(&project_folder(root).join(file), CAP)
            .ok()??;
        String::from_utf8(bytes).ok()
    }

    /// The newest state generation pagent wrote for `root`, if any. pagent before the
    /// marker kept it in a file, `generation`, which every marker written removes: a
    /// `generation` there was written by such a pagent since, and is the newer record.
    pub fn newest_generation(&self, root: &Path) -> Option<u64> {
        let dir = Dir::open(&self.path()?.join(project_folder(root))).ok()?;
        let value = match dir.read_if_exists(Path::new(LEGACY), CAP) {
            Ok(Some(bytes)) => String::from_utf8(bytes).ok()?,
            _ => dir.read_marker(Path::new(NEWEST)).ok()??,
        };
        value.trim().parse().ok()
    }

    /// Remembers `generation` as the newest for `root`. The caller holds the state lock
    /// and chose `generation` above the newest it read under that lock, so this never
    /// lowers it.
    pub fn record_generation(&self, root: &Path, generation: u64) -> anyhow::Result<()> {
        let dir = self.open()?;
        // Unsynced: after a power loss the worst case is an older generation, which
        // weakens the rollback check for that one state; the state file itself is durable.
        let folder = project_folder(root);
        dir.write_marker(&folder.join(NEWEST), &generation.to_string())?;
        dir.remove_file(&folder.join(LEGACY))?;
        Ok(())
    }
}

/// The folder for `root` inside the user's folder, relative to it.
pub(super) fn project_folder(root: &Path) -> PathBuf {
    Path::new(PROJECTS).join(project_key(root))
}

/// The marker of a project's newest state generation, in its folder.
const NEWEST: &str = "newest";
/// The file that held it before the marker (see [`UserDir::newest_generation`]).
const LEGACY: &str = "generation";

/// The folder that holds one folder per project.
pub(super) const PROJECTS: &str = "projects";

/// `root`'s key: the first 32 hex digits of the SHA-256 of its raw bytes.
pub fn project_key(root: &Path) -> String {
    let digest = Sha256::digest(pagent_door::files::os_bytes(root.as_os_str()));
    pagent_engine::seal::hex(&digest)[..32].to_owned()
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    /// Issue 33: the marker replaced the `generation` file. A `generation` written by an
    /// older pagent after this one's last marker (a downgrade, then an upgrade) is the
    /// newer record and wins; the next marker removes it. So a downgrade never makes the
    /// newer pagent take its own loop for a rollback.
    #[test]
    fn issue_33_the_older_pagents_generation_file_wins_until_the_next_marker() {
        let home = tempfile::tempdir().unwrap();
        let user = UserDir::at(Some(home.path()));
        let root = Path::new("/some/project");
        assert_eq!(user.newest_generation(root), None);
        user.record_generation(root, 80).unwrap();
        assert_eq!(user.newest_generation(root), Some(80));
        let legacy = home.path().join(project_folder(root)).join(LEGACY);
        std::fs::write(&legacy, "51\n").unwrap();
        assert_eq!(user.newest_generation(root), Some(51));
        user.record_generation(root, 52).unwrap();
        assert!(!legacy.exists(), "the marker leaves no older record behind");
        assert_eq!(user.newest_generation(root), Some(52));
    }
}

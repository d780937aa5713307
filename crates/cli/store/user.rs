//! What pagent remembers about projects in the user's own folder (beside the secret),
//! never in the project: a stranger's repository must not be written to, and nothing in
//! it may decide what pagent remembers.
//!
//! ```text
//! <config dir>/projects/<key>/generation   newest state generation written here
//! <config dir>/projects/<key>/notices      notices already given, one per line
//! <config dir>/projects/<key>/loop.json    the register of loops (see `register.rs`)
//! ```
//!
//! `<key>` is a SHA-256 of the project root's raw bytes, so a folder name needs no
//! escaping and two names that differ only in bytes that are not UTF-8 stay apart.

use std::path::{Path, PathBuf};

use anyhow::Context;
use sha2::{Digest, Sha256};

use crate::store::door::Dir;

const CAP: u64 = 64 * 1024;

/// The folder for `root` inside the user's folder, relative to it.
pub(super) fn project_folder(root: &Path) -> PathBuf {
    Path::new(PROJECTS).join(project_key(root))
}

/// The folder that holds one folder per project.
pub(super) const PROJECTS: &str = "projects";

/// `root`'s key: the first 32 hex digits of the SHA-256 of its raw bytes.
pub fn project_key(root: &Path) -> String {
    let digest = Sha256::digest(crate::store::door::os_bytes(root.as_os_str()));
    pagent_engine::seal::hex(&digest)[..32].to_owned()
}

pub(super) fn open(config_dir: Option<&Path>) -> anyhow::Result<Dir> {
    let dir = config_dir.context("no config folder for pagent: set HOME or PAGENT_CONFIG_DIR")?;
    Dir::open_or_create_private(dir)
        .with_context(|| format!("cannot open pagent's config folder {}", dir.display()))
}

fn read(config_dir: Option<&Path>, root: &Path, file: &str) -> Option<String> {
    let dir = Dir::open(config_dir?).ok()?;
    let bytes = dir
        .read_if_exists(&project_folder(root).join(file), CAP)
        .ok()??;
    String::from_utf8(bytes).ok()
}

/// The newest state generation pagent wrote for `root`, if any.
pub fn newest_generation(config_dir: Option<&Path>, root: &Path) -> Option<u64> {
    read(config_dir, root, "generation")?.trim().parse().ok()
}

/// Remembers `generation` as the newest for `root`. The caller holds the state lock and
/// chose `generation` above the newest it read under that lock, so this never lowers it.
pub fn record_generation(
    config_dir: Option<&Path>,
    root: &Path,
    generation: u64,
) -> anyhow::Result<()> {
    let dir = open(config_dir)?;
    // Unsynced: after a power loss the worst case is an older generation, which weakens
    // the rollback check for that one state; the state file itself is durable.
    dir.write_atomic_unsynced(
        &project_folder(root).join("generation"),
        format!("{generation}\n").as_bytes(),
    )?;
    Ok(())
}

/// Whether the notice `key` was already given for `root`.
pub fn notice_given(config_dir: Option<&Path>, root: &Path, key: &str) -> bool {
    read(config_dir, root, "notices").is_some_and(|text| text.lines().any(|l| l == key))
}

/// Remembers that the notice `key` was given for `root`.
pub fn remember_notice(config_dir: Option<&Path>, root: &Path, key: &str) -> anyhow::Result<()> {
    let dir = open(config_dir)?;
    let line = format!("{}\n", key.replace('\n', " "));
    dir.append(&project_folder(root).join("notices"), line.as_bytes())?;
    Ok(())
}

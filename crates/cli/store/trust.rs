//! Consent for commands that come from a project's files, in the manner of `direnv allow`
//! and `mise trust`: a project file that makes pagent run a command (a workflow with
//! `command`/`custom` conditions or backpressure commands, the project's config, a
//! project-local program a built-in check would run) is used only while the user has
//! trusted that exact content. The hashes live in the user's config folder
//! (`trust.json`), which no repository can write; a changed file needs trust again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use anyhow::Context;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::store::user::UserDir;
use pagent_door::files;

const FILE: &str = "trust.json";
const CAP: u64 = 4 * 1024 * 1024;

/// One trusted file: the hash of the content the user saw, and what it allows.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Entry {
    pub sha256: String,
    #[serde(default)]
    pub commands: Vec<String>,
    pub trusted_at: String,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct TrustFile {
    #[serde(default)]
    files: BTreeMap<String, Entry>,
}

/// Whether a file's current content is trusted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Trusted,
    /// Never trusted.
    Untrusted,
    /// Trusted once, but its content changed since.
    Changed,
}

/// The key of a file in the trust file: its absolute path.
fn key(path: &Path) -> String {
    path.to_string_lossy().into_owned()
}

pub fn hash(bytes: &[u8]) -> String {
    pagent_engine::seal::hex(&Sha256::digest(bytes))
}

fn load(user_dir: &UserDir) -> TrustFile {
    let config_dir = user_dir.path();
    let Some(dir) = config_dir else {
        return TrustFile::default();
    };
    files::read_outside(&dir.join(FILE), CAP)
        .ok()
        .and_then(|bytes| serde_json::from_slice(&bytes).ok())
        .unwrap_or_default()
}

fn save(user_dir: &UserDir, file: &TrustFile) -> anyhow::Result<()> {
    let config_dir = user_dir.path();
    let dir = config_dir.context("no config folder for pagent: set HOME or PAGENT_CONFIG_DIR")?;
    let folder = crate::store::user::open_or_create_config(dir)
        .with_context(|| format!("cannot open pagent's config folder {}", dir.display()))?;
    let mut text = serde_json::to_string_pretty(file)?;
    text.push('\n');
    folder.write_atomic(Path::new(FILE), text.as_bytes())?;
    Ok(())
}

/// Whether `bytes`, the content of the file at `path`, is trusted.
pub fn verdict(user_dir: &UserDir, path: &Path, bytes: &[u8]) -> Verdict {
    match load(user_dir).files.get(&key(path)) {
        Some(entry) if entry.sha256 == hash(bytes) => Verdict::Trusted,
        Some(_) => Verdict::Changed,
        None => Verdict::Untrusted,
    }
}

/// Trusts `bytes` as the content of `path`, recording what it allows.
pub fn trust(
    user_dir: &UserDir,
    path: &Path,
    bytes: &[u8],
    commands: Vec<String>,
    now: &str,
) -> anyhow::Result<()> {
    let mut file = load(user_dir);
    file.files.insert(
        key(path),
        Entry {
            sha256: hash(bytes),
            commands,
            trusted_at: now.to_owned(),
        },
    );
    save(user_dir, &file)
}

/// Forgets the trust of `path`; true if it was trusted.
pub fn revoke(user_dir: &UserDir, path: &Path) -> anyhow::Result<bool> {
    let mut file = load(user_dir);
    let removed = file.files.remove(&key(path)).is_some();
    if removed {
        save(user_dir, &file)?;
    }
    Ok(removed)
}

/// Every trusted file under `root` (all of them when `root` is `None`).
pub fn list(user_dir: &UserDir, root: Option<&Path>) -> Vec<(PathBuf, Entry)> {
    load(user_dir)
        .files
        .into_iter()
        .map(|(k, e)| (PathBuf::from(k), e))
        .filter(|(p, _)| root.is_none_or(|r| p.starts_with(r)))
        .collect()
}

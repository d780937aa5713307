//! The register of loops: which projects on this machine have a loop pagent started, so
//! one reader (`pagent status --all`, `pagent dashboard`) can find every loop without
//! being told where to look.
//!
//! ```text
//! <config dir>/projects/<key>/loop.json   {"version": 1, "root_hex": ..., "root": ...,
//!                                          "state": ..., "origin": "loop", "since": ...}
//! ```
//!
//! An entry is written at set-up (in a session, by `pagent loop`, by each of `pagent
//! parallel`'s loops) beside the generation the user's folder already keeps per project,
//! through the door, in the user's own folder: never in a project, so a cloned repository
//! cannot add itself, and the folder an entry lives in is the hash of the root it names
//! ([`project_key`]), so no entry can speak for another project. A reader believes an
//! entry only when that still holds: the root's raw bytes (kept as hex, so a name that is
//! not UTF-8 survives) hash to the folder's name. The state path is always the root's
//! `.claude/pagent-pipeline.json`; the entry names it for people reading the file, and
//! readers derive it, never read it back. Entries are small and capped, and at most
//! [`MAX_LISTED`] are listed, newest first.
//!
//! Dropping out is the reader's business ([`forget`]): a project that is gone, or a loop
//! that ended longer ago than the readers keep showing it.

use std::path::{Path, PathBuf};

use pagent_engine::Timestamp;
use serde::{Deserialize, Serialize};

use crate::store::project::STATE_FILE;
use crate::store::user::{PROJECTS, UserDir, project_key};
use pagent_door::files::Dir;

const FILE: &str = "loop.json";
/// An entry is a few hundred bytes; anything larger is not pagent's.
const CAP: u64 = 8 * 1024;
/// The most entries listed (the newest), so a folder of thousands of old projects costs
/// a bounded read.
pub const MAX_LISTED: usize = 256;

/// How a loop was started: what the list calls its kind, beside ralph or pipeline.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Origin {
    /// Set up in a Claude Code session (`/pagent:ralph`, `pagent ralph`): the Stop hook
    /// drives it.
    Session,
    /// `pagent loop`: fresh agent processes, driven from outside.
    Loop,
    /// One of `pagent parallel`'s loops, in its own worktree.
    Parallel,
}

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    version: u32,
    root_hex: String,
    /// For people: the root as text (lossy when it is not UTF-8).
    root: String,
    /// For people: where the state is.
    state: String,
    origin: Origin,
    since: Timestamp,
}

/// One registered loop, as a reader may believe it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Registered {
    /// The entry's folder name: the hash of `root`, and the loop's id on the dashboard.
    pub key: String,
    pub root: PathBuf,
    pub origin: Origin,
    /// When the entry was last written (the loop's set-up or takeover).
    pub since: Timestamp,
}

/// Records that a loop of `origin` lives in the project at `root` (canonical).
pub fn record(
    user_dir: &UserDir,
    root: &Path,
    origin: Origin,
    now: Timestamp,
) -> anyhow::Result<()> {
    let dir = user_dir.open()?;
    let entry = Entry {
        version: 1,
        root_hex: pagent_engine::seal::hex(pagent_door::files::os_bytes(root.as_os_str())),
        root: root.to_string_lossy().into_owned(),
        state: root.join(STATE_FILE).to_string_lossy().into_owned(),
        origin,
        since: now,
    };
    let mut text = serde_json::to_string_pretty(&entry)?;
    text.push('\n');
    dir.write_atomic_unsynced(&entry_path(&project_key(root)), text.as_bytes())?;
    Ok(())
}

/// Every entry that holds (its root hashes to its folder's name), newest first, at most
/// [`MAX_LISTED`]. Nothing registered, or no config folder, is an empty list.
pub fn list(user_dir: &UserDir) -> Vec<Registered> {
    let config_dir = user_dir.path();
    let Some(dir) = config_dir.and_then(|d| Dir::open(d).ok()) else {
        return Vec::new();
    };
    let Ok(names) = dir.list(Path::new(PROJECTS)) else {
        return Vec::new();
    };
    let mut found: Vec<Registered> = names
        .iter()
        .filter_map(|name| name.to_str())
        .filter(|name| is_key(name))
        .filter_map(|key| read_entry(&dir, key))
        .collect();
    found.sort_by(|a, b| b.since.cmp(&a.since).then_with(|| a.key.cmp(&b.key)));
    found.truncate(MAX_LISTED);
    found
}

/// The entry `key`, if it is registered and holds.
pub fn find(user_dir: &UserDir, key: &str) -> Option<Registered> {
    let config_dir = user_dir.path();
    if !is_key(key) {
        return None;
    }
    let dir = Dir::open(config_dir?).ok()?;
    read_entry(&dir, key)
}

/// Drops the entry `key` from the register (the project's other memories stay).
pub fn forget(user_dir: &UserDir, key: &str) -> anyhow::Result<()> {
    let config_dir = user_dir.path();
    anyhow::ensure!(is_key(key), "not a register key: {key:?}");
    let Some(user_dir) = config_dir else {
        return Ok(());
    };
    let dir = Dir::open(user_dir)?;
    dir.remove_file(&entry_path(key))?;
    Ok(())
}

/// A register key: exactly 32 lowercase hex digits.
pub fn is_key(text: &str) -> bool {
    text.len() == 32 && text.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

fn entry_path(key: &str) -> PathBuf {
    Path::new(PROJECTS).join(key).join(FILE)
}

fn read_entry(dir: &Dir, key: &str) -> Option<Registered> {
    let bytes = dir.read_if_exists(&entry_path(key), CAP).ok()??;
    let entry: Entry = serde_json::from_slice(&bytes).ok()?;
    let root = PathBuf::from(pagent_door::files::os_from_bytes(
        pagent_engine::seal::unhex(&entry.root_hex)?,
    )?);
    // Believed only where it lives: an entry copied or edited into another project's
    // folder names a root that does not hash to it.
    if entry.version != 1 || !root.is_absolute() || project_key(&root) != key {
        return None;
    }
    Some(Registered {
        key: key.to_owned(),
        root,
        origin: entry.origin,
        since: entry.since,
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    fn config() -> (tempfile::TempDir, PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("pagent");
        (dir, config)
    }

    #[test]
    fn records_lists_finds_and_forgets() {
        let (_dir, config) = config();
        let config = &UserDir::at(Some(config.as_path()));
        assert!(list(config).is_empty());
        record(config, Path::new("/work/a"), Origin::Session, Timestamp(10)).unwrap();
        record(config, Path::new("/work/b"), Origin::Loop, Timestamp(20)).unwrap();
        let listed = list(config);
        let roots: Vec<_> = listed.iter().map(|r| r.root.clone()).collect();
        assert_eq!(roots, [PathBuf::from("/work/b"), PathBuf::from("/work/a")]);
        assert_eq!(listed[0].origin, Origin::Loop);
        assert_eq!(listed[0].key, project_key(Path::new("/work/b")));
        // A second set-up in the same project replaces its entry.
        record(
            config,
            Path::new("/work/a"),
            Origin::Parallel,
            Timestamp(30),
        )
        .unwrap();
        let listed = list(config);
        assert_eq!(listed.len(), 2);
        assert_eq!(
            (listed[0].root.as_path(), listed[0].origin),
            (Path::new("/work/a"), Origin::Parallel)
        );
        let key = project_key(Path::new("/work/a"));
        assert_eq!(find(config, &key).unwrap().since, Timestamp(30));
        forget(config, &key).unwrap();
        assert_eq!(find(config, &key), None);
        assert_eq!(list(config).len(), 1);
        forget(config, &key).unwrap();
    }

    /// A register entry names the project it is for only where it lives: one copied into
    /// another project's folder (or edited to name another root) is not believed.
    #[test]
    fn an_entry_that_does_not_hash_to_its_folder_is_not_believed() {
        let (_dir, config) = config();
        record(
            &UserDir::at(Some(&config)),
            Path::new("/work/a"),
            Origin::Loop,
            Timestamp(1),
        )
        .unwrap();
        let a = project_key(Path::new("/work/a"));
        let b = project_key(Path::new("/work/b"));
        std::fs::create_dir_all(config.join("projects").join(&b)).unwrap();
        std::fs::copy(
            config.join("projects").join(&a).join(FILE),
            config.join("projects").join(&b).join(FILE),
        )
        .unwrap();
        let listed = list(&UserDir::at(Some(&config)));
        assert_eq!(listed.len(), 1, "{listed:?}");
        assert_eq!(listed[0].key, a);
        assert_eq!(find(&UserDir::at(Some(&config)), &b), None);
    }

    #[cfg(unix)] // Windows names are UTF-16: `os_bytes`' own tests cover them
    #[test]
    fn roots_that_are_not_utf8_survive_and_bad_keys_are_refused() {
        let (_dir, config) = config();
        use std::os::unix::ffi::OsStringExt;
        let root = PathBuf::from(std::ffi::OsString::from_vec(b"/work/\xff\xfe".to_vec()));
        record(
            &UserDir::at(Some(&config)),
            &root,
            Origin::Session,
            Timestamp(1),
        )
        .unwrap();
        assert_eq!(list(&UserDir::at(Some(&config)))[0].root, root);
        for bad in ["", "../x", "ABCDEF0123456789abcdef0123456789", "0"] {
            assert!(!is_key(bad), "{bad}");
            assert_eq!(find(&UserDir::at(Some(&config)), bad), None);
            assert!(forget(&UserDir::at(Some(&config)), bad).is_err());
        }
        assert!(list(&UserDir::at(None)).is_empty());
    }

    #[test]
    fn oversized_or_foreign_entries_are_skipped() {
        let (_dir, config) = config();
        let key = project_key(Path::new("/work/a"));
        let folder = config.join("projects").join(&key);
        std::fs::create_dir_all(&folder).unwrap();
        std::fs::write(folder.join(FILE), vec![b' '; 10_000]).unwrap();
        assert!(list(&UserDir::at(Some(&config))).is_empty());
        std::fs::write(folder.join(FILE), "{\"version\": 2}").unwrap();
        assert!(list(&UserDir::at(Some(&config))).is_empty());
    }
}

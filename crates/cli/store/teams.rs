//! The teams this machine knows: each team (`pagent team`) started, worked on or looked at
//! from here, so `pagent dashboard` can show them beside the local loops without being
//! told where to look.
//!
//! ```text
//! <config dir>/teams/<key>.json     {"version": 1, "url": ..., "team": ..., "since": ...}
//! <config dir>/teams/fetched/<key>/ the dashboard's own repository the team is fetched
//!                                   into (only the team's records), one per team listed
//! ```
//!
//! Written by `pagent team` in the user's own folder, through the door, never in a
//! project: a cloned repository cannot add a team to the page. `<key>` is a hash of the
//! remote's URL and the team's name, so one team on one remote has one entry, and a
//! reader believes an entry only where it lives (its URL and team hash to its name). A
//! URL is what the clone's remote said, made absolute when it was a relative path, so the
//! dashboard (which fetches into a folder of its own) reaches the same remote. Entries are
//! small and capped, and at most [`MAX_LISTED`] are listed, newest first.

use std::path::{Path, PathBuf};

use pagent_engine::Timestamp;
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

use crate::store::user::UserDir;
use pagent_door::files::Dir;

const FOLDER: &str = "teams";
const FETCHED: &str = "fetched";
/// An entry is a few hundred bytes; anything larger is not pagent's.
const CAP: u64 = 8 * 1024;
/// The longest URL kept.
const MAX_URL: usize = 2048;
/// The most teams listed (the newest): the dashboard fetches each of them.
pub const MAX_LISTED: usize = 8;

#[derive(Debug, Serialize, Deserialize)]
struct Entry {
    version: u32,
    url: String,
    team: String,
    since: Timestamp,
}

/// One team this machine knows.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KnownTeam {
    /// The entry's name: the hash of the URL and the team, and its id on the dashboard.
    pub key: String,
    pub url: String,
    pub team: String,
    /// When the entry was last written.
    pub since: Timestamp,
}

/// `url` as the dashboard can reach it from anywhere: a relative path made absolute
/// against `root`, the clone whose remote it is.
pub fn reachable_url(root: &Path, url: &str) -> String {
    let looks_like_path = !url.contains("://") && !url.contains(':');
    if looks_like_path && Path::new(url).is_relative() {
        return root.join(url).to_string_lossy().into_owned();
    }
    url.to_owned()
}

/// Remembers that this machine knows the team `team` on `url`.
pub fn record(user_dir: &UserDir, url: &str, team: &str, now: Timestamp) -> anyhow::Result<()> {
    anyhow::ensure!(url.len() <= MAX_URL, "the remote's URL is too long to keep");
    let dir = user_dir.open()?;
    let entry = Entry {
        version: 1,
        url: url.to_owned(),
        team: team.to_owned(),
        since: now,
    };
    let mut text = serde_json::to_string_pretty(&entry)?;
    text.push('\n');
    dir.write_atomic_unsynced(&entry_path(&key(url, team)), text.as_bytes())?;
    Ok(())
}

/// Every entry that holds, newest first, at most [`MAX_LISTED`].
pub fn list(user_dir: &UserDir) -> Vec<KnownTeam> {
    let Some(dir) = user_dir.path().and_then(|d| Dir::open(d).ok()) else {
        return Vec::new();
    };
    let Ok(names) = dir.list(Path::new(FOLDER)) else {
        return Vec::new();
    };
    let mut found: Vec<KnownTeam> = names
        .iter()
        .filter_map(|name| name.to_str()?.strip_suffix(".json"))
        .filter(|key| crate::store::register::is_key(key))
        .filter_map(|key| read_entry(&dir, key))
        .collect();
    found.sort_by(|a, b| b.since.cmp(&a.since).then_with(|| a.key.cmp(&b.key)));
    found.truncate(MAX_LISTED);
    found
}

/// The folder the dashboard fetches the team `key` into (made if missing): in the user's
/// own folder, so nothing is left behind in the system's temporary folder when the
/// dashboard is stopped, and the next one fetches only what changed.
pub fn fetch_folder(user_dir: &UserDir, key: &str) -> anyhow::Result<PathBuf> {
    anyhow::ensure!(
        crate::store::register::is_key(key),
        "not a team key: {key:?}"
    );
    let dir = user_dir.open()?;
    Ok(dir.create_dir_all(&Path::new(FOLDER).join(FETCHED).join(key))?)
}

/// Removes the fetch folders of every team but `keep` (those no longer listed).
pub fn prune_fetched(user_dir: &UserDir, keep: &[&str]) {
    let Some(dir) = user_dir.path().and_then(|d| Dir::open(d).ok()) else {
        return;
    };
    let fetched = Path::new(FOLDER).join(FETCHED);
    let Ok(names) = dir.list(&fetched) else {
        return;
    };
    for name in names {
        let Some(name) = name.to_str() else { continue };
        if crate::store::register::is_key(name) && !keep.contains(&name) {
            let _ = dir.remove_tree(&fetched.join(name));
        }
    }
}

/// The key of `team` on `url`: the first 32 hex digits of a SHA-256 of both.
pub fn key(url: &str, team: &str) -> String {
    let mut hash = Sha256::new();
    hash.update(url.as_bytes());
    hash.update([0]);
    hash.update(team.as_bytes());
    pagent_engine::seal::hex(&hash.finalize())[..32].to_owned()
}

/// A name a team may have (as `pagent team` checks it before it names a ref).
fn team_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && !name.starts_with(['-', '.'])
        && !name.contains("..")
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
}

fn entry_path(key: &str) -> PathBuf {
    Path::new(FOLDER).join(format!("{key}.json"))
}

fn read_entry(dir: &Dir, key: &str) -> Option<KnownTeam> {
    let bytes = dir.read_if_exists(&entry_path(key), CAP).ok()??;
    let entry: Entry = serde_json::from_slice(&bytes).ok()?;
    // Believed only where it lives, and only with a name a team may have.
    if entry.version != 1 || self::key(&entry.url, &entry.team) != key || !team_name(&entry.team) {
        return None;
    }
    Some(KnownTeam {
        key: key.to_owned(),
        url: entry.url,
        team: entry.team,
        since: entry.since,
    })
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn records_lists_newest_first_and_believes_an_entry_only_where_it_lives() {
        let dir = tempfile::tempdir().unwrap();
        let config = dir.path().join("pagent");
        let user = &UserDir::at(Some(config.as_path()));
        assert!(list(user).is_empty());
        record(user, "git://h/r.git", "night", Timestamp(10)).unwrap();
        record(user, "/srv/r.git", "day", Timestamp(20)).unwrap();
        record(user, "git://h/r.git", "night", Timestamp(30)).unwrap();
        let listed = list(user);
        let teams: Vec<_> = listed.iter().map(|t| t.team.as_str()).collect();
        assert_eq!(teams, ["night", "day"]);
        assert_eq!(listed[0].key, key("git://h/r.git", "night"));
        // An entry copied under another key, or naming a team no team may be called.
        let folder = config.join(FOLDER);
        std::fs::copy(
            folder.join(format!("{}.json", key("/srv/r.git", "day"))),
            folder.join(format!("{}.json", key("/srv/r.git", "other"))),
        )
        .unwrap();
        let bad = key("/x", "../up");
        std::fs::write(
            folder.join(format!("{bad}.json")),
            r#"{"version":1,"url":"/x","team":"../up","since":1}"#,
        )
        .unwrap();
        assert_eq!(list(user).len(), 2);
        for i in 0..20 {
            record(user, "/srv/r.git", &format!("t{i}"), Timestamp(100 + i)).unwrap();
        }
        assert_eq!(list(user).len(), MAX_LISTED);
        assert!(list(&UserDir::at(None)).is_empty());
        // Each listed team's fetch folder stays; the others go.
        let listed = list(user);
        let keys: Vec<&str> = listed.iter().map(|t| t.key.as_str()).collect();
        let gone = key("/srv/r.git", "t0");
        let kept = fetch_folder(user, keys[0]).unwrap();
        let dropped = fetch_folder(user, &gone).unwrap();
        std::fs::write(dropped.join("HEAD"), "x").unwrap();
        assert!(fetch_folder(user, "../x").is_err());
        prune_fetched(user, &keys);
        assert!(kept.is_dir());
        assert!(!dropped.exists());
    }

    #[test]
    fn a_relative_remote_is_kept_absolute() {
        let root = Path::new("/work/clone");
        assert_eq!(
            reachable_url(root, "../remote.git"),
            "/work/clone/../remote.git"
        );
        for same in ["/srv/r.git", "git://h/r", "git@h:r.git", "file:///srv/r"] {
            assert_eq!(reachable_url(root, same), same);
        }
    }
}

//! Notices already given, per project, in the user's folder: a bounded, typed store.
//!
//! A notice (a stranger's state ignored, an untrusted program not run) is said once per
//! project, not on every Stop. The file used to grow by a line per notice for ever, and
//! past the store's read cap (64 KiB) it could no longer be read, so every notice was
//! said again on every Stop. Now a key is a [`NoticeKey`] (one line, at most
//! [`KEY_BYTES`]: a longer text is kept as its digest), and the file keeps the newest
//! [`KEEP`] keys, so it stays well under the cap (an oversized file left by an older
//! pagent is read as empty and replaced on the next notice). Two hooks remembering at
//! the same instant may lose one key: that notice is then said once more, never lost.

use std::path::Path;

use sha2::{Digest, Sha256};

use super::UserDir;

/// The most keys kept: the newest win.
pub const KEEP: usize = 256;
/// The longest key kept as written; longer texts are kept as their SHA-256.
pub const KEY_BYTES: usize = 200;
/// The file's name in the project's folder.
const FILE: &str = "notices";

/// What a notice is remembered by: one line of at most [`KEY_BYTES`] bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NoticeKey(String);

impl NoticeKey {
    /// The key for a notice described by `text` (any text: newlines and length are
    /// taken care of here).
    pub fn new(text: &str) -> NoticeKey {
        let line = text.replace(['\n', '\r'], " ");
        if line.len() <= KEY_BYTES {
            NoticeKey(line)
        } else {
            let digest = Sha256::digest(line.as_bytes());
            NoticeKey(format!("sha256 {}", pagent_engine::seal::hex(&digest)))
        }
    }

    #[cfg(test)]
    fn as_str(&self) -> &str {
        &self.0
    }
}

impl UserDir {
    /// The keys remembered for `root`, oldest first; none when unreadable.
    fn notices(&self, root: &Path) -> Vec<String> {
        self.read(root, FILE)
            .map(|text| text.lines().map(str::to_owned).collect())
            .unwrap_or_default()
    }

    /// Whether the notice `key` was already given for `root`.
    pub fn notice_given(&self, root: &Path, key: &NoticeKey) -> bool {
        self.notices(root).contains(&key.0)
    }

    /// Remembers that the notice `key` was given for `root`, keeping the newest [`KEEP`].
    pub fn remember_notice(&self, root: &Path, key: &NoticeKey) -> anyhow::Result<()> {
        let dir = self.open()?;
        let mut keys = self.notices(root);
        keys.retain(|k| *k != key.0);
        keys.push(key.0.clone());
        let skip = keys.len().saturating_sub(KEEP);
        let text: String = keys[skip..].iter().map(|k| format!("{k}\n")).collect();
        dir.write_atomic_unsynced(&super::project_folder(root).join(FILE), text.as_bytes())?;
        Ok(())
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods)]
mod tests {
    use super::*;

    #[test]
    fn issue_22_the_notices_file_stays_bounded_and_readable() {
        let home = tempfile::tempdir().unwrap();
        let user = UserDir::at(Some(home.path()));
        let root = Path::new("/some/project");
        let long = "x".repeat(10_000);
        for n in 0..(KEEP * 3) {
            let key = NoticeKey::new(&format!("untrusted program /bin/{n} {long}"));
            user.remember_notice(root, &key).unwrap();
            assert!(
                user.notice_given(root, &key),
                "notice {n} forgotten at once"
            );
        }
        let file = home
            .path()
            .join(super::super::project_folder(root))
            .join(FILE);
        let size = std::fs::metadata(&file).unwrap().len();
        assert!(size < super::super::CAP / 2, "{size} bytes");
        assert_eq!(
            std::fs::read_to_string(&file).unwrap().lines().count(),
            KEEP
        );
        // The newest are kept, the oldest forgotten.
        let newest = NoticeKey::new(&format!("untrusted program /bin/{} {long}", KEEP * 3 - 1));
        let oldest = NoticeKey::new(&format!("untrusted program /bin/0 {long}"));
        assert!(user.notice_given(root, &newest));
        assert!(!user.notice_given(root, &oldest));
    }

    #[test]
    fn issue_22_an_oversized_notices_file_is_replaced_not_stuck() {
        let home = tempfile::tempdir().unwrap();
        let user = UserDir::at(Some(home.path()));
        let root = Path::new("/some/project");
        let folder = home.path().join(super::super::project_folder(root));
        std::fs::create_dir_all(&folder).unwrap();
        // What an older pagent left: past the read cap, so nothing in it can be read.
        let old: String = (0..5000).map(|n| format!("not yours {n:0>40}\n")).collect();
        assert!(old.len() as u64 > super::super::CAP);
        std::fs::write(folder.join(FILE), old).unwrap();
        let key = NoticeKey::new("not yours abc");
        assert!(!user.notice_given(root, &key));
        user.remember_notice(root, &key).unwrap();
        assert!(
            user.notice_given(root, &key),
            "the notice is remembered again"
        );
    }

    #[test]
    fn keys_are_one_line_and_long_texts_their_digest() {
        assert_eq!(NoticeKey::new("a\nb").as_str(), "a b");
        let long = NoticeKey::new(&"y".repeat(KEY_BYTES + 1));
        assert!(long.as_str().starts_with("sha256 "));
        assert!(long.as_str().len() <= KEY_BYTES);
        assert_ne!(long, NoticeKey::new(&"y".repeat(KEY_BYTES + 2)));
    }
}

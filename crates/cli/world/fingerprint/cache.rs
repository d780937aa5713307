//! Content hashes of changed and untracked files, keyed by what `lstat` says of them, so
//! a big file that stays changed across many stops is hashed once.
//!
//! Kept in `.claude/pagent/fingerprint-cache` (through the door, unsynced: losing it
//! costs one rehash). A hash is reused only when size, inode, mtime and ctime (to the
//! nanosecond) all match, and a file modified in the last two seconds is never cached:
//! a write in the same clock tick as the `lstat` could otherwise hide behind equal times.
//! Entries not used by the latest fingerprint are dropped, so the cache holds at most
//! the files that differ from the index now.

use std::collections::HashMap;
use std::io::Read;
use std::path::Path;
use std::time::{SystemTime, UNIX_EPOCH};

use sha2::{Digest, Sha256};

use pagent_door::files::{Dir, Kind, Stat};

const FILE: &str = ".claude/pagent/fingerprint-cache";
const CAP: u64 = 4 * 1024 * 1024;
/// Bytes of one file hashed; the rest is represented by its size and times.
pub const HASH_CAP: u64 = 8 * 1024 * 1024;
/// Seconds within which a modification is too recent to cache.
const RACY_SECS: i64 = 2;

type Key = (u64, u64, i64, i64, i64, i64);
/// A file's stat key and content digest.
type Entry = (Key, [u8; 32]);

fn key(stat: &Stat) -> Key {
    (
        stat.size,
        stat.ino,
        stat.mtime.0,
        stat.mtime.1,
        stat.ctime.0,
        stat.ctime.1,
    )
}

#[derive(Debug, Default)]
pub struct Cache {
    known: HashMap<Vec<u8>, Entry>,
    used: HashMap<Vec<u8>, Entry>,
    hits: usize,
}

impl Cache {
    /// The saved cache of the project, or an empty one.
    pub fn load(dir: &Dir) -> Cache {
        let mut cache = Cache::default();
        let Ok(Some(bytes)) = dir.read_if_exists(Path::new(FILE), CAP) else {
            return cache;
        };
        for line in bytes.split(|b| *b == b'\n') {
            if let Some((path, entry)) = parse_line(line) {
                cache.known.insert(path, entry);
            }
        }
        cache
    }

    /// The content digest of `path` (relative bytes) as `stat` describes it.
    pub fn digest(&mut self, dir: &Dir, path: &[u8], stat: &Stat) -> [u8; 32] {
        let key = key(stat);
        if let Some((known, digest)) = self.known.get(path)
            && *known == key
        {
            self.hits += 1;
            let digest = *digest;
            self.used.insert(path.to_vec(), (key, digest));
            return digest;
        }
        let digest = content_digest(dir, path, stat);
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| i64::try_from(d.as_secs()).unwrap_or(i64::MAX));
        if now - stat.mtime.0 > RACY_SECS && now - stat.ctime.0 > RACY_SECS {
            self.used.insert(path.to_vec(), (key, digest));
        }
        digest
    }

    /// Saves the entries the latest fingerprint used, when they differ from what was
    /// loaded (most stops change nothing, and then nothing is written).
    pub fn save(&self, dir: &Dir) {
        if self.used == self.known {
            return;
        }
        let mut text = Vec::new();
        for (path, (key, digest)) in &self.used {
            text.extend_from_slice(
                format!(
                    "{} {} {} {} {} {} {} ",
                    pagent_engine::seal::hex(digest),
                    key.0,
                    key.1,
                    key.2,
                    key.3,
                    key.4,
                    key.5
                )
                .as_bytes(),
            );
            text.extend_from_slice(pagent_engine::seal::hex(path).as_bytes());
            text.push(b'\n');
        }
        if text.len() as u64 <= CAP {
            let _ = dir.write_atomic_unsynced(Path::new(FILE), &text);
        }
    }

    #[cfg(test)]
    pub fn hits(&self) -> usize {
        self.hits
    }
}

fn parse_line(line: &[u8]) -> Option<(Vec<u8>, Entry)> {
    let text = std::str::from_utf8(line).ok()?;
    let mut parts = text.split(' ');
    let digest: [u8; 32] = pagent_engine::seal::unhex(parts.next()?)?.try_into().ok()?;
    let mut n = || parts.next()?.parse::<i64>().ok();
    let key = (
        u64::try_from(n()?).ok()?,
        u64::try_from(n()?).ok()?,
        n()?,
        n()?,
        n()?,
        n()?,
    );
    let path = pagent_engine::seal::unhex(parts.next()?)?;
    Some((path, (key, digest)))
}

/// A file's content (its first [`HASH_CAP`] bytes, then its size and times); for what is
/// not a readable regular file inside the project, its kind and stat data.
pub fn content_digest(dir: &Dir, path: &[u8], stat: &Stat) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(stat.size.to_le_bytes());
    let rel = pagent_door::files::path_from_bytes(path);
    let file = (stat.kind == Kind::File)
        .then(|| dir.open_read(&rel).ok())
        .flatten();
    let Some(file) = file else {
        hash.update(format!("{:?}", stat.kind).as_bytes());
        hash.update(stat.mtime.0.to_le_bytes());
        hash.update(stat.mtime.1.to_le_bytes());
        return hash.finalize().into();
    };
    // Sized to the file (most are a few KiB): zeroing 64 KiB for each was a tenth of a
    // Stop's own work.
    let block = usize::try_from(stat.size.min(64 * 1024)).unwrap_or(64 * 1024) + 1;
    let mut buf = vec![0; block];
    let mut read = 0u64;
    let mut reader = file.take(HASH_CAP);
    loop {
        match reader.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => {
                hash.update(&buf[..n]);
                read += n as u64;
            }
            Err(_) => {
                hash.update(b"unreadable");
                break;
            }
        }
    }
    if read >= HASH_CAP {
        hash.update(stat.mtime.0.to_le_bytes());
        hash.update(stat.mtime.1.to_le_bytes());
    }
    hash.finalize().into()
}

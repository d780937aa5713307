//! Git's index file, read in place: the entries the fingerprint needs (path, object id,
//! mode and the stat data git recorded), without copying them.
//!
//! libgit2 spends about 10 ms loading the index of a 20,000-file repository and another
//! 2 ms handing its entries out one allocation at a time; the fingerprint only reads
//! them. Versions 2 and 3 with SHA-1 object ids are parsed here (what `git` writes unless
//! told otherwise); anything else (version 4's compressed paths, SHA-256 repositories, a
//! short or odd file) returns `None` and the caller uses libgit2.

/// One index entry, borrowing from the file's bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    pub path: &'a [u8],
    pub oid: &'a [u8],
    pub mode: u32,
    pub size: u32,
    pub ino: u32,
    pub mtime: (u32, u32),
    pub ctime: (u32, u32),
}

const HEADER: usize = 12;
/// Bytes of an entry before its path: ten 32-bit stat fields, a 20-byte id, 16-bit flags.
const FIXED: usize = 40 + 20 + 2;
const EXTENDED: u16 = 0x4000;
const NAME_MASK: u16 = 0x0fff;

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    Some(u32::from_be_bytes(bytes.get(at..at + 4)?.try_into().ok()?))
}

fn u16_at(bytes: &[u8], at: usize) -> Option<u16> {
    Some(u16::from_be_bytes(bytes.get(at..at + 2)?.try_into().ok()?))
}

/// The entries of a version 2 or 3 index, in the file's (sorted) order.
pub fn parse(bytes: &[u8]) -> Option<Vec<Entry<'_>>> {
    if bytes.get(..4)? != b"DIRC" {
        return None;
    }
    let version = u32_at(bytes, 4)?;
    if version != 2 && version != 3 {
        return None;
    }
    let count = usize::try_from(u32_at(bytes, 8)?).ok()?;
    let mut entries = Vec::with_capacity(count.min(bytes.len() / FIXED));
    let mut at = HEADER;
    for _ in 0..count {
        let start = at;
        let flags = u16_at(bytes, start + 60)?;
        let mut path_at = start + FIXED;
        if flags & EXTENDED != 0 {
            if version < 3 {
                return None;
            }
            path_at += 2;
        }
        let rest = bytes.get(path_at..)?;
        let len = rest.iter().position(|b| *b == 0)?;
        // The name length in the flags is exact below 0xfff.
        if usize::from(flags & NAME_MASK) != len.min(usize::from(NAME_MASK)) {
            return None;
        }
        let path = &rest[..len];
        // Entries are padded with NULs to a multiple of 8 bytes (at least one NUL).
        let entry_len = (path_at - start + len + 8) & !7;
        entries.push(Entry {
            path,
            oid: bytes.get(start + 40..start + 60)?,
            mode: u32_at(bytes, start + 24)?,
            size: u32_at(bytes, start + 36)?,
            ino: u32_at(bytes, start + 20)?,
            mtime: (u32_at(bytes, start + 8)?, u32_at(bytes, start + 12)?),
            ctime: (u32_at(bytes, start)?, u32_at(bytes, start + 4)?),
        });
        at = start + entry_len;
        if at > bytes.len() {
            return None;
        }
    }
    Some(entries)
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use super::*;

    #[cfg(unix)] // a symlink in the index
    #[test]
    fn reads_what_libgit2_reads() {
        use crate::world::fingerprint::tests::git;
        use std::fs;
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        git(root, &["init", "-q"]);
        let long = format!("{0}/{0}/{0}.txt", "n".repeat(120));
        for name in ["a.txt", "b/c.rs", "b/d/e f.md", &long, "é.md"] {
            let path = root.join(name);
            fs::create_dir_all(path.parent().unwrap()).unwrap();
            fs::write(path, name).unwrap();
        }
        std::os::unix::fs::symlink("a.txt", root.join("link")).unwrap();
        git(root, &["add", "-A"]);
        // Version 3 entries carry extended flags (intent-to-add).
        fs::write(root.join("later.txt"), "x").unwrap();
        git(root, &["add", "-N", "later.txt"]);
        let bytes = fs::read(root.join(".git/index")).unwrap();
        let ours = parse(&bytes).expect("parsed");
        let repo = git2::Repository::init(root).unwrap();
        let theirs: Vec<git2::IndexEntry> = repo.index().unwrap().iter().collect();
        assert_eq!(ours.len(), theirs.len());
        for (a, b) in ours.iter().zip(&theirs) {
            assert_eq!(a.path, b.path.as_slice());
            assert_eq!(a.oid, b.id.as_bytes());
            assert_eq!(a.mode, b.mode);
            assert_eq!(a.size, b.file_size);
            assert_eq!(a.ino, b.ino);
            assert_eq!(a.mtime, (b.mtime.seconds() as u32, b.mtime.nanoseconds()));
        }
    }

    #[test]
    fn refuses_what_it_does_not_read() {
        assert_eq!(parse(b""), None);
        assert_eq!(parse(b"DIRC\0\0\0\x04\0\0\0\0"), None, "version 4");
        assert_eq!(parse(b"DIRC\0\0\0\x02\0\0\0\x01"), None, "an entry missing");
        assert_eq!(parse(b"DIRC\0\0\0\x02\0\0\0\0"), Some(Vec::new()));
    }
}

//! Git's index file, streamed: the entries the fingerprint needs (path, object id, mode,
//! the stat data git recorded, whether the entry is checked out), one at a time, from a
//! fixed buffer.
//!
//! A monorepo's index holds a million entries in 200 MB; libgit2 loads it whole (and a
//! 284 KB repository can check out a 160 MB index), so the fingerprint never holds it:
//! the reader keeps one block of the file and the current path, whatever the index's
//! size. Versions 2, 3 and 4 (whose paths are compressed against the previous one, as
//! `feature.manyFiles` writes them) are read, with SHA-1 object ids, skip-worktree
//! entries and the folder entries of a sparse index. Anything else (an unknown version,
//! a split index, a short or odd file) is [`Unread`], and the caller uses libgit2.

use std::io::Read;

/// One index entry. Its path is the reader's, until the next entry is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Entry<'a> {
    pub path: &'a [u8],
    pub oid: [u8; 20],
    pub mode: u32,
    pub size: u32,
    pub ino: u32,
    pub mtime: (u32, u32),
    pub ctime: (u32, u32),
    /// Not expected in the work tree (a sparse checkout's entry, or a sparse index's
    /// folder): git does not look at the disk for it, nor does the fingerprint.
    pub skip_worktree: bool,
}

/// Why the reader stopped short: the index is not one it reads, or not a whole one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Unread;

const HEADER: usize = 12;
/// Bytes of an entry before its path: ten 32-bit stat fields, a 20-byte id, 16-bit flags.
const FIXED: usize = 40 + 20 + 2;
const EXTENDED: u16 = 0x4000;
const SKIP_WORKTREE: u16 = 0x4000;
const NAME_MASK: u16 = 0x0fff;
/// The bytes read from the file at a time, and the longest path accepted (git's own
/// limit is the system's, 4 KiB on Linux; a longer one is a file git did not write).
const BLOCK: usize = 256 * 1024;
const PATH_CAP: usize = 64 * 1024;

/// The entries of an index, read in the file's (sorted) order.
pub struct Reader<R> {
    source: R,
    buf: Vec<u8>,
    /// The unread bytes are `buf[at..end]`.
    at: usize,
    end: usize,
    eof: bool,
    version: u32,
    remaining: u32,
    path: Vec<u8>,
    fields: Fields,
}

/// An entry's fixed fields, kept beside the reader's path.
#[derive(Debug, Clone, Copy, Default)]
struct Fields {
    oid: [u8; 20],
    mode: u32,
    size: u32,
    ino: u32,
    mtime: (u32, u32),
    ctime: (u32, u32),
    skip_worktree: bool,
}

impl<R: Read> Reader<R> {
    /// Reads the header; `Unread` for anything but a version 2, 3 or 4 index.
    pub fn new(source: R) -> Result<(Reader<R>, u32), Unread> {
        let mut reader = Reader {
            source,
            buf: vec![0; BLOCK],
            at: 0,
            end: 0,
            eof: false,
            version: 0,
            remaining: 0,
            path: Vec::new(),
            fields: Fields::default(),
        };
        let header = reader.take(HEADER)?;
        if &header[..4] != b"DIRC" {
            return Err(Unread);
        }
        let version = be32(&header[4..8]);
        let count = be32(&header[8..12]);
        if !(2..=4).contains(&version) {
            return Err(Unread);
        }
        reader.version = version;
        reader.remaining = count;
        Ok((reader, count))
    }

    /// The next entry, `None` after the last one.
    pub fn next_entry(&mut self) -> Result<Option<Entry<'_>>, Unread> {
        if self.remaining == 0 {
            return Ok(None);
        }
        self.remaining -= 1;
        let fixed = self.take(FIXED)?;
        let flags = be16(&fixed[60..62]);
        let mut fields = Fields {
            oid: fixed[40..60].try_into().map_err(|_| Unread)?,
            mode: be32(&fixed[24..28]),
            size: be32(&fixed[36..40]),
            ino: be32(&fixed[20..24]),
            mtime: (be32(&fixed[8..12]), be32(&fixed[12..16])),
            ctime: (be32(&fixed[0..4]), be32(&fixed[4..8])),
            skip_worktree: false,
        };
        let mut taken = FIXED;
        if flags & EXTENDED != 0 {
            if self.version < 3 {
                return Err(Unread);
            }
            fields.skip_worktree = be16(self.take(2)?) & SKIP_WORKTREE != 0;
            taken += 2;
        }
        if self.version == 4 {
            let strip = self.varint()?;
            let keep = self.path.len().checked_sub(strip).ok_or(Unread)?;
            self.path.truncate(keep);
            self.read_name()?;
        } else {
            self.path.clear();
            let len = self.read_name()?;
            // Entries are padded with NULs to a multiple of 8 bytes (at least one NUL,
            // which read_name took).
            let padded = (taken + len + 8) & !7;
            self.take(padded - taken - len - 1)?;
        }
        // The name length in the flags is exact below 0xfff.
        let len = self.path.len();
        if usize::from(flags & NAME_MASK) != len.min(usize::from(NAME_MASK)) {
            return Err(Unread);
        }
        self.fields = fields;
        Ok(Some(self.current()))
    }

    /// After the last entry: the extensions, `Unread` if one says the entries are not
    /// the whole index (a split index's `link`).
    pub fn finish(&mut self) -> Result<(), Unread> {
        if self.remaining != 0 {
            return Err(Unread);
        }
        loop {
            // The trailing checksum is all that is left.
            if self.fill(8 + 20)? < 8 + 20 {
                return Ok(());
            }
            let header = self.take(8)?;
            if &header[..4] == b"link" {
                return Err(Unread);
            }
            let size = be32(&header[4..8]) as usize;
            self.skip(size)?;
        }
    }

    /// The entry [`Reader::next_entry`] read last.
    pub fn current(&self) -> Entry<'_> {
        let f = self.fields;
        Entry {
            path: &self.path,
            oid: f.oid,
            mode: f.mode,
            size: f.size,
            ino: f.ino,
            mtime: f.mtime,
            ctime: f.ctime,
            skip_worktree: f.skip_worktree,
        }
    }

    /// Appends the NUL-terminated name at the cursor to the path; its length.
    fn read_name(&mut self) -> Result<usize, Unread> {
        let mut len = 0;
        loop {
            if self.at == self.end && self.fill(1)? == 0 {
                return Err(Unread);
            }
            let chunk = &self.buf[self.at..self.end];
            match pagent_protocol::bytes::find_byte(0, chunk) {
                Some(nul) => {
                    self.path.extend_from_slice(&chunk[..nul]);
                    self.at += nul + 1;
                    len += nul;
                    return Ok(len);
                }
                None => {
                    self.path.extend_from_slice(chunk);
                    len += chunk.len();
                    self.at = self.end;
                    if self.path.len() > PATH_CAP {
                        return Err(Unread);
                    }
                }
            }
        }
    }

    /// Git's offset varint (version 4): 7 bits a byte, high bit for more, plus one per
    /// continuation.
    fn varint(&mut self) -> Result<usize, Unread> {
        let mut byte = self.take(1)?[0];
        let mut value = usize::from(byte & 0x7f);
        while byte & 0x80 != 0 {
            byte = self.take(1)?[0];
            value = value
                .checked_add(1)
                .and_then(|v| v.checked_mul(128))
                .ok_or(Unread)?
                | usize::from(byte & 0x7f);
        }
        Ok(value)
    }

    /// The next `n` bytes (`n` at most a block).
    fn take(&mut self, n: usize) -> Result<&[u8], Unread> {
        if self.fill(n)? < n {
            return Err(Unread);
        }
        let start = self.at;
        self.at += n;
        Ok(&self.buf[start..start + n])
    }

    fn skip(&mut self, mut n: usize) -> Result<(), Unread> {
        while n > 0 {
            let have = self.fill(1)?;
            if have == 0 {
                return Err(Unread);
            }
            let step = have.min(n);
            self.at += step;
            n -= step;
        }
        Ok(())
    }

    /// Makes at least `want` bytes available when the file has them; how many are.
    fn fill(&mut self, want: usize) -> Result<usize, Unread> {
        if self.end - self.at >= want || self.eof {
            return Ok(self.end - self.at);
        }
        self.buf.copy_within(self.at..self.end, 0);
        self.end -= self.at;
        self.at = 0;
        while self.end < want && !self.eof {
            match self.source.read(&mut self.buf[self.end..]) {
                Ok(0) => self.eof = true,
                Ok(n) => self.end += n,
                Err(err) if err.kind() == std::io::ErrorKind::Interrupted => {}
                Err(_) => return Err(Unread),
            }
        }
        Ok(self.end)
    }
}

fn be32(bytes: &[u8]) -> u32 {
    u32::from_be_bytes([bytes[0], bytes[1], bytes[2], bytes[3]])
}

fn be16(bytes: &[u8]) -> u16 {
    u16::from_be_bytes([bytes[0], bytes[1]])
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests;

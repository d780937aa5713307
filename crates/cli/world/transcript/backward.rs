//! A file's lines from last to first, read backwards in blocks: each byte searched once
//! and copied once, however long the line, and never more than a budget of bytes.

use std::collections::VecDeque;
use std::io::{self, Read, Seek, SeekFrom};

/// How much is read at a time, at most.
pub(super) const BLOCK: usize = 64 * 1024;
/// The first read: the last line is often a message of a few KiB, so the reads start
/// small and double up to [`BLOCK`] (every Stop reads the transcript's end).
const FIRST_BLOCK: usize = 4 * 1024;

/// Yields a file's lines from last to first, reading backwards in blocks.
///
/// The bytes read but not yet returned are kept as blocks in file order. Only the first
/// (earliest) block can hold a newline: every later one was searched when it was first,
/// and had none. So each byte is searched once and copied once, however long the line:
/// a multi-megabyte tool result just before the last message costs its size, not its
/// size squared.
pub(in crate::world) struct BackwardLines<R> {
    file: R,
    block: usize,
    /// The size of the next read: doubles from [`FIRST_BLOCK`] up to `block`.
    step: usize,
    /// Start of the part of the file not read yet.
    pos: u64,
    /// Read, not yet returned, in file order; newlines only in `pending[0]`.
    pending: VecDeque<Vec<u8>>,
    budget: u64,
}

impl<R: Read + Seek> BackwardLines<R> {
    pub(in crate::world) fn new(file: R, budget: u64) -> io::Result<BackwardLines<R>> {
        BackwardLines::with_block(file, budget, BLOCK)
    }

    pub(super) fn with_block(
        mut file: R,
        budget: u64,
        block: usize,
    ) -> io::Result<BackwardLines<R>> {
        let pos = file.seek(SeekFrom::End(0))?;
        Ok(BackwardLines {
            file,
            block: block.max(1),
            step: FIRST_BLOCK.min(block).max(1),
            pos,
            pending: VecDeque::new(),
            budget,
        })
    }

    pub(in crate::world) fn next_line(&mut self) -> io::Result<Option<Vec<u8>>> {
        loop {
            if let Some(first) = self.pending.front_mut()
                && let Some(newline) = pagent_protocol::bytes::rfind_byte(b'\n', first)
            {
                let head = first[newline + 1..].to_vec();
                first.truncate(newline);
                let rest: Vec<Vec<u8>> = self.pending.drain(1..).collect();
                return Ok(Some(join(head, rest)));
            }
            if self.pos == 0 || self.budget == 0 {
                // The first line of the file (or of the budget): only whole if we reached
                // the start. A line the budget ended in is dropped unjoined: copying it
                // first would double the most a Stop holds (the budget, 32 MiB).
                let all: Vec<Vec<u8>> = self.pending.drain(..).collect();
                if self.pos != 0 {
                    return Ok(None);
                }
                let line = join(Vec::new(), all);
                return Ok((!line.is_empty()).then_some(line));
            }
            let size = (self.pos.min(self.step as u64)).min(self.budget);
            self.step = self.step.saturating_mul(2).min(self.block);
            self.pos -= size;
            self.budget -= size;
            let mut block = vec![0; usize::try_from(size).unwrap_or(self.block)];
            self.file.seek(SeekFrom::Start(self.pos))?;
            self.file.read_exact(&mut block)?;
            self.pending.push_front(block);
        }
    }
}

pub(super) fn join(mut head: Vec<u8>, rest: Vec<Vec<u8>>) -> Vec<u8> {
    head.reserve(rest.iter().map(Vec::len).sum());
    for part in rest {
        head.extend_from_slice(&part);
    }
    head
}

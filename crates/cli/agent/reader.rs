//! The agent's stdout and stderr, read line by line on their own threads: every line
//! goes to the log and to the loop, and a line longer than [`MAX_LINE`] is cut, so an
//! agent printing a 2 GB line costs 4 MiB.

use std::io::{BufRead, BufReader};
use std::sync::mpsc;
use std::thread;

/// The most of one output line kept in memory. An agent may print a line of any length (a
/// tool result holding a whole file); past this the rest of the line is skipped while the
/// reader looks for its end, so a 2 GB line costs 4 MiB, not 4 GB. Every stream record
/// pagent needs is far shorter; a cut line is marked as such in the log.
pub(super) const MAX_LINE: usize = 4 << 20;

pub(super) enum Msg {
    Out(String),
    Err(String),
    Closed,
}

pub(super) fn spawn_reader(
    pipe: Option<impl std::io::Read + Send + 'static>,
    tx: mpsc::Sender<Msg>,
    wrap: fn(String) -> Msg,
) {
    let Some(pipe) = pipe else {
        let _ = tx.send(Msg::Closed);
        return;
    };
    thread::spawn(move || {
        let mut reader = BufReader::new(pipe);
        let mut buf = Vec::new();
        loop {
            buf.clear();
            match read_capped_line(&mut reader, &mut buf, MAX_LINE) {
                Ok(Line::End) | Err(_) => break,
                Ok(Line::Whole) => {}
                Ok(Line::Cut { dropped }) => {
                    buf.extend_from_slice(
                        format!("…[pagent: {dropped} more bytes of this line skipped]\n")
                            .as_bytes(),
                    );
                }
            }
            if tx
                .send(wrap(String::from_utf8_lossy(&buf).into_owned()))
                .is_err()
            {
                return;
            }
            // A long line's buffer is not kept for the next one.
            if buf.capacity() > 64 * 1024 {
                buf = Vec::new();
            }
        }
        let _ = tx.send(Msg::Closed);
    });
}

/// What [`read_capped_line`] read.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Line {
    /// A whole line (its newline included, unless the stream ended without one).
    Whole,
    /// The first `max` bytes of a longer line; `dropped` bytes up to and including its
    /// newline (or the end of the stream) were read and thrown away.
    Cut { dropped: u64 },
    /// The stream ended; nothing was read.
    End,
}

/// Reads one line into `buf`, keeping at most `max` bytes of it: the rest is consumed in
/// the reader's own buffer-sized pieces and dropped, so memory stays bounded however long
/// the line is.
pub(super) fn read_capped_line(
    reader: &mut impl BufRead,
    buf: &mut Vec<u8>,
    max: usize,
) -> std::io::Result<Line> {
    let mut dropped: u64 = 0;
    let mut any = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(available) => available,
            Err(err) if err.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        };
        if available.is_empty() {
            break;
        }
        any = true;
        let (chunk, done) = match available.iter().position(|b| *b == b'\n') {
            Some(newline) => (&available[..=newline], true),
            None => (available, false),
        };
        let keep = chunk.len().min(max - buf.len().min(max));
        buf.extend_from_slice(&chunk[..keep]);
        dropped += (chunk.len() - keep) as u64;
        let used = chunk.len();
        reader.consume(used);
        if done {
            break;
        }
    }
    Ok(match (any, dropped) {
        (false, _) => Line::End,
        (true, 0) => Line::Whole,
        (true, dropped) => Line::Cut { dropped },
    })
}

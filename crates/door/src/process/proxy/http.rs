//! Plain HTTP from the child, request by request: a client such as Bun's `fetch` keeps
//! its connection to the proxy open and sends its next request on it, in the same
//! absolute form (`POST http://HOST/PATH`). Each head is read (bounded like the first),
//! must name the host the connection was opened to, and goes on in origin form; each
//! body is copied by its length (`Content-Length`, or chunk by chunk). A request for
//! another host, or one not understood, ends the connection: the child opens a new one,
//! which the proxy checks from the start.

use std::io::{self, BufRead, BufReader, Cursor, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::unix::net::UnixStream;

use super::HEAD_LIMIT;
use super::serve::{Clock, Request, Side, TICK, idle_too_long, request, touch};

type Reader = BufReader<io::Chain<Cursor<Vec<u8>>, UnixStream>>;

/// Copies the child's requests to `upstream` (the first already read: `first`, and
/// `rest` what came after its head) until the child ends, an error, a request for another
/// host, or the idle clock.
pub(super) fn pump_requests(
    child: UnixStream,
    mut upstream: TcpStream,
    first: Request,
    rest: Vec<u8>,
    clock: &Clock,
) {
    Side::read_timeout(&child, TICK);
    let (host, port) = (first.host.clone(), first.port);
    let mut reader: Reader = BufReader::new(Cursor::new(rest).chain(child));
    let mut head = first.forward.unwrap_or_default();
    loop {
        let lengths = body_length(&head);
        if upstream.write_all(head.as_bytes()).is_err()
            || copy_body(&mut reader, &mut upstream, lengths, clock).is_err()
        {
            break;
        }
        touch(clock);
        let next = match read_head(&mut reader, clock) {
            Ok(Some(next)) => next,
            Ok(None) => {
                upstream.close(Shutdown::Write);
                return;
            }
            Err(_) => break,
        };
        match request(&next) {
            Ok(req) if req.host == host && req.port == port => {
                head = req.forward.unwrap_or_default();
            }
            _ => break,
        }
    }
    reader.into_inner().into_inner().1.close(Shutdown::Both);
    upstream.close(Shutdown::Both);
}

/// How a request's body is framed.
enum Body {
    None,
    Length(u64),
    Chunked,
}

fn body_length(head: &str) -> Body {
    let mut body = Body::None;
    for line in head.split("\r\n").skip(1) {
        let Some((name, value)) = line.split_once(':') else {
            continue;
        };
        let (name, value) = (name.trim(), value.trim());
        if name.eq_ignore_ascii_case("transfer-encoding")
            && value.to_ascii_lowercase().contains("chunked")
        {
            return Body::Chunked;
        }
        if name.eq_ignore_ascii_case("content-length") {
            body = value.parse().map_or(Body::None, Body::Length);
        }
    }
    body
}

/// Waits for bytes in `reader`'s buffer: `false` at the end of the stream.
fn more(reader: &mut Reader, clock: &Clock) -> io::Result<bool> {
    loop {
        match reader.fill_buf() {
            Ok(buf) => return Ok(!buf.is_empty()),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if idle_too_long(clock) {
                    return Err(e);
                }
            }
            Err(e) => return Err(e),
        }
    }
}

/// One line with its `\n`, at most [`HEAD_LIMIT`] bytes; empty at the end of the stream.
fn read_line(reader: &mut Reader, clock: &Clock) -> io::Result<Vec<u8>> {
    let mut line = Vec::new();
    while more(reader, clock)? {
        let buf = reader.buffer();
        let (take, done) = match buf.iter().position(|b| *b == b'\n') {
            Some(i) => (i + 1, true),
            None => (buf.len(), false),
        };
        line.extend_from_slice(&buf[..take]);
        reader.consume(take);
        if line.len() > HEAD_LIMIT {
            return Err(io::Error::other("line too long"));
        }
        if done {
            break;
        }
    }
    Ok(line)
}

/// The next request head; `None` when the child ended between requests.
fn read_head(reader: &mut Reader, clock: &Clock) -> io::Result<Option<String>> {
    let mut head = Vec::new();
    loop {
        let line = read_line(reader, clock)?;
        if line.is_empty() {
            return if head.is_empty() {
                Ok(None)
            } else {
                Err(io::ErrorKind::UnexpectedEof.into())
            };
        }
        head.extend_from_slice(&line);
        if head.len() > HEAD_LIMIT {
            return Err(io::Error::other("head too large"));
        }
        if line == b"\r\n" {
            return String::from_utf8(head).map(Some).map_err(io::Error::other);
        }
    }
}

/// Copies exactly `n` bytes.
fn copy_exact(
    reader: &mut Reader,
    to: &mut TcpStream,
    mut n: u64,
    clock: &Clock,
) -> io::Result<()> {
    while n > 0 {
        if !more(reader, clock)? {
            return Err(io::ErrorKind::UnexpectedEof.into());
        }
        let buf = reader.buffer();
        let take = buf.len().min(usize::try_from(n).unwrap_or(usize::MAX));
        to.write_all(&buf[..take])?;
        reader.consume(take);
        n -= take as u64;
        touch(clock);
    }
    Ok(())
}

fn copy_body(reader: &mut Reader, to: &mut TcpStream, body: Body, clock: &Clock) -> io::Result<()> {
    match body {
        Body::None => Ok(()),
        Body::Length(n) => copy_exact(reader, to, n, clock),
        Body::Chunked => loop {
            let line = read_line(reader, clock)?;
            to.write_all(&line)?;
            let text = String::from_utf8_lossy(&line);
            let size = text.split(';').next().unwrap_or_default().trim();
            let size = u64::from_str_radix(size, 16).map_err(io::Error::other)?;
            if size == 0 {
                // Trailers, up to the blank line.
                loop {
                    let trailer = read_line(reader, clock)?;
                    to.write_all(&trailer)?;
                    if trailer == b"\r\n" || trailer.is_empty() {
                        return Ok(());
                    }
                }
            }
            copy_exact(reader, to, size + 2, clock)?;
        },
    }
}

//! The dashboard's front door: one thread accepts every connection and reads each
//! request as its bytes arrive, and only a request read whole (or refused) goes to a
//! worker.
//!
//! Any local process can open connections to the dashboard and send nothing: when a
//! worker read each request itself, 45 such connections, renewed every second, held all
//! eight workers and the queue behind them, and 13 of the user's 15 requests were told
//! 503 (issue 30). Here a connection that is still sending costs a buffer, not a thread:
//! the thread waits for every socket at once (mio: epoll, kqueue, or Windows' AFD), so
//! the user's request, which arrives whole at once, is answered whatever is idle beside
//! it. What is still bounded:
//!
//! - **Time**: a request not whole within [`http::REQUEST_DEADLINE`] of its connection's
//!   acceptance is told 408 and closed (slowloris: a byte a second is cut off like
//!   silence).
//! - **Count**: at most [`MAX_PENDING`] connections are being read; one more makes room
//!   by closing the oldest, which has had the longest to send its request (a browser
//!   sends one at once; an idle connection never does), so the newest, the user's, is
//!   never the one closed. Running out of descriptors does the same.
//! - **Size**: a request's bytes are read up to the largest request [`http`] accepts.
//!
//! A peer's address says nothing on 127.0.0.1, where every local process is the same
//! peer, so there is no cap per peer: the oldest-first rule is what keeps fresh requests
//! in.

use std::collections::BTreeMap;
use std::io::{self, Read, Write};
use std::net::TcpListener;
use std::sync::mpsc::{SyncSender, TrySendError};
use std::time::{Duration, Instant};

use mio::net::{TcpListener as Listener, TcpStream as Stream};
use mio::{Events, Interest, Poll, Token};

use super::http::{self, Refusal, Request};

/// Connections being read at once; one more closes the oldest.
pub const MAX_PENDING: usize = 512;
/// The most bytes read of one request: the largest head and body accepted.
const MAX_REQUEST: usize = http::MAX_HEAD + 4 + http::MAX_BODY;
/// How soon accepting is tried again after it failed (out of descriptors, say).
const ACCEPT_RETRY: Duration = Duration::from_millis(20);
const LISTENER: Token = Token(0);

/// A connection whose request was read whole, or refused, for a worker to answer.
pub type Job = (std::net::TcpStream, Result<Request, Refusal>);

/// A connection still sending its request.
struct Pending {
    stream: Stream,
    buf: Vec<u8>,
    accepted: Instant,
}

/// What reading a connection came to.
enum Reading {
    /// Everything there was read; more is due.
    Waiting,
    /// Closed before a whole request, or broken: nothing to answer.
    Gone,
    Done(Result<Request, Refusal>),
}

/// Accepts and reads for ever, handing each request read to `workers`.
pub fn run(listener: TcpListener, workers: &SyncSender<Job>) -> io::Result<()> {
    listener.set_nonblocking(true)?;
    let mut listener = Listener::from_std(listener);
    let poll = Poll::new()?;
    poll.registry()
        .register(&mut listener, LISTENER, Interest::READABLE)?;
    let mut door = Door {
        poll,
        pending: BTreeMap::new(),
        next: 1,
        retry_accept: None,
    };
    let mut events = Events::with_capacity(256);
    loop {
        let wait = door.wait(Instant::now());
        match door.poll.poll(&mut events, Some(wait)) {
            Ok(()) => {}
            Err(err) if err.kind() == io::ErrorKind::Interrupted => continue,
            Err(err) => return Err(err),
        }
        for event in &events {
            match event.token() {
                LISTENER => door.accept(&listener),
                Token(key) => door.read(key, workers),
            }
        }
        if door.retry_accept.is_some_and(|at| at <= Instant::now()) {
            door.accept(&listener);
        }
        door.expire(Instant::now());
    }
}

/// The connections being read, in the order they were accepted (their keys grow).
struct Door {
    poll: Poll,
    pending: BTreeMap<usize, Pending>,
    next: usize,
    retry_accept: Option<Instant>,
}

impl Door {
    /// How long the next wait may last: until the oldest request's deadline, or a retry.
    fn wait(&self, now: Instant) -> Duration {
        let deadline = self
            .pending
            .values()
            .next()
            .map(|p| p.accepted + http::REQUEST_DEADLINE);
        [deadline, self.retry_accept]
            .into_iter()
            .flatten()
            .map(|at| at.saturating_duration_since(now))
            .min()
            .unwrap_or(Duration::from_secs(60))
    }

    /// Accepts every connection waiting.
    fn accept(&mut self, listener: &Listener) {
        self.retry_accept = None;
        loop {
            match listener.accept() {
                Ok((mut stream, _)) => {
                    if self.pending.len() >= MAX_PENDING {
                        self.close_oldest();
                    }
                    let key = self.next;
                    self.next += 1;
                    if self
                        .poll
                        .registry()
                        .register(&mut stream, Token(key), Interest::READABLE)
                        .is_ok()
                    {
                        let accepted = Instant::now();
                        self.pending.insert(
                            key,
                            Pending {
                                stream,
                                buf: Vec::new(),
                                accepted,
                            },
                        );
                    }
                }
                Err(err) if err.kind() == io::ErrorKind::WouldBlock => return,
                Err(err)
                    if matches!(
                        err.kind(),
                        io::ErrorKind::Interrupted | io::ErrorKind::ConnectionAborted
                    ) => {}
                Err(err) => {
                    // Out of descriptors: the oldest connection being read makes room.
                    if !(out_of_descriptors(&err) && self.close_oldest()) {
                        self.retry_accept = Some(Instant::now() + ACCEPT_RETRY);
                        return;
                    }
                }
            }
        }
    }

    /// Reads what connection `key` sent; hands its request to a worker once whole.
    fn read(&mut self, key: usize, workers: &SyncSender<Job>) {
        let Some(pending) = self.pending.get_mut(&key) else {
            return;
        };
        match read_more(pending) {
            Reading::Waiting => {}
            Reading::Gone => {
                self.remove(key);
            }
            Reading::Done(request) => {
                let Some(stream) = self.remove(key) else {
                    return;
                };
                let stream = std::net::TcpStream::from(stream);
                if stream.set_nonblocking(false).is_err() {
                    return;
                }
                match workers.try_send((stream, request)) {
                    Ok(()) | Err(TrySendError::Disconnected(_)) => {}
                    Err(TrySendError::Full((stream, _))) => busy(stream),
                }
            }
        }
    }

    /// Tells every connection past its deadline so, and closes it.
    fn expire(&mut self, now: Instant) {
        while let Some((&key, oldest)) = self.pending.first_key_value() {
            if oldest.accepted + http::REQUEST_DEADLINE > now {
                return;
            }
            if let Some(mut stream) = self.remove(key) {
                let response = http::Response::refusal(Refusal::TimedOut);
                let _ = stream.write(&http::response_bytes(&response));
            }
        }
    }

    /// Closes the connection that has been sending its request longest; false when none.
    fn close_oldest(&mut self) -> bool {
        let Some(&key) = self.pending.keys().next() else {
            return false;
        };
        if let Some(mut stream) = self.remove(key) {
            let _ = stream.write(BUSY);
        }
        true
    }

    fn remove(&mut self, key: usize) -> Option<Stream> {
        let mut pending = self.pending.remove(&key)?;
        let _ = self.poll.registry().deregister(&mut pending.stream);
        Some(pending.stream)
    }
}

/// Reads until the socket has no more for now, the request is whole, or it is refused.
fn read_more(pending: &mut Pending) -> Reading {
    let mut chunk = [0u8; 4096];
    loop {
        match http::parse_request(&pending.buf) {
            Ok(None) => {}
            Ok(Some(request)) => return Reading::Done(Ok(request)),
            Err(refusal) => return Reading::Done(Err(refusal)),
        }
        let room = MAX_REQUEST.saturating_sub(pending.buf.len());
        if room == 0 {
            return Reading::Done(Err(Refusal::HeadTooLarge));
        }
        let want = room.min(chunk.len());
        match pending.stream.read(&mut chunk[..want]) {
            Ok(0) => return Reading::Gone,
            Ok(n) => pending.buf.extend_from_slice(&chunk[..n]),
            Err(err) if err.kind() == io::ErrorKind::WouldBlock => return Reading::Waiting,
            Err(err) if err.kind() == io::ErrorKind::Interrupted => {}
            Err(_) => return Reading::Gone,
        }
    }
}

const BUSY: &[u8] =
    b"HTTP/1.1 503 Service Unavailable\r\nContent-Length: 0\r\nConnection: close\r\n\r\n";

/// Tells a request that found every worker busy and the queue full to come back later,
/// without ever blocking the accepting thread.
fn busy(mut stream: std::net::TcpStream) {
    let _ = stream.set_nonblocking(true);
    let _ = stream.write_all(BUSY);
}

/// Whether accepting failed for want of file descriptors (the process's or the
/// system's).
fn out_of_descriptors(err: &io::Error) -> bool {
    #[cfg(unix)]
    {
        matches!(err.raw_os_error(), Some(libc::EMFILE | libc::ENFILE))
    }
    #[cfg(windows)]
    {
        // WSAEMFILE
        err.raw_os_error() == Some(10024)
    }
}

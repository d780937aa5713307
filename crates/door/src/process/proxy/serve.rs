//! The proxy's server: the accept loop on the Unix socket, one bounded thread per
//! connection, the request head read and checked, and the bytes relayed (see the module
//! essay of [`proxy`](super) for the rules).

use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::os::fd::AsFd;
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use super::http;
use super::{
    AllowList, CONNECT_TIME, HEAD_LIMIT, HEAD_TIME, IDLE_TIME, MAX_CONNECTIONS, Refusal, Wording,
};
use crate::files::{PrivateTemp, private_temp_dir};
use crate::process::sys::{self, Relay};

/// A connection thread's stack: it holds two small buffers and a parsed head.
const STACK: usize = 256 * 1024;
/// How often a quiet relay looks at the idle clock.
pub(super) const TICK: Duration = Duration::from_secs(2);
/// The wait after a connection the accept loop could not take.
const ACCEPT_BACKOFF: Duration = Duration::from_millis(50);

/// The proxy while it serves: its socket in a private folder, and the flag that stops it.
pub(super) struct Serving {
    socket: PathBuf,
    rules: Arc<Rules>,
    stop: Arc<AtomicBool>,
    // Dropped after the accept loop is told to stop: removes the socket and its folder.
    _dir: PrivateTemp,
}

impl Serving {
    pub(super) fn start(hosts: AllowList, wording: Wording) -> io::Result<Serving> {
        let dir = private_temp_dir("pagent-proxy-")?;
        let socket = dir.path().join("proxy.sock");
        let listener = UnixListener::bind(&socket).map_err(|err| too_long(err, &socket))?;
        let stop = Arc::new(AtomicBool::new(false));
        let rules = Arc::new(Rules { hosts, wording });
        let (stopped, served) = (Arc::clone(&stop), Arc::clone(&rules));
        std::thread::Builder::new()
            .name("pagent-proxy".into())
            .stack_size(STACK)
            .spawn(move || accept(&listener, &stopped, &served))?;
        Ok(Serving {
            socket,
            rules,
            stop,
            _dir: dir,
        })
    }

    pub(super) fn socket(&self) -> &Path {
        &self.socket
    }

    pub(super) fn hosts(&self) -> &[String] {
        &self.rules.hosts.1
    }
}

/// `err`, said plainly when it is the socket's path too long for a Unix socket (a long
/// `TMPDIR`), which the system words as `path must be shorter than SUN_LEN`.
fn too_long(err: io::Error, socket: &Path) -> io::Error {
    // sun_path holds 108 bytes on Linux and 104 on macOS, its last one the ending zero.
    if err.kind() != io::ErrorKind::InvalidInput || socket.as_os_str().len() < 104 {
        return err;
    }
    io::Error::new(
        io::ErrorKind::InvalidInput,
        format!(
            "its socket's path {} is longer than a Unix socket's path may be: set TMPDIR to a \
             shorter folder (such as /tmp)",
            socket.display()
        ),
    )
}

impl Drop for Serving {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wakes the accept loop, which sees the flag and ends.
        let _ = UnixStream::connect(&self.socket);
    }
}

struct Rules {
    hosts: AllowList,
    wording: Wording,
}

fn accept(listener: &UnixListener, stop: &AtomicBool, rules: &Arc<Rules>) {
    let open = Arc::new(AtomicUsize::new(0));
    for conn in listener.incoming() {
        if stop.load(Ordering::SeqCst) {
            return;
        }
        let Ok(mut conn) = conn else {
            // An error that lasts (out of descriptors: EMFILE) would spin a core: wait
            // for a connection to end and free one.
            std::thread::sleep(ACCEPT_BACKOFF);
            continue;
        };
        if open.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            refuse(&mut conn, &Refusal::Busy, rules.wording);
            continue;
        }
        let (rules, counted) = (Arc::clone(rules), Slot::take(&open));
        // A thread that could not start drops its slot with the closure.
        let _ = std::thread::Builder::new()
            .name("pagent-proxy-conn".into())
            .stack_size(STACK)
            .spawn(move || {
                let _slot = counted;
                serve(conn, &rules);
            });
    }
}

/// One connection's place among the [`MAX_CONNECTIONS`], given back when dropped: when
/// its connection ends, and when its thread panics or never starts.
struct Slot(Arc<AtomicUsize>);

impl Slot {
    fn take(open: &Arc<AtomicUsize>) -> Slot {
        open.fetch_add(1, Ordering::SeqCst);
        Slot(Arc::clone(open))
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.0.fetch_sub(1, Ordering::SeqCst);
    }
}

/// Answers `refusal` and closes, never waiting long on a child that does not read.
fn refuse(conn: &mut UnixStream, refusal: &Refusal, wording: Wording) {
    let _ = conn.set_write_timeout(Some(Duration::from_secs(5)));
    let _ = conn.write_all(refusal.answer(&wording(refusal)).as_bytes());
    let _ = conn.shutdown(Shutdown::Both);
}

fn serve(mut conn: UnixStream, rules: &Rules) {
    let (head, rest) = match read_head(&mut conn, HEAD_TIME) {
        Ok(Some(read)) => read,
        Ok(None) => return,
        Err(refusal) => return refuse(&mut conn, &refusal, rules.wording),
    };
    let opened =
        request(&head).and_then(|req| open_upstream(&req, &rules.hosts).map(|up| (req, up)));
    let (req, mut upstream) = match opened {
        Ok(opened) => opened,
        Err(refusal) => return refuse(&mut conn, &refusal, rules.wording),
    };
    let _ = upstream.set_write_timeout(Some(IDLE_TIME));
    let _ = conn.set_write_timeout(Some(IDLE_TIME));
    if req.forward.is_some() {
        return relay(conn, upstream, Some((req, rest)));
    }
    let sent = conn
        .write_all(b"HTTP/1.1 200 Connection Established\r\n\r\n")
        .and_then(|()| upstream.write_all(&rest));
    if sent.is_ok() {
        relay(conn, upstream, None);
    }
}

/// The request head (up to and with its blank line) and what came after it; `None`
/// when the child closed before sending one.
fn read_head<S: Side>(
    conn: &mut S,
    within: Duration,
) -> Result<Option<(String, Vec<u8>)>, Refusal> {
    let deadline = Instant::now() + within;
    let mut buf: Vec<u8> = Vec::new();
    let mut chunk = [0u8; 4096];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(Refusal::TooSlow);
        }
        conn.read_timeout(left);
        let n = match conn.read(&mut chunk) {
            Ok(0) => return Ok(None),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                return Err(Refusal::TooSlow);
            }
            Err(_) => return Ok(None),
        };
        let from = buf.len().saturating_sub(3);
        buf.extend_from_slice(&chunk[..n]);
        if let Some(end) = find_blank_line(&buf[from..]).map(|i| from + i + 4) {
            if end > HEAD_LIMIT {
                return Err(Refusal::TooLarge);
            }
            let rest = buf.split_off(end);
            let head = String::from_utf8(buf).map_err(|_| Refusal::BadRequest)?;
            return Ok(Some((head, rest)));
        }
        if buf.len() > HEAD_LIMIT {
            return Err(Refusal::TooLarge);
        }
    }
}

fn find_blank_line(bytes: &[u8]) -> Option<usize> {
    bytes.windows(4).position(|w| w == b"\r\n\r\n")
}

/// A request the proxy understood: where it goes, and for plain HTTP the head to send
/// there (`None`: a `CONNECT` tunnel).
#[derive(Debug, PartialEq, Eq)]
pub(super) struct Request {
    pub(super) host: String,
    pub(super) port: u16,
    pub(super) forward: Option<String>,
}

pub(super) fn request(head: &str) -> Result<Request, Refusal> {
    // A line ended by a bare LF (or a lone CR) would reach the host inside a header this
    // proxy read as one line: a second request hidden in the first.
    if head.split("\r\n").any(|line| line.contains(['\r', '\n'])) {
        return Err(Refusal::BadRequest);
    }
    let mut lines = head.split("\r\n");
    let line = lines.next().unwrap_or_default();
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refusal::BadRequest);
    };
    if !version.starts_with("HTTP/1.") || method.is_empty() {
        return Err(Refusal::BadRequest);
    }
    if method.eq_ignore_ascii_case("CONNECT") {
        let (host, port) = authority(target, None)?;
        return Ok(Request {
            host,
            port,
            forward: None,
        });
    }
    let scheme = target
        .get(..7)
        .filter(|s| s.eq_ignore_ascii_case("http://"));
    let Some(after) = scheme.map(|_| &target[7..]) else {
        return Err(Refusal::BadRequest);
    };
    let split = after.find(['/', '?', '#']).unwrap_or(after.len());
    let (auth, path) = after.split_at(split);
    let path = if path.starts_with('/') {
        path.to_owned()
    } else {
        format!("/{path}")
    };
    let (host, port) = authority(auth, Some(80))?;
    let mut out = format!("{method} {path} {version}\r\nHost: {auth}\r\n");
    for header in lines.filter(|l| !l.is_empty()) {
        let name = header.split(':').next().unwrap_or_default().trim();
        let dropped = ["host", "proxy-connection", "proxy-authorization"];
        if !dropped.iter().any(|d| name.eq_ignore_ascii_case(d)) {
            out.push_str(header);
            out.push_str("\r\n");
        }
    }
    out.push_str("\r\n");
    Ok(Request {
        host,
        port,
        forward: Some(out),
    })
}

/// `HOST:PORT` (the port may be left out where `default` is given), the host lowercase
/// without a trailing dot. A user name (`user@host`) or an empty host is refused.
fn authority(text: &str, default: Option<u16>) -> Result<(String, u16), Refusal> {
    if text.contains('@') || text.is_empty() {
        return Err(Refusal::BadRequest);
    }
    let (host, port) = match text.rsplit_once(':') {
        Some((host, port)) if !host.contains(':') || host.ends_with(']') => {
            (host, port.parse::<u16>().map_err(|_| Refusal::BadRequest)?)
        }
        _ => (text, default.ok_or(Refusal::BadRequest)?),
    };
    let host = host.strip_suffix('.').unwrap_or(host).to_ascii_lowercase();
    if host.is_empty() || port == 0 {
        return Err(Refusal::BadRequest);
    }
    Ok((host, port))
}

/// The connection to the host asked for: allowed, resolved once, local addresses kept
/// out unless the entry names the machine, connected to an address that was checked.
fn open_upstream(req: &Request, hosts: &AllowList) -> Result<TcpStream, Refusal> {
    let (host, port) = (req.host.clone(), req.port);
    if !is_host(&host) {
        return Err(Refusal::BadRequest);
    }
    let Some(entry) = hosts.find(&host, port) else {
        return Err(Refusal::NotAllowed { host, port });
    };
    let unreachable = |why: String| Refusal::Unreachable {
        host: host.clone(),
        port,
        why,
    };
    let resolved: Vec<SocketAddr> = (host.as_str(), port)
        .to_socket_addrs()
        .map_err(|e| unreachable(e.to_string()))?
        .collect();
    let mine = entry.names_this_machine();
    let own = if mine {
        Vec::new()
    } else {
        sys::own_addresses()
    };
    let addrs: Vec<SocketAddr> = resolved
        .iter()
        .filter(|a| mine || !(is_local(a.ip()) || own.contains(&plain(a.ip()))))
        .copied()
        .collect();
    if addrs.is_empty() && !resolved.is_empty() {
        return Err(Refusal::Local { host, port });
    }
    let mut last = "no address".to_owned();
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, CONNECT_TIME) {
            // The machine's own address on any interface (one it got after the list was
            // read): a connection to itself has the same address at both ends.
            Ok(stream) if !mine && reaches_itself(&stream) => {
                return Err(Refusal::Local { host, port });
            }
            Ok(stream) => return Ok(stream),
            Err(e) => last = e.to_string(),
        }
    }
    Err(unreachable(last))
}

/// Whether `host` is a host at all: a name of letters, digits, dots and dashes (an IPv4
/// address among them), or an IPv6 address in brackets. Anything else (a control byte,
/// a space, `%`) is refused before it is looked up or said back to the child.
fn is_host(host: &str) -> bool {
    let name = host
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
    let ipv6 = host
        .strip_prefix('[')
        .and_then(|h| h.strip_suffix(']'))
        .is_some_and(|h| h.parse::<std::net::Ipv6Addr>().is_ok());
    name || ipv6
}

/// `ip` with an IPv4-mapped IPv6 address (`::ffff:a.b.c.d`) as the IPv4 one.
fn plain(ip: IpAddr) -> IpAddr {
    match ip {
        IpAddr::V6(v6) => v6.to_ipv4_mapped().map_or(ip, IpAddr::V4),
        IpAddr::V4(_) => ip,
    }
}

/// Whether `stream` is connected to this machine itself (both ends one address).
fn reaches_itself(stream: &TcpStream) -> bool {
    match (stream.local_addr(), stream.peer_addr()) {
        (Ok(local), Ok(peer)) => plain(local.ip()) == plain(peer.ip()),
        _ => true,
    }
}

/// A loopback, unspecified or link-local address (the usual home of a cloud's metadata
/// server), or a cloud's metadata server where it is not link-local: AWS's IPv6 one
/// (`fd00:ec2::254`) and Alibaba Cloud's (`100.100.100.200`). The machine's other own
/// addresses are found at the connection ([`open_upstream`]).
fn is_local(ip: IpAddr) -> bool {
    const METADATA: [IpAddr; 2] = [
        IpAddr::V4(std::net::Ipv4Addr::new(100, 100, 100, 200)),
        IpAddr::V6(std::net::Ipv6Addr::new(0xfd00, 0xec2, 0, 0, 0, 0, 0, 0x254)),
    ];
    if METADATA.contains(&ip) {
        return true;
    }
    match ip {
        IpAddr::V4(v4) => {
            v4.is_loopback() || v4.is_unspecified() || v4.is_link_local() || v4.octets()[0] == 0
        }
        IpAddr::V6(v6) => match v6.to_ipv4_mapped() {
            Some(v4) => is_local(IpAddr::V4(v4)),
            None => {
                v6.is_loopback() || v6.is_unspecified() || (v6.segments()[0] & 0xffc0) == 0xfe80
            }
        },
    }
}

/// One side of a relay: a socket read with a timeout and shut down by halves.
///
/// A write to a child's socket that the child closed is an error here (`EPIPE`), not the
/// end of pagent, only because pagent's process ignores SIGPIPE (Rust's runtime sets it
/// so): never restore its default in `main` (`tests/integration/sandbox.rs` checks it).
pub(super) trait Side: Read + Write + AsFd + Send + 'static {
    fn read_timeout(&self, t: Duration);
    fn close(&self, how: Shutdown);
    fn twin(&self) -> io::Result<Self>
    where
        Self: Sized;
}

impl Side for UnixStream {
    fn read_timeout(&self, t: Duration) {
        let _ = self.set_read_timeout(Some(t));
    }
    fn close(&self, how: Shutdown) {
        let _ = self.shutdown(how);
    }
    fn twin(&self) -> io::Result<Self> {
        self.try_clone()
    }
}

impl Side for TcpStream {
    fn read_timeout(&self, t: Duration) {
        let _ = self.set_read_timeout(Some(t));
    }
    fn close(&self, how: Shutdown) {
        let _ = self.shutdown(how);
    }
    fn twin(&self) -> io::Result<Self> {
        self.try_clone()
    }
}

/// Copies both ways until both have ended, or until neither has carried a byte for
/// [`IDLE_TIME`]: one direction on a second thread, the other on this one. For plain HTTP
/// (`plain`: its first request, with what came after its head), the child's side is read
/// request by request ([`http`]): each head checked and rewritten like the first.
fn relay(child: UnixStream, upstream: TcpStream, plain: Option<(Request, Vec<u8>)>) {
    let clock = Arc::new((Instant::now(), AtomicU64::new(0)));
    let (Ok(child2), Ok(upstream2)) = (child.twin(), upstream.twin()) else {
        return;
    };
    let theirs = Arc::clone(&clock);
    let other = std::thread::Builder::new()
        .name("pagent-proxy-up".into())
        .stack_size(STACK)
        .spawn(move || match plain {
            Some((first, rest)) => http::pump_requests(child2, upstream2, first, rest, &theirs),
            None => pump(child2, upstream2, &theirs),
        });
    if other.is_err() {
        child.close(Shutdown::Both);
        upstream.close(Shutdown::Both);
        return;
    }
    pump(upstream, child, &clock);
    if let Ok(other) = other {
        let _ = other.join();
    }
}

/// Whether neither direction has carried a byte for [`IDLE_TIME`].
pub(super) fn idle_too_long(clock: &Clock) -> bool {
    let (start, last) = clock;
    let now = u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX);
    u128::from(now.saturating_sub(last.load(Ordering::Relaxed))) >= IDLE_TIME.as_millis()
}

/// Marks a byte carried now.
pub(super) fn touch(clock: &Clock) {
    let (start, last) = clock;
    last.store(
        u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
        Ordering::Relaxed,
    );
}

/// When the relay started, and the last byte it carried (milliseconds since).
pub(super) type Clock = (Instant, AtomicU64);

/// Copies `from` into `to` until `from` ends (then `to`'s writing half is shut), an
/// error, either side's other end gone entirely (a dead sandbox's forwarder: its tunnels
/// end with it rather than hold their places until the idle clock), or the shared clock
/// says both directions were idle too long.
fn pump<A: Side, B: Side>(mut from: A, mut to: B, clock: &Clock) {
    from.read_timeout(TICK);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let read = match sys::wait_relay(from.as_fd(), to.as_fd(), TICK) {
            Relay::Gone => break,
            Relay::Idle => Err(io::ErrorKind::TimedOut.into()),
            Relay::Readable => from.read(&mut buf),
        };
        match read {
            Ok(0) => return to.close(Shutdown::Write),
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
                touch(clock);
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                if idle_too_long(clock) {
                    break;
                }
            }
            Err(_) => break,
        }
    }
    from.close(Shutdown::Both);
    to.close(Shutdown::Both);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_plain_request_goes_on_in_origin_form_with_its_host_and_no_proxy_headers() {
        let req = request(
            "GET http://Example.org:8080/a?b HTTP/1.1\r\nHost: evil.example\r\n\
             Proxy-Authorization: x\r\nAccept: */*\r\nConnection: keep-alive\r\n\r\n",
        )
        .unwrap();
        assert_eq!(req.host, "example.org");
        assert_eq!(req.port, 8080);
        assert_eq!(
            req.forward.as_deref(),
            Some(
                "GET /a?b HTTP/1.1\r\nHost: Example.org:8080\r\nAccept: */*\r\n\
                 Connection: keep-alive\r\n\r\n"
            )
        );
        let connect = request("CONNECT registry.example.org:443 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(
            (connect.host.as_str(), connect.port, connect.forward),
            ("registry.example.org", 443, None)
        );
    }

    /// Review L2: a header line ended by a bare LF or a lone CR (a request hidden in a
    /// header, for a host that reads bare LFs) is refused as bad, not sent on.
    #[test]
    fn a_head_with_a_bare_lf_is_refused_as_bad() {
        for head in [
            "GET http://example.org/ HTTP/1.1\r\nX: a\nGET /admin HTTP/1.1\r\n\r\n",
            "GET http://example.org/ HTTP/1.1\r\nX: a\rb\r\n\r\n",
            "GET http://example.org/ HTTP/1.1\nHost: example.org\r\n\r\n",
        ] {
            assert_eq!(request(head), Err(Refusal::BadRequest), "{head:?}");
        }
    }

    #[test]
    fn what_is_not_a_proxy_request_is_refused_as_bad() {
        for head in [
            "GET / HTTP/1.1\r\n\r\n",
            "GET https://example.org/ HTTP/1.1\r\n\r\n",
            "GET http://user@example.org/ HTTP/1.1\r\n\r\n",
            "CONNECT example.org HTTP/1.1\r\n\r\n",
            "CONNECT :443 HTTP/1.1\r\n\r\n",
            "nonsense\r\n\r\n",
        ] {
            assert_eq!(request(head), Err(Refusal::BadRequest), "{head}");
        }
    }

    /// Review M1: a sandbox that died (its forwarder's sockets closed) frees the places
    /// of its tunnels, rather than holding them until the idle clock ends them.
    #[test]
    fn tunnels_whose_child_is_gone_free_their_place() {
        let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = silent.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let mut held = Vec::new();
            for c in silent.incoming().flatten() {
                held.push(c);
            }
        });
        let hosts = AllowList::parse(&[format!("localhost:{port}")]).unwrap();
        let proxy = Serving::start(hosts, |_| String::new()).unwrap();
        let connect = || {
            let mut c = UnixStream::connect(proxy.socket()).unwrap();
            c.write_all(format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n").as_bytes())
                .unwrap();
            // The whole answer, as the forwarder reads it: a Unix socket closed with
            // unread bytes would reset its peer, which ends the tunnel anyway.
            let mut answer = [0u8; 39];
            c.read_exact(&mut answer).unwrap();
            (c, answer)
        };
        let open: Vec<_> = (0..MAX_CONNECTIONS).map(|_| connect()).collect();
        assert!(open.iter().all(|(_, a)| a.starts_with(b"HTTP/1.1 200")));
        drop(open); // the sandbox ended: every child side is closed
        std::thread::sleep(TICK * 2);
        assert_eq!(&connect().1[..12], b"HTTP/1.1 200");
    }

    /// A child that only shut its writing half (a request sent, its answer awaited) is
    /// not gone: the host's late answer still reaches it.
    #[test]
    fn a_tunnel_whose_child_only_half_closed_still_gets_its_answer() {
        let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let port = server.local_addr().unwrap().port();
        std::thread::spawn(move || {
            let (mut c, _) = server.accept().unwrap();
            let mut asked = Vec::new();
            c.read_to_end(&mut asked).unwrap();
            std::thread::sleep(TICK * 2);
            c.write_all(&asked).unwrap();
        });
        let hosts = AllowList::parse(&[format!("localhost:{port}")]).unwrap();
        let proxy = Serving::start(hosts, |_| String::new()).unwrap();
        let mut c = UnixStream::connect(proxy.socket()).unwrap();
        c.write_all(format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\nping").as_bytes())
            .unwrap();
        c.shutdown(Shutdown::Write).unwrap();
        let mut answer = String::new();
        c.read_to_string(&mut answer).unwrap();
        assert_eq!(answer, "HTTP/1.1 200 Connection Established\r\n\r\nping");
    }

    /// Review L4: an accept loop whose every accept fails (out of descriptors) waits
    /// between them rather than spin a core. A socket that is not listening fails each
    /// accept (EINVAL), as an exhausted descriptor table would.
    #[test]
    #[cfg(target_os = "linux")]
    fn an_accept_loop_that_keeps_failing_waits_rather_than_spins() {
        let (not_listening, _peer) = UnixStream::pair().unwrap();
        let listener = UnixListener::from(std::os::fd::OwnedFd::from(not_listening));
        let stop = Arc::new(AtomicBool::new(false));
        let stopped = Arc::clone(&stop);
        let rules = Arc::new(Rules {
            hosts: AllowList::default(),
            wording: |_| String::new(),
        });
        let looping = std::thread::spawn(move || {
            accept(&listener, &stopped, &rules);
            // This thread's time on a CPU, in nanoseconds.
            let stat = std::fs::read_to_string("/proc/thread-self/schedstat").unwrap();
            stat.split(' ').next().unwrap().parse::<u64>().unwrap()
        });
        std::thread::sleep(Duration::from_secs(1));
        stop.store(true, Ordering::SeqCst);
        let on_cpu = Duration::from_nanos(looping.join().unwrap());
        assert!(on_cpu < Duration::from_millis(100), "{on_cpu:?} on a CPU");
    }

    /// Review L4: a `TMPDIR` too long for a Unix socket's path is said as such.
    #[test]
    fn a_socket_path_too_long_says_to_shorten_tmpdir() {
        let long = Path::new("/tmp").join("d".repeat(120)).join("proxy.sock");
        let err = UnixListener::bind(&long).unwrap_err();
        let said = too_long(err, &long).to_string();
        assert!(said.contains("set TMPDIR to a shorter folder"), "{said}");
        let other = io::Error::other("disk full");
        assert_eq!(too_long(other, &long).to_string(), "disk full");
    }

    /// Review L1: a target that is not a host (a control byte, a space, `%`, `_`) is a
    /// bad request, never said back in a refusal; an IPv6 address in brackets is a
    /// host, not allowed by any entry.
    #[test]
    fn a_target_that_is_not_a_host_is_refused_as_bad_before_anything_echoes_it() {
        let hosts = AllowList::parse(&["localhost:8081"]).unwrap();
        for target in [
            "a\u{1b}[2Jb:8081",
            "a%0d:8081",
            "my_host:8081",
            "\u{7f}:8081",
        ] {
            let req = request(&format!("CONNECT {target} HTTP/1.1\r\n\r\n")).unwrap();
            assert_eq!(
                open_upstream(&req, &hosts).err(),
                Some(Refusal::BadRequest),
                "{target:?}"
            );
        }
        let req = request("CONNECT [::1]:8081 HTTP/1.1\r\n\r\n").unwrap();
        assert_eq!(
            open_upstream(&req, &hosts).err(),
            Some(Refusal::NotAllowed {
                host: "[::1]".into(),
                port: 8081
            })
        );
    }

    /// Review M3: a cloud's metadata server is refused where it is not link-local.
    #[test]
    fn the_clouds_metadata_servers_are_local_wherever_they_are() {
        for ip in ["fd00:ec2::254", "100.100.100.200", "::ffff:100.100.100.200"] {
            assert!(is_local(ip.parse().unwrap()), "{ip}");
        }
    }

    /// Review M3: an address of this machine other than loopback (its LAN address, a
    /// container bridge's) reaches the services it serves on every interface: refused
    /// as loopback is, unless the entry names the machine.
    #[test]
    fn this_machines_own_lan_address_is_refused_like_loopback() {
        let server = std::net::TcpListener::bind("0.0.0.0:0").unwrap();
        let port = server.local_addr().unwrap().port();
        let probe = std::net::UdpSocket::bind("0.0.0.0:0").unwrap();
        if probe.connect("192.0.2.1:9").is_err() {
            return; // no route out: nothing to test
        }
        let own = probe.local_addr().unwrap().ip();
        let hosts = AllowList::parse(&[format!("{own}:{port}")]).unwrap();
        let req = request(&format!("CONNECT {own}:{port} HTTP/1.1\r\n\r\n")).unwrap();
        assert!(matches!(
            open_upstream(&req, &hosts),
            Err(Refusal::Local { .. })
        ));
        // Each other IPv4 address of this machine the system lists (an entry names no
        // IPv6 address; loopback is the entries' own to name), each one refused.
        for ip in sys::own_addresses() {
            let IpAddr::V4(v4) = plain(ip) else { continue };
            if v4.is_loopback() {
                continue;
            }
            let hosts = AllowList::parse(&[format!("{v4}:{port}")]).unwrap();
            let req = request(&format!("CONNECT {v4}:{port} HTTP/1.1\r\n\r\n")).unwrap();
            assert!(
                matches!(open_upstream(&req, &hosts), Err(Refusal::Local { .. })),
                "{v4}"
            );
        }
        // Refused before any connection: the service learns nothing, nor the child
        // whether it listens.
        server.set_nonblocking(true).unwrap();
        assert!(server.accept().is_err(), "a connection reached the service");
    }

    #[test]
    fn local_addresses_are_the_machine_and_the_metadata_server() {
        for ip in [
            "127.0.0.1",
            "127.8.8.8",
            "0.0.0.0",
            "169.254.169.254",
            "::1",
            "::",
            "fe80::1",
            "::ffff:127.0.0.1",
        ] {
            assert!(is_local(ip.parse().unwrap()), "{ip}");
        }
        for ip in ["10.0.0.1", "93.184.216.34", "2001:db8::1"] {
            assert!(!is_local(ip.parse().unwrap()), "{ip}");
        }
    }
}

//! The proxy's server: the accept loop on the Unix socket, one bounded thread per
//! connection, the request head read and checked, and the bytes relayed (see the module
//! essay of [`proxy`](super) for the rules).

use std::io::{self, Read, Write};
use std::net::{IpAddr, Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
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

/// A connection thread's stack: it holds two small buffers and a parsed head.
const STACK: usize = 256 * 1024;
/// How often a quiet relay looks at the idle clock.
pub(super) const TICK: Duration = Duration::from_secs(2);

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
        let listener = UnixListener::bind(&socket)?;
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
        let Ok(mut conn) = conn else { continue };
        if open.load(Ordering::SeqCst) >= MAX_CONNECTIONS {
            refuse(&mut conn, &Refusal::Busy, rules.wording);
            continue;
        }
        open.fetch_add(1, Ordering::SeqCst);
        let (rules, counted) = (Arc::clone(rules), Arc::clone(&open));
        let spawned = std::thread::Builder::new()
            .name("pagent-proxy-conn".into())
            .stack_size(STACK)
            .spawn(move || {
                serve(conn, &rules);
                counted.fetch_sub(1, Ordering::SeqCst);
            });
        if spawned.is_err() {
            open.fetch_sub(1, Ordering::SeqCst);
        }
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
    let addrs: Vec<SocketAddr> = resolved
        .iter()
        .filter(|a| entry.names_this_machine() || !is_local(a.ip()))
        .copied()
        .collect();
    if addrs.is_empty() && !resolved.is_empty() {
        return Err(Refusal::Local { host, port });
    }
    let mut last = "no address".to_owned();
    for addr in &addrs {
        match TcpStream::connect_timeout(addr, CONNECT_TIME) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e.to_string(),
        }
    }
    Err(unreachable(last))
}

/// An address on this machine, or the cloud's metadata server (link-local).
fn is_local(ip: IpAddr) -> bool {
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
pub(super) trait Side: Read + Write + Send + 'static {
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
/// error, or the shared clock says both directions were idle too long.
fn pump<A: Side, B: Side>(mut from: A, mut to: B, clock: &Clock) {
    from.read_timeout(TICK);
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
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

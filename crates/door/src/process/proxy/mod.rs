//! The network of a contained child: a small HTTP proxy of pagent's that lets the child
//! reach the hosts the user allowed (`--allow-host`) and nothing else.
//!
//! The walls keep the child in a network namespace of its own, with only a loopback
//! ([`contain`](super::contain)). The proxy runs outside, in pagent, on a Unix socket in a
//! private folder (mode 0700, removed when the proxy drops); the walls bind that socket
//! into the child's private `/tmp`, and start the child under pagent's own binary in its
//! forwarder mode ([`forward`]), which listens on `127.0.0.1:PORT` inside the child's
//! namespace, relays each connection to the socket, and starts the child with
//! `HTTP_PROXY`, `HTTPS_PROXY` and `ALL_PROXY` (both cases) naming it. Why pagent's own
//! binary rather than socat (what Claude Code's sandbox runs): it listens before the
//! child starts (socat started beside it would race the child's first connection), picks
//! a free port, and needs nothing installed but bubblewrap.
//!
//! What the proxy allows ([`AllowedHost`]): `HOST` (exact), `*.SUFFIX` (any name under
//! SUFFIX, not SUFFIX itself; SUFFIX ends with a name, so it matches no IP address), each
//! on ports 80 and 443, or `HOST:PORT` on that port only. A name is resolved here, outside, once, and the connection goes to the address
//! that was resolved and checked, never to a name resolved again (a rebinding DNS server
//! cannot swap the address between the check and the connection). An address on the
//! machine itself (loopback, unspecified, any address of its interfaces: the LAN's, a
//! container bridge's) is reached only when the allowed entry names it as such,
//! `localhost:PORT` or `127.0.0.1:PORT`: an allowed name that resolves to 127.0.0.1 or
//! to the machine's LAN address is refused. A cloud's metadata server (link-local
//! `169.254.169.254`, `fe80::/10`, AWS's `fd00:ec2::254`, Alibaba's `100.100.100.200`)
//! is never reached.
//!
//! `CONNECT HOST:PORT` (HTTPS, any TLS) is a tunnel; `GET http://HOST/...` (plain HTTP,
//! the absolute form) is sent on with the request line in origin form, `Host` set from
//! the address asked for and `Connection: close` (one request read per connection: what
//! follows it goes to the same host unread, as through a tunnel; a line ended by a bare
//! LF is refused, so no request hides in a header). Anything else is refused with a status
//! and a body the caller words ([`Refusal`]).
//!
//! Bounded, since the child may be hostile: at most [`MAX_CONNECTIONS`] at once (more
//! are answered 503 and closed), a request head of at most [`HEAD_LIMIT`] bytes read
//! within [`HEAD_TIME`], a connection to the host within [`CONNECT_TIME`], and a
//! connection idle for [`IDLE_TIME`] in both directions closed (one whose child side has
//! gone entirely, the sandbox ended with its forwarder, at once). Each connection is one
//! thread with a small stack; the loop's own thread never waits on one. The proxy stops
//! when the [`Proxy`] drops (with the loop's agent), and dies with pagent's process.

use std::io;

use std::path::{Path, PathBuf};
use std::time::Duration;

#[cfg(unix)]
pub(super) mod forward;
#[cfg(unix)]
mod http;
#[cfg(unix)]
mod serve;

/// The argument that starts pagent's binary as the forwarder inside the walls.
pub const FORWARDER_ARG: &str = "__pagent-sandbox-forward";

/// Connections served at once.
pub const MAX_CONNECTIONS: usize = 64;
/// The longest request head (request line and headers) read.
pub const HEAD_LIMIT: usize = 16 * 1024;
/// The time a request head has to arrive.
pub const HEAD_TIME: Duration = Duration::from_secs(10);
/// The time a connection to an allowed host has to be made.
pub const CONNECT_TIME: Duration = Duration::from_secs(15);
/// A connection with no byte in either direction for this long is closed.
pub const IDLE_TIME: Duration = Duration::from_secs(600);

/// One host the proxy lets through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AllowedHost {
    /// Lowercase, without `*.` for a suffix.
    name: String,
    suffix: bool,
    port: Option<u16>,
}

impl AllowedHost {
    /// `HOST`, `*.SUFFIX` or `HOST:PORT` (letters, digits, dots and dashes; an IPv4
    /// address is a name of digits and dots). The error says what is wrong.
    pub fn parse(text: &str) -> Result<AllowedHost, String> {
        let (host, port) = match text.rsplit_once(':') {
            Some((host, port)) => {
                let port: u16 = port
                    .parse()
                    .ok()
                    .filter(|p| *p != 0)
                    .ok_or_else(|| format!("`{port}` is not a port"))?;
                (host, Some(port))
            }
            None => (text, None),
        };
        let (suffix, name) = match host.strip_prefix("*.") {
            Some(name) => (true, name),
            None => (false, host),
        };
        let fits = !name.is_empty()
            && name.len() <= 253
            && !name.starts_with(['.', '-'])
            && !name.ends_with('.')
            && name
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '.' || c == '-');
        if !fits {
            return Err("not a host name".to_owned());
        }
        // `*.0.1` would match IP addresses (10.0.0.1): a suffix ends with a name.
        let last = name.rsplit('.').next().unwrap_or_default();
        if suffix && last.chars().all(|c| c.is_ascii_digit()) {
            return Err("a *. suffix must end with a name, not a number".to_owned());
        }
        Ok(AllowedHost {
            name: name.to_ascii_lowercase(),
            suffix,
            port,
        })
    }

    /// Whether a request for `host` (lowercase) on `port` is let through.
    #[cfg_attr(not(unix), allow(dead_code, reason = "the proxy serves on Unix only"))]
    fn allows(&self, host: &str, port: u16) -> bool {
        let name = if self.suffix {
            host.strip_suffix(&self.name)
                .is_some_and(|head| head.len() > 1 && head.ends_with('.'))
        } else {
            host == self.name
        };
        let port = match self.port {
            Some(p) => p == port,
            None => port == 80 || port == 443,
        };
        name && port
    }

    /// Whether this entry names the machine itself (`localhost`, a loopback address),
    /// which lets its connection reach a local address.
    #[cfg_attr(not(unix), allow(dead_code, reason = "the proxy serves on Unix only"))]
    fn names_this_machine(&self) -> bool {
        !self.suffix
            && (self.name == "localhost"
                || self
                    .name
                    .parse::<std::net::IpAddr>()
                    .is_ok_and(|ip| ip.is_loopback()))
    }
}

/// The hosts a proxy lets through (and their entries as the user wrote them).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList(Vec<AllowedHost>, Vec<String>);

impl AllowList {
    /// The list of `entries`, each as [`AllowedHost::parse`] reads it.
    pub fn parse<S: AsRef<str>>(entries: &[S]) -> Result<AllowList, String> {
        let hosts = entries
            .iter()
            .map(|e| AllowedHost::parse(e.as_ref()).map_err(|why| format!("{}: {why}", e.as_ref())))
            .collect::<Result<Vec<_>, _>>()?;
        let texts = entries.iter().map(|e| e.as_ref().to_owned()).collect();
        Ok(AllowList(hosts, texts))
    }

    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    /// The entry that lets `host:port` through, if one does.
    #[cfg_attr(not(unix), allow(dead_code, reason = "the proxy serves on Unix only"))]
    fn find(&self, host: &str, port: u16) -> Option<&AllowedHost> {
        self.0.iter().find(|h| h.allows(host, port))
    }
}

/// What the proxy refused, for the caller to word (the body of the answer; the child's
/// tool shows it, and the loop's feedback carries it).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// 403: no allowed entry lets `host:port` through.
    NotAllowed { host: String, port: u16 },
    /// 403: an allowed name resolved to an address on this machine.
    Local { host: String, port: u16 },
    /// 400: not a proxy request (a request line not understood, an `https://` URL
    /// without `CONNECT`, a URL with a user name in it).
    BadRequest,
    /// 431: a request head over [`HEAD_LIMIT`].
    TooLarge,
    /// 408: a request head not there within [`HEAD_TIME`].
    TooSlow,
    /// 503: [`MAX_CONNECTIONS`] already open.
    Busy,
    /// 502: the allowed host could not be resolved or reached.
    Unreachable {
        host: String,
        port: u16,
        why: String,
    },
}

impl Refusal {
    #[cfg_attr(not(unix), allow(dead_code, reason = "the proxy serves on Unix only"))]
    fn status(&self) -> &'static str {
        match self {
            Refusal::NotAllowed { .. } | Refusal::Local { .. } => "403 Forbidden",
            Refusal::BadRequest => "400 Bad Request",
            Refusal::TooLarge => "431 Request Header Fields Too Large",
            Refusal::TooSlow => "408 Request Timeout",
            Refusal::Busy => "503 Service Unavailable",
            Refusal::Unreachable { .. } => "502 Bad Gateway",
        }
    }

    /// The whole answer: status line, headers and `body` (one line of text).
    #[cfg_attr(not(unix), allow(dead_code, reason = "the proxy serves on Unix only"))]
    fn answer(&self, body: &str) -> String {
        let body = format!("{body}\n");
        format!(
            "HTTP/1.1 {}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: {}\r\n\
             Connection: close\r\n\r\n{body}",
            self.status(),
            body.len()
        )
    }
}

/// How the caller words a refusal (texts live with pagent's other texts).
pub type Wording = fn(&Refusal) -> String;

/// A running proxy: stops when dropped (its socket folder removed with it).
pub struct Proxy {
    #[cfg(unix)]
    inner: serve::Serving,
}

impl std::fmt::Debug for Proxy {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Proxy")
            .field("socket", &self.socket())
            .finish()
    }
}

impl Proxy {
    /// Starts a proxy for `hosts`, its refusals worded by `wording`: what the walls need
    /// is then [`Containment::network`](super::Containment::network) with it.
    pub fn start(hosts: AllowList, wording: Wording) -> io::Result<Proxy> {
        #[cfg(unix)]
        {
            Ok(Proxy {
                inner: serve::Serving::start(hosts, wording)?,
            })
        }
        #[cfg(not(unix))]
        {
            let _ = (hosts, wording);
            Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "pagent's sandbox proxy needs Unix sockets",
            ))
        }
    }

    /// The entries it lets through, as they were given.
    pub fn hosts(&self) -> &[String] {
        #[cfg(unix)]
        {
            self.inner.hosts()
        }
        #[cfg(not(unix))]
        {
            &[]
        }
    }

    /// The Unix socket it listens on (outside the walls).
    pub fn socket(&self) -> &Path {
        #[cfg(unix)]
        {
            self.inner.socket()
        }
        #[cfg(not(unix))]
        {
            Path::new("")
        }
    }
}

/// Where the walls put the proxy's socket and the forwarder, inside the child's private
/// `/tmp` (mount points the child cannot remove).
pub(super) const INSIDE_DIR: &str = "/tmp/.pagent-sandbox";

pub(super) fn inside_socket() -> PathBuf {
    Path::new(INSIDE_DIR).join("proxy.sock")
}

pub(super) fn inside_forwarder() -> PathBuf {
    Path::new(INSIDE_DIR).join("pagent")
}

/// Pagent's binary started as the forwarder (`FORWARDER_ARG SOCKET PROGRAM ARGS...`):
/// runs it and returns the exit code to end with; `None` when `args` ask for anything
/// else. `main` calls this first.
pub fn forward_if_asked(args: &[std::ffi::OsString]) -> Option<u8> {
    if args.get(1).map(|a| a.as_os_str()) != Some(FORWARDER_ARG.as_ref()) {
        return None;
    }
    #[cfg(unix)]
    {
        Some(forward::run(&args[2..]))
    }
    #[cfg(not(unix))]
    {
        Some(1)
    }
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    /// Review L3: a suffix of numbers would match IP addresses.
    #[test]
    fn a_suffix_of_numbers_is_refused_so_it_matches_no_ip_address() {
        for entry in ["*.0.1", "*.1", "*.168.0.1:8080"] {
            assert!(
                AllowedHost::parse(entry).map_or(true, |e| !e.allows("10.0.0.1", 443)),
                "{entry}"
            );
            assert!(AllowedHost::parse(entry).is_err(), "{entry}");
        }
        assert!(AllowedHost::parse("*.example.org").is_ok());
        assert!(AllowedHost::parse("*.0.example.org").is_ok());
        assert!(AllowedHost::parse("10.0.0.1").is_ok());
    }

    #[test]
    fn an_allowed_host_is_exact_a_suffix_or_a_port() {
        let exact = AllowedHost::parse("Registry.Example.org").unwrap();
        assert!(exact.allows("registry.example.org", 443));
        assert!(exact.allows("registry.example.org", 80));
        assert!(!exact.allows("registry.example.org", 22));
        assert!(!exact.allows("evil.registry.example.org", 443));
        let suffix = AllowedHost::parse("*.example.org").unwrap();
        assert!(suffix.allows("a.example.org", 443));
        assert!(suffix.allows("a.b.example.org", 443));
        assert!(!suffix.allows("example.org", 443));
        assert!(!suffix.allows("evilexample.org", 443));
        let port = AllowedHost::parse("localhost:8080").unwrap();
        assert!(port.allows("localhost", 8080));
        assert!(!port.allows("localhost", 80));
        assert!(port.names_this_machine());
        assert!(
            AllowedHost::parse("127.0.0.1:9")
                .unwrap()
                .names_this_machine()
        );
        assert!(!exact.names_this_machine());
        for bad in [
            "", "*.", "a b", "host:0", "host:x", "-a", "a.", "a/b", "[::1]:80",
        ] {
            assert!(AllowedHost::parse(bad).is_err(), "{bad}");
        }
    }
}

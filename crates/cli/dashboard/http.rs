//! Just enough HTTP/1.1 for one page and a small JSON API, over a `TcpStream`: a request
//! is read whole under hard limits (by `accept`, as its bytes arrive), answered, and the
//! connection closed.
//!
//! Anything that could grow memory or hold the connection is bounded: the request line
//! and headers together ([`MAX_HEAD`]), their number, the target's length, the body
//! ([`MAX_BODY`]; the API's posts carry none), and the time a client may take to send all
//! of it ([`REQUEST_DEADLINE`], counted from the moment the connection was accepted, so a
//! client trickling a byte a second, slowloris, is cut off like a silent one). Chunked
//! bodies and keep-alive are not spoken at all: every response says `Connection: close`.
//!
//! Every response carries the headers that keep a page from being framed, sniffed,
//! cached, or its address leaked in a `Referer`, and a content security policy that
//! allows only the page's own script and style (no inline script, no other origin).

use std::io::Write;
use std::net::TcpStream;
use std::time::Duration;

/// The request line and headers together.
pub const MAX_HEAD: usize = 16 * 1024;
pub const MAX_HEADERS: usize = 64;
pub const MAX_TARGET: usize = 2048;
/// The API's posts carry no body; a small one is tolerated, a large one refused.
pub const MAX_BODY: usize = 1024;
/// How long a client has, from the moment it is accepted, to send its whole request.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(5);
/// How long a client has to take the response.
pub const WRITE_TIMEOUT: Duration = Duration::from_secs(10);

#[derive(Debug)]
pub struct Request {
    pub method: String,
    /// The path, without the query.
    pub path: String,
    /// The raw query (after `?`), empty when none.
    pub query: String,
    /// Header names lowercased, values trimmed; in order.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The value of the one header `name` (lowercase); `Err` when it is there twice.
    pub fn header(&self, name: &str) -> Result<Option<&str>, ()> {
        let mut found = self.headers.iter().filter(|(n, _)| n == name);
        let first = found.next().map(|(_, v)| v.as_str());
        if found.next().is_some() {
            return Err(());
        }
        Ok(first)
    }

    /// The query parameter `name`, as given (pagent's own parameters need no decoding).
    pub fn query_param(&self, name: &str) -> Option<&str> {
        self.query.split('&').find_map(|pair| {
            let (key, value) = pair.split_once('=').unwrap_or((pair, ""));
            (key == name).then_some(value)
        })
    }
}

/// Why a request was not read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// Not whole within [`REQUEST_DEADLINE`].
    TimedOut,
    Malformed,
    HeadTooLarge,
    TargetTooLong,
    BodyTooLarge,
    /// `Transfer-Encoding` (chunked bodies) is not spoken.
    Unsupported,
}

impl Refusal {
    pub fn status(self) -> u16 {
        match self {
            Refusal::Malformed => 400,
            Refusal::TimedOut => 408,
            Refusal::HeadTooLarge => 431,
            Refusal::TargetTooLong => 414,
            Refusal::BodyTooLarge => 413,
            Refusal::Unsupported => 501,
        }
    }
}

/// The request at the start of `buf` once all of it has arrived; `Ok(None)` while more
/// is due, a refusal as soon as what arrived cannot become an acceptable request.
pub fn parse_request(buf: &[u8]) -> Result<Option<Request>, Refusal> {
    let Some(head_end) = find_head_end(buf) else {
        if buf.len() >= MAX_HEAD {
            return Err(Refusal::HeadTooLarge);
        }
        return Ok(None);
    };
    if head_end > MAX_HEAD {
        return Err(Refusal::HeadTooLarge);
    }
    let head = std::str::from_utf8(&buf[..head_end]).map_err(|_| Refusal::Malformed)?;
    let mut request = parse_head(head)?;
    let length = match request.header("content-length") {
        Err(()) => return Err(Refusal::Malformed),
        Ok(None) => 0,
        Ok(Some(text)) => text.parse::<usize>().map_err(|_| Refusal::Malformed)?,
    };
    if request
        .headers
        .iter()
        .any(|(name, _)| name == "transfer-encoding")
    {
        return Err(Refusal::Unsupported);
    }
    if length > MAX_BODY {
        return Err(Refusal::BodyTooLarge);
    }
    if buf.len() < head_end + 4 + length {
        return Ok(None);
    }
    request.method.make_ascii_uppercase();
    Ok(Some(request))
}

fn find_head_end(buf: &[u8]) -> Option<usize> {
    buf.windows(4).position(|w| w == b"\r\n\r\n")
}

fn parse_head(head: &str) -> Result<Request, Refusal> {
    let mut lines = head.split("\r\n");
    let line = lines.next().ok_or(Refusal::Malformed)?;
    let mut parts = line.split(' ');
    let (Some(method), Some(target), Some(version), None) =
        (parts.next(), parts.next(), parts.next(), parts.next())
    else {
        return Err(Refusal::Malformed);
    };
    if !matches!(version, "HTTP/1.1" | "HTTP/1.0")
        || method.is_empty()
        || !method.bytes().all(|b| b.is_ascii_alphabetic())
    {
        return Err(Refusal::Malformed);
    }
    if target.len() > MAX_TARGET {
        return Err(Refusal::TargetTooLong);
    }
    // Origin form only ("/path?query"): no absolute URLs, no "*".
    if !target.starts_with('/') || target.bytes().any(|b| b <= b' ' || b == 0x7f) {
        return Err(Refusal::Malformed);
    }
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut headers = Vec::new();
    for line in lines {
        if headers.len() == MAX_HEADERS {
            return Err(Refusal::HeadTooLarge);
        }
        let (name, value) = line.split_once(':').ok_or(Refusal::Malformed)?;
        if name.is_empty() || name.bytes().any(|b| b <= b' ' || b >= 0x7f) {
            return Err(Refusal::Malformed);
        }
        headers.push((name.to_ascii_lowercase(), value.trim().to_owned()));
    }
    Ok(Request {
        method: method.to_owned(),
        path: path.to_owned(),
        query: query.to_owned(),
        headers,
    })
}

/// A response: status, content type and body; the security headers are added on write.
#[derive(Debug)]
pub struct Response {
    pub status: u16,
    pub content_type: &'static str,
    pub body: Vec<u8>,
}

impl Response {
    pub fn json(status: u16, value: &impl serde::Serialize) -> Response {
        Response {
            status,
            content_type: "application/json; charset=utf-8",
            body: serde_json::to_vec(value).unwrap_or_default(),
        }
    }

    /// What a refused request is told: the status and which limit refused it.
    pub fn refusal(refusal: Refusal) -> Response {
        Response::text(
            refusal.status(),
            &format!("pagent dashboard: {refusal:?}\n"),
        )
    }

    pub fn text(status: u16, text: &str) -> Response {
        Response {
            status,
            content_type: "text/plain; charset=utf-8",
            body: text.as_bytes().to_vec(),
        }
    }
}

/// What the page may load: its own script and style, nothing inline, nothing else.
pub const CONTENT_SECURITY_POLICY: &str = "default-src 'none'; script-src 'self'; \
     style-src 'self'; img-src 'self' data:; connect-src 'self'; base-uri 'none'; \
     form-action 'none'; frame-ancestors 'none'";

/// `response` as the bytes sent: the status line, every header, the body.
pub fn response_bytes(response: &Response) -> Vec<u8> {
    let reason = match response.status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        413 => "Content Too Large",
        414 => "URI Too Long",
        431 => "Request Header Fields Too Large",
        501 => "Not Implemented",
        503 => "Service Unavailable",
        _ => "Error",
    };
    let mut bytes = format!(
        "HTTP/1.1 {} {reason}\r\nContent-Type: {}\r\nContent-Length: {}\r\n\
         Connection: close\r\nCache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\n\
         X-Frame-Options: DENY\r\nReferrer-Policy: no-referrer\r\n\
         Cross-Origin-Resource-Policy: same-origin\r\nCross-Origin-Opener-Policy: same-origin\r\n\
         Content-Security-Policy: {CONTENT_SECURITY_POLICY}\r\n\r\n",
        response.status,
        response.content_type,
        response.body.len()
    )
    .into_bytes();
    bytes.extend_from_slice(&response.body);
    bytes
}

/// Writes `response` and closes the connection; a client that went away is no error.
pub fn write_response(stream: &mut TcpStream, response: &Response) {
    let _ = stream.set_write_timeout(Some(WRITE_TIMEOUT));
    let _ = stream
        .write_all(&response_bytes(response))
        .and_then(|()| stream.flush());
    let _ = stream.shutdown(std::net::Shutdown::Write);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_request_is_whole_only_with_its_head_and_body() {
        let get = b"GET / HTTP/1.1\r\nHost: a\r\n\r\n";
        for cut in 0..get.len() {
            assert!(matches!(parse_request(&get[..cut]), Ok(None)), "{cut}");
        }
        assert_eq!(parse_request(get).unwrap().unwrap().path, "/");
        let post = b"post /api HTTP/1.1\r\nContent-Length: 2\r\n\r\nab";
        assert!(matches!(parse_request(&post[..post.len() - 1]), Ok(None)));
        assert_eq!(parse_request(post).unwrap().unwrap().method, "POST");
        let big = format!(
            "POST / HTTP/1.1\r\nContent-Length: {}\r\n\r\n",
            MAX_BODY + 1
        );
        assert_eq!(
            parse_request(big.as_bytes()).err(),
            Some(Refusal::BodyTooLarge)
        );
        assert_eq!(
            parse_request(&vec![b'a'; MAX_HEAD]).err(),
            Some(Refusal::HeadTooLarge)
        );
        let chunked = b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n";
        assert_eq!(parse_request(chunked).err(), Some(Refusal::Unsupported));
    }

    #[test]
    fn heads_parse_and_refuse_what_is_not_http() {
        let request =
            parse_head("GET /api/loops?token=ab&x HTTP/1.1\r\nHost: 127.0.0.1:1\r\nX-A:  b ")
                .unwrap();
        assert_eq!(
            (request.method.as_str(), request.path.as_str()),
            ("GET", "/api/loops")
        );
        assert_eq!(request.query_param("token"), Some("ab"));
        assert_eq!(request.query_param("x"), Some(""));
        assert_eq!(request.query_param("y"), None);
        assert_eq!(request.header("x-a"), Ok(Some("b")));
        let twice = parse_head("GET / HTTP/1.1\r\nHost: a\r\nhost: b").unwrap();
        assert_eq!(twice.header("host"), Err(()));
        for bad in [
            "GET http://evil/ HTTP/1.1",
            "GET * HTTP/1.1",
            "GET / HTTP/2",
            "GET /  HTTP/1.1",
            "G3T / HTTP/1.1",
            "GET / HTTP/1.1\r\nno colon",
            "GET / HTTP/1.1\r\nbad name: x",
            "GET /\x7f HTTP/1.1",
        ] {
            assert_eq!(parse_head(bad).err(), Some(Refusal::Malformed), "{bad:?}");
        }
        let long = format!("GET /{} HTTP/1.1", "a".repeat(MAX_TARGET));
        assert_eq!(parse_head(&long).err(), Some(Refusal::TargetTooLong));
        let many: String = (0..=MAX_HEADERS).map(|i| format!("\r\nh{i}: v")).collect();
        assert_eq!(
            parse_head(&format!("GET / HTTP/1.1{many}")).err(),
            Some(Refusal::HeadTooLarge)
        );
    }
}

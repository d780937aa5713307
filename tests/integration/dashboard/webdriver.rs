//! A tiny WebDriver client: chromedriver started on a free port, one headless Chromium
//! session, and the few commands the browser tests use (navigate, run a script, find and
//! click an element, resize, screenshot), as plain HTTP and JSON over a `TcpStream`.
//!
//! Chromium and chromedriver are Debian's `chromium` and `chromium-driver` (what
//! `.ci/run` installs), found on PATH or named by `PAGENT_CHROMIUM` and
//! `PAGENT_CHROMEDRIVER`. Without them the browser tests fail and say what to install:
//! they are never skipped.

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use crate::util::{wait_for, wait_showing};

/// The W3C name of an element reference.
const ELEMENT: &str = "element-6066-11e4-a52e-4f735466cecf";

fn find(var: &str, names: &[&str]) -> PathBuf {
    if let Some(path) = std::env::var_os(var) {
        return PathBuf::from(path);
    }
    let path = std::env::var_os("PATH").unwrap_or_default();
    for dir in std::env::split_paths(&path) {
        for name in names {
            let candidate = dir.join(name);
            if candidate.is_file() {
                return candidate;
            }
        }
    }
    panic!(
        "the dashboard's browser tests need headless Chromium and its WebDriver, and found no {}: \
         install them (Debian: apt-get install chromium chromium-driver), or name them with \
         PAGENT_CHROMIUM and PAGENT_CHROMEDRIVER",
        names.join(" or ")
    );
}

pub struct Browser {
    driver: Child,
    addr: SocketAddr,
    session: String,
    _profile: tempfile::TempDir,
}

impl Browser {
    /// chromedriver and a fresh headless Chromium with a `width` x `height` window.
    pub fn start(width: u32, height: u32) -> Browser {
        let chromium = find(
            "PAGENT_CHROMIUM",
            &["chromium", "chromium-browser", "google-chrome"],
        );
        let chromedriver = find("PAGENT_CHROMEDRIVER", &["chromedriver"]);
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let driver = Command::new(&chromedriver)
            .arg(format!("--port={port}"))
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", chromedriver.display()));
        let addr: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
        let profile = tempfile::tempdir().unwrap();
        let mut browser = Browser {
            driver,
            addr,
            session: String::new(),
            _profile: profile,
        };
        wait_for(Duration::from_secs(30), "chromedriver answers", || {
            TcpStream::connect(addr).is_ok()
                && browser.call("GET", "/status", None)["value"]["ready"] == true
        });
        let args = [
            "--headless".to_owned(),
            "--no-sandbox".to_owned(),
            "--disable-gpu".to_owned(),
            "--disable-quic".to_owned(),
            "--no-first-run".to_owned(),
            "--disable-background-networking".to_owned(),
            "--disable-component-update".to_owned(),
            "--disable-sync".to_owned(),
            "--disable-dev-shm-usage".to_owned(),
            format!("--user-data-dir={}", browser._profile.path().display()),
            format!("--window-size={width},{height}"),
        ];
        let caps = json!({"capabilities": {"alwaysMatch": {
            "browserName": "chrome",
            "goog:chromeOptions": {"binary": chromium, "args": args},
        }}});
        let created = browser.call("POST", "/session", Some(&caps));
        browser.session = created["value"]["sessionId"]
            .as_str()
            .unwrap_or_else(|| panic!("no WebDriver session: {created}"))
            .to_owned();
        browser
    }

    /// One WebDriver call; the answer's JSON.
    fn call(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let body = body.map(Value::to_string).unwrap_or_default();
        let mut stream = TcpStream::connect(self.addr).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(60)))
            .unwrap();
        let request = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\n\
             Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
            self.addr,
            body.len()
        );
        stream.write_all(request.as_bytes()).unwrap();
        // chromedriver may keep the connection open: read the head, then exactly the body.
        let mut bytes = Vec::new();
        let mut chunk = [0u8; 16 * 1024];
        let split = loop {
            if let Some(split) = bytes.windows(4).position(|w| w == b"\r\n\r\n") {
                break split;
            }
            let n = stream.read(&mut chunk).unwrap();
            assert!(n > 0, "not HTTP: {}", String::from_utf8_lossy(&bytes));
            bytes.extend_from_slice(&chunk[..n]);
        };
        let head = String::from_utf8_lossy(&bytes[..split]).to_ascii_lowercase();
        let mut body = bytes[split + 4..].to_vec();
        let length = head
            .lines()
            .find_map(|l| l.strip_prefix("content-length:"))
            .and_then(|n| n.trim().parse::<usize>().ok());
        let chunked = head.contains("transfer-encoding: chunked");
        loop {
            let done = match length {
                Some(length) => body.len() >= length,
                None if chunked => body.ends_with(b"0\r\n\r\n"),
                None => false,
            };
            if done {
                break;
            }
            let n = stream.read(&mut chunk).unwrap();
            if n == 0 {
                break;
            }
            body.extend_from_slice(&chunk[..n]);
        }
        if chunked {
            body = unchunk(&body);
        }
        serde_json::from_slice(&body).unwrap_or(Value::Null)
    }

    fn session_call(&self, method: &str, path: &str, body: Option<&Value>) -> Value {
        let answer = self.call(method, &format!("/session/{}{path}", self.session), body);
        if let Some(error) = answer["value"]["error"].as_str() {
            panic!(
                "WebDriver {method} {path}: {error}: {}",
                answer["value"]["message"]
            );
        }
        answer["value"].clone()
    }

    pub fn goto(&self, url: &str) {
        self.session_call("POST", "/url", Some(&json!({ "url": url })));
    }

    /// Runs `script` (a function body; `arguments` as given) in the page; its value.
    pub fn eval(&self, script: &str, args: &[Value]) -> Value {
        self.session_call(
            "POST",
            "/execute/sync",
            Some(&json!({ "script": script, "args": args })),
        )
    }

    /// The text of the first element matching `css`, or `None`.
    pub fn text(&self, css: &str) -> Option<String> {
        self.eval(
            "const e = document.querySelector(arguments[0]); return e ? e.textContent : null;",
            &[json!(css)],
        )
        .as_str()
        .map(str::to_owned)
    }

    /// Waits up to `limit` for `css`'s text to satisfy `check`; the time it took.
    pub fn wait_text(&self, css: &str, limit: Duration, check: impl Fn(&str) -> bool) -> Duration {
        let started = Instant::now();
        wait_showing(limit, format_args!("the text of {css}"), || {
            let text = self.text(css);
            match text.as_deref() {
                Some(text) if check(text) => Ok(()),
                _ => Err(format!("it was {text:?}")),
            }
        });
        started.elapsed()
    }

    /// Clicks the first element matching `css` as a user would (WebDriver's own click).
    pub fn click(&self, css: &str) {
        let found = self.session_call(
            "POST",
            "/element",
            Some(&json!({ "using": "css selector", "value": css })),
        );
        let id = found[ELEMENT].as_str().unwrap().to_owned();
        self.session_call("POST", &format!("/element/{id}/click"), Some(&json!({})));
    }

    pub fn resize(&self, width: u32, height: u32) {
        self.session_call(
            "POST",
            "/window/rect",
            Some(&json!({ "width": width, "height": height })),
        );
    }

    /// A PNG of the viewport.
    pub fn screenshot(&self) -> Vec<u8> {
        let encoded = self.session_call("GET", "/screenshot", None);
        base64_decode(encoded.as_str().unwrap())
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        if !self.session.is_empty() {
            let _ = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                self.call("DELETE", &format!("/session/{}", self.session), None)
            }));
        }
        let _ = self.driver.kill();
        let _ = self.driver.wait();
    }
}

fn unchunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = body.windows(2).position(|w| w == b"\r\n") {
        let size =
            usize::from_str_radix(String::from_utf8_lossy(&body[..end]).trim(), 16).unwrap_or(0);
        if size == 0 {
            break;
        }
        out.extend_from_slice(&body[end + 2..end + 2 + size]);
        body = &body[end + 2 + size + 2..];
    }
    out
}

fn base64_decode(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text
        .bytes()
        .filter(|c| *c != b'=' && !c.is_ascii_whitespace())
        .map(value)
        .collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for chunk in digits.chunks(4) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, d)| n | u32::from(*d) << (18 - 6 * i));
        let bytes = n.to_be_bytes();
        out.extend_from_slice(&bytes[1..chunk.len()]);
    }
    out
}

#[test]
fn base64_decodes_what_it_should() {
    assert_eq!(base64_decode("aGVsbG8="), b"hello");
    assert_eq!(base64_decode("aGVsbG8h"), b"hello!");
    assert_eq!(base64_decode("aGk="), b"hi");
}

//! The dashboard attacked over raw HTTP: each rule of `dashboard/guard.rs` and each limit
//! of `dashboard/http.rs` against the request that would break it, and where it listens.

use std::io::{Read, Write};
use std::net::{IpAddr, Ipv4Addr, SocketAddr, TcpStream, UdpSocket};
use std::time::{Duration, Instant};

use super::*;

fn get(dash: &Dashboard, target: &str, headers: &str) -> (u16, String) {
    let request = format!(
        "GET {target} HTTP/1.1\r\nHost: {}\r\n{headers}\r\n",
        dash.addr
    );
    let (status, body) = http(dash.addr, request.as_bytes());
    (status, String::from_utf8_lossy(&body).into_owned())
}

#[test]
fn the_address_it_prints_and_what_it_says() {
    let env = TestEnv::new();
    let dash = Dashboard::start(&env, &[]);
    assert_eq!(dash.addr.ip(), IpAddr::V4(Ipv4Addr::LOCALHOST));
    assert_eq!(dash.token.len(), 64);
    assert!(dash.token.bytes().all(|b| b.is_ascii_hexdigit()));
    let printed = dash
        .printed
        .join("\n")
        .replace(&dash.addr.port().to_string(), "[PORT]")
        .replace(&dash.token, "[TOKEN]");
    insta::assert_snapshot!(printed);
    // A second dashboard gets its own token.
    assert_ne!(Dashboard::start(&env, &[]).token, dash.token);
}

#[test]
fn without_the_token_everything_is_forbidden() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Task"]).success();
    let dash = Dashboard::start(&env, &[]);
    let page = format!("/?token={}", dash.token);
    assert_eq!(get(&dash, &page, "").0, 200);
    for target in [
        "/",
        "/app.js",
        "/app.css",
        "/api/loops",
        "/?token=",
        "/favicon.ico",
    ] {
        let (status, body) = get(&dash, target, "");
        assert_eq!(status, 403, "{target}: {body}");
        assert!(!body.contains("Task"), "{body}");
    }
    let wrong = format!("/?token={}", "0".repeat(64));
    assert_eq!(get(&dash, &wrong, "").0, 403);
    // The API takes the token from its header only: an address that leaked cannot act.
    assert_eq!(
        get(&dash, &format!("/api/loops?token={}", dash.token), "").0,
        403
    );
    let (status, rows) = dash.api("/api/loops");
    assert_eq!(status, 200);
    assert_eq!(rows["loops"][0]["title"], "Task");
}

#[test]
fn a_foreign_origin_host_or_site_is_forbidden() {
    let env = TestEnv::new();
    let dash = Dashboard::start(&env, &[]);
    let token = format!("X-Pagent-Token: {}\r\n", dash.token);
    let page = format!("/?token={}", dash.token);
    for (target, headers, why) in [
        (
            "/api/loops",
            format!("{token}Origin: http://evil.example\r\n"),
            "foreign origin",
        ),
        (
            "/api/loops",
            format!("{token}Origin: null\r\n"),
            "opaque origin",
        ),
        (
            "/api/loops",
            format!("{token}Origin: http://127.0.0.1:1\r\n"),
            "another port",
        ),
        (
            "/api/loops",
            format!("{token}Sec-Fetch-Site: cross-site\r\n"),
            "cross-site",
        ),
        (
            "/api/loops",
            format!("{token}Sec-Fetch-Site: same-site\r\n"),
            "same-site",
        ),
        (
            &page,
            "Sec-Fetch-Site: cross-site\r\nSec-Fetch-Dest: iframe\r\n".into(),
            "framed",
        ),
        (
            &page,
            "Sec-Fetch-Site: cross-site\r\nSec-Fetch-Dest: script\r\n".into(),
            "script",
        ),
    ] {
        let (status, body) = get(&dash, target, &headers);
        assert_eq!(status, 403, "{why}: {body}");
    }
    // DNS rebinding: a name re-pointed at 127.0.0.1 arrives with its own Host.
    for host in [
        "evil.example:80",
        "evil.example",
        "127.0.0.1",
        "127.0.0.1.nip.io",
    ] {
        let request = format!("GET /api/loops HTTP/1.1\r\nHost: {host}\r\n{token}\r\n");
        assert_eq!(http(dash.addr, request.as_bytes()).0, 403, "{host}");
    }
    let twice = format!(
        "GET /api/loops HTTP/1.1\r\nHost: {0}\r\nHost: evil.example\r\n{token}\r\n",
        dash.addr
    );
    assert_eq!(http(dash.addr, twice.as_bytes()).0, 403);
    // Its own origin, as the page's script sends it, is let in.
    let own = format!(
        "{token}Origin: http://{}\r\nSec-Fetch-Site: same-origin\r\n",
        dash.addr
    );
    assert_eq!(get(&dash, "/api/loops", &own).0, 200);
    let localhost = format!(
        "GET /api/loops HTTP/1.1\r\nHost: localhost:{}\r\n{token}\r\n",
        dash.addr.port()
    );
    assert_eq!(http(dash.addr, localhost.as_bytes()).0, 200);
}

#[test]
fn posts_act_only_with_the_header_token_and_never_serve_a_file() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Task"]).success();
    env.write("secret.txt", "do not serve me");
    let dash = Dashboard::start(&env, &[]);
    let id = &loop_ids(&env)[0].1;
    let post = |target: &str, headers: &str| {
        let request = format!(
            "POST {target} HTTP/1.1\r\nHost: {}\r\nContent-Length: 0\r\n{headers}\r\n",
            dash.addr
        );
        http(dash.addr, request.as_bytes())
    };
    let cancel = format!("/api/loops/{id}/cancel");
    // A form another site posts carries no header: refused, the loop untouched.
    let form = format!("{cancel}?token={}", dash.token);
    assert_eq!(
        post(&form, "Content-Type: application/x-www-form-urlencoded\r\n").0,
        403
    );
    assert_eq!(env.state()["status"], "active");
    let token = format!("X-Pagent-Token: {}\r\n", dash.token);
    for target in [
        "/api/loops/../../secret.txt",
        "/api/loops/%2e%2e%2fsecret.txt",
        "/secret.txt",
        "/api/loops/0123456789abcdef0123456789abcdef",
        "/api/loops/ZZZ",
        "//etc/passwd",
        &format!("/api/loops/{id}/../../../secret.txt"),
    ] {
        let (status, body) = http(
            dash.addr,
            format!(
                "GET {target} HTTP/1.1\r\nHost: {}\r\n{token}\r\n",
                dash.addr
            )
            .as_bytes(),
        );
        let body = String::from_utf8_lossy(&body);
        assert!(matches!(status, 403 | 404), "{target}: {status} {body}");
        assert!(!body.contains("do not serve me"), "{target}: {body}");
    }
    assert_eq!(post(&format!("/api/loops/{id}/delete"), &token).0, 404);
    let (status, body) = post(&cancel, &token);
    assert_eq!(status, 200);
    let done: Value = serde_json::from_slice(&body).unwrap();
    assert_eq!(done["ok"], true);
    assert!(
        done["message"]
            .as_str()
            .unwrap()
            .starts_with("pagent: cancelled the Ralph loop"),
        "{done}"
    );
    assert_eq!(done["row"]["status"], "cancelled");
    assert_eq!(env.state()["status"], "cancelled");
}

#[test]
fn oversized_and_malformed_requests_are_refused() {
    let env = TestEnv::new();
    let dash = Dashboard::start(&env, &[]);
    let host = format!("Host: {}\r\n", dash.addr);
    let huge_head = format!(
        "GET / HTTP/1.1\r\n{host}X-Pad: {}\r\n\r\n",
        "a".repeat(64 * 1024)
    );
    assert_eq!(http(dash.addr, huge_head.as_bytes()).0, 431);
    let long_target = format!("GET /{} HTTP/1.1\r\n{host}\r\n", "a".repeat(4096));
    assert_eq!(http(dash.addr, long_target.as_bytes()).0, 414);
    let big_body = format!("POST /api/loops HTTP/1.1\r\n{host}Content-Length: 10000000\r\n\r\n");
    assert_eq!(http(dash.addr, big_body.as_bytes()).0, 413);
    let chunked =
        format!("POST /api/loops HTTP/1.1\r\n{host}Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n");
    assert_eq!(http(dash.addr, chunked.as_bytes()).0, 501);
    for bad in [
        "GARBAGE\r\n\r\n",
        "GET / HTTP/9\r\n\r\n",
        "GET http://x/ HTTP/1.1\r\n\r\n",
    ] {
        assert_eq!(http(dash.addr, bad.as_bytes()).0, 400, "{bad:?}");
    }
    let request = format!("GET /?token={} HTTP/1.1\r\n{host}\r\n", dash.token);
    assert_eq!(http(dash.addr, request.as_bytes()).0, 200);
}

/// Slowloris: clients that trickle a request a byte at a time hold a worker only until
/// the request deadline, the pool never grows, and the page answers again after them.
#[test]
fn slow_clients_are_cut_off_and_the_threads_stay_bounded() {
    let env = TestEnv::new();
    let baseline = env.baseline();
    let dash = Dashboard::start(&env, &[]);
    let before = dash.threads();
    let started = Instant::now();
    // How many clients are under way: connected and ten bytes into their trickle, or
    // already turned away.
    let under_way = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let slow: Vec<_> = (0..60)
        .map(|_| {
            let addr = dash.addr;
            let under_way = under_way.clone();
            std::thread::spawn(move || {
                let mut counted = false;
                let mut count = || {
                    if !std::mem::replace(&mut counted, true) {
                        under_way.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                    }
                };
                let mut stream = TcpStream::connect(addr).unwrap();
                stream
                    .set_read_timeout(Some(Duration::from_millis(100)))
                    .unwrap();
                let mut answer = Vec::new();
                for (sent, byte) in b"GET / HTTP/1.1\r\nX-Slow: "
                    .iter()
                    .chain([b'a'; 400].iter())
                    .enumerate()
                {
                    if sent == 10 {
                        count();
                    }
                    // A refused connection (503, or cut at the deadline) ends the trickle.
                    if stream.write_all(&[*byte]).is_err() {
                        break;
                    }
                    let mut buf = [0u8; 512];
                    match stream.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => answer.extend_from_slice(&buf[..n]),
                        Err(_) => {}
                    }
                    if !answer.is_empty() {
                        break;
                    }
                }
                count();
                (
                    Instant::now(),
                    String::from_utf8_lossy(&answer).into_owned(),
                )
            })
        })
        .collect();
    // The pool never grows while they trickle: looked at all along, until every one of
    // them is under way.
    wait_for(Duration::from_secs(30), "60 slow clients under way", || {
        let threads = dash.threads();
        assert!(threads <= before, "threads grew: {threads} > {before}");
        under_way.load(std::sync::atomic::Ordering::SeqCst) == 60
    });
    assert!(dash.threads() <= before);
    for handle in slow {
        let (ended, answer) = handle.join().unwrap();
        // The request deadline (5 s), then the cut: a client not cut trickles for 40 s.
        baseline.assert_within(
            ended
                .duration_since(started)
                .saturating_sub(Duration::from_secs(5)),
            100,
            Duration::from_secs(7),
            "a slow client",
        );
        assert!(
            answer.is_empty()
                || answer.starts_with("HTTP/1.1 408")
                || answer.starts_with("HTTP/1.1 503"),
            "{answer}"
        );
    }
    let request = format!(
        "GET /?token={} HTTP/1.1\r\nHost: {}\r\n\r\n",
        dash.token, dash.addr
    );
    assert_eq!(http(dash.addr, request.as_bytes()).0, 200);
    assert!(dash.threads() <= before);
}

/// Issue 30: 45 idle TCP connections, renewed every second by any local process,
/// starved the dashboard: 13 of the user's 15 requests got 503. Idle connections must
/// not keep the user's own requests out, and the pool does not grow for them.
#[test]
fn issue_30_idle_connections_renewed_every_second_never_keep_the_users_requests_out() {
    use std::sync::Arc;
    use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    let dash = Dashboard::start(&env, &[]);
    let threads = dash.threads();
    let stop = Arc::new(AtomicBool::new(false));
    let rounds = Arc::new(AtomicUsize::new(0));
    let attacker = {
        let (addr, stop, rounds) = (dash.addr, stop.clone(), rounds.clone());
        std::thread::spawn(move || {
            let mut idle: Vec<Option<TcpStream>> = (0..45).map(|_| None).collect();
            while !stop.load(Ordering::SeqCst) {
                // Every connection the server closed (a 503, a 408) is opened again; the
                // others stay open, sending nothing.
                for slot in &mut idle {
                    if slot.as_mut().is_some_and(|s| !still_open(s)) {
                        *slot = None;
                    }
                    if slot.is_none() {
                        let stream = TcpStream::connect(addr).unwrap();
                        stream.set_nonblocking(true).unwrap();
                        *slot = Some(stream);
                    }
                }
                rounds.fetch_add(1, Ordering::SeqCst);
                // The attacker's own pace: renewed every second.
                std::thread::sleep(Duration::from_secs(1));
            }
        })
    };
    wait_for(Duration::from_secs(20), "the attack under way", || {
        rounds.load(Ordering::SeqCst) >= 2
    });
    // The page's own pace: a request every 200 ms, across renewals.
    let answers: Vec<String> = (0..15)
        .map(|_| {
            let answer = status_of(&dash, "/api/loops");
            std::thread::sleep(Duration::from_millis(200));
            answer
        })
        .collect();
    let during = rounds.load(Ordering::SeqCst);
    stop.store(true, Ordering::SeqCst);
    attacker.join().unwrap();
    assert_eq!(
        answers, ["200"; 15],
        "the user's requests while {during} rounds of 45 idle connections came"
    );
    assert!(dash.threads() <= threads, "the pool grew");
}

/// More idle connections than the dashboard reads at once, and more than it has file
/// descriptors for: the oldest makes room, so the user's fresh request is always read.
#[test]
fn issue_30_more_idle_connections_than_descriptors_never_keep_the_users_requests_out() {
    let env = TestEnv::new();
    let baseline = env.baseline();
    for (dash, idle) in [
        (Dashboard::start(&env, &[]), 600),
        (Dashboard::start_with_descriptors(&env, 64), 200),
    ] {
        let threads = dash.threads();
        let connections: Vec<TcpStream> = (0..idle)
            .map(|_| TcpStream::connect(dash.addr).unwrap())
            .collect();
        let answers: Vec<String> = (0..5)
            .map(|_| {
                let started = Instant::now();
                let answer = status_of(&dash, "/api/loops");
                // Well before the idle ones' deadline (5 s) would make room.
                baseline.assert_within(
                    started.elapsed(),
                    50,
                    Duration::from_secs(2),
                    "a request beside idle connections",
                );
                answer
            })
            .collect();
        assert_eq!(answers, ["200"; 5], "beside {idle} idle connections");
        // At most 512 connections are read at once (and a few descriptors of its own).
        assert!(dash.descriptors() <= 512 + 32, "{}", dash.descriptors());
        assert!(dash.threads() <= threads, "the pool grew");
        drop(connections);
    }
}

/// The status the API answers `path` with, as the page's script asks; what went wrong
/// when it did not answer.
fn status_of(dash: &Dashboard, path: &str) -> String {
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {}\r\nX-Pagent-Token: {}\r\nSec-Fetch-Site: same-origin\r\n\r\n",
        dash.addr, dash.token
    );
    let mut answer = Vec::new();
    let asked = TcpStream::connect_timeout(&dash.addr, Duration::from_secs(5)).and_then(|mut s| {
        s.set_read_timeout(Some(Duration::from_secs(15)))?;
        s.write_all(request.as_bytes())?;
        s.read_to_end(&mut answer)
    });
    match asked {
        Ok(_) => String::from_utf8_lossy(&answer)
            .split(' ')
            .nth(1)
            .unwrap_or("no status")
            .to_owned(),
        Err(err) => err.kind().to_string(),
    }
}

/// Whether the server has left `stream` open (nothing to read from it yet).
fn still_open(stream: &mut TcpStream) -> bool {
    let mut buf = [0u8; 256];
    matches!(stream.read(&mut buf), Err(e) if e.kind() == std::io::ErrorKind::WouldBlock)
}

/// The machine's address on its network, if it has one (no packet is sent).
fn network_address() -> Option<IpAddr> {
    let socket = UdpSocket::bind("0.0.0.0:0").ok()?;
    socket.connect("192.0.2.1:9").ok()?;
    let ip = socket.local_addr().ok()?.ip();
    (!ip.is_loopback() && !ip.is_unspecified()).then_some(ip)
}

#[test]
fn it_is_reachable_on_127_0_0_1_only() {
    let env = TestEnv::new();
    let dash = Dashboard::start(&env, &[]);
    let port = dash.addr.port();
    let mut elsewhere: Vec<IpAddr> = vec!["127.0.0.2".parse().unwrap(), "::1".parse().unwrap()];
    elsewhere.extend(network_address());
    for ip in elsewhere {
        let refused =
            TcpStream::connect_timeout(&SocketAddr::new(ip, port), Duration::from_secs(2));
        assert!(refused.is_err(), "reachable on {ip}");
    }
    let listening = std::fs::read_to_string("/proc/net/tcp").unwrap();
    let ours = format!("0100007F:{port:04X}");
    assert!(
        listening.contains(&ours),
        "not listening on 127.0.0.1:{port}"
    );
}

#[test]
fn beyond_loopback_only_on_a_named_address_and_with_a_token_of_your_own() {
    let env = TestEnv::new();
    let token = "my-own-token-0123456789-abcdefghijk";
    let out = env
        .bin(&["dashboard", "--no-open", "--bind", "192.0.2.123"])
        .failure();
    let mut said = Said::new();
    said.say("--bind 192.0.2.123", &out.stderr);
    for every in ["0.0.0.0", "::"] {
        let out = env
            .bin(&["dashboard", "--no-open", "--bind", every])
            .env("PAGENT_DASHBOARD_TOKEN", token)
            .failure();
        said.say(&format!("--bind {every}, a token of your own"), &out.stderr);
    }
    let out = env
        .bin(&["dashboard", "--no-open"])
        .env("PAGENT_DASHBOARD_TOKEN", "short")
        .failure();
    said.say("PAGENT_DASHBOARD_TOKEN=short", &out.stderr);
    assert_text!(said.text());
    // On the machine's own address, with the user's token: that address is the only Host.
    let ip = network_address().expect("this machine has no network address to test with");
    let ip_text = ip.to_string();
    let dash = Dashboard::start_with(
        &env,
        &["dashboard", "--no-open", "--bind", &ip_text],
        &[("PAGENT_DASHBOARD_TOKEN", token)],
    );
    assert_eq!((dash.addr.ip(), dash.token.as_str()), (ip, token));
    assert_eq!(dash.api("/api/loops").0, 200);
    let localhost = format!(
        "GET /api/loops HTTP/1.1\r\nHost: localhost:{}\r\nX-Pagent-Token: {token}\r\n\r\n",
        dash.addr.port()
    );
    assert_eq!(http(dash.addr, localhost.as_bytes()).0, 403);
    let loopback = SocketAddr::new(IpAddr::V4(Ipv4Addr::LOCALHOST), dash.addr.port());
    assert!(TcpStream::connect_timeout(&loopback, Duration::from_secs(2)).is_err());
}

//! `pagent dashboard` (issue 23), tested the way it is used: the real binary serving on
//! 127.0.0.1, raw HTTP for the rules a browser would never break ([`attacks`]), and a
//! real headless Chromium driven through WebDriver for the page itself ([`browser`]).
//!
//! [`Dashboard`] starts the binary, reads the address it prints, and stops it when
//! dropped; [`http`] sends one request byte for byte and reads the whole answer.

mod attacks;
pub mod browser;
mod hostile;
pub mod webdriver;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::util::*;

pub struct Dashboard {
    child: Child,
    pub addr: SocketAddr,
    pub token: String,
    pub url: String,
    /// What the binary printed before serving.
    pub printed: Vec<String>,
}

impl Dashboard {
    /// `pagent dashboard --no-open` with `env`'s config folder, and extra arguments.
    pub fn start(env: &TestEnv, extra: &[&str]) -> Dashboard {
        let mut args = vec!["dashboard", "--no-open"];
        args.extend_from_slice(extra);
        Dashboard::start_with(env, &args, &[])
    }

    /// `pagent ARGS` (a dashboard command line) with extra environment variables.
    pub fn start_with(env: &TestEnv, args: &[&str], vars: &[(&str, &str)]) -> Dashboard {
        let mut command = env.cmd(args);
        for (key, value) in vars {
            command = command.env(key, value);
        }
        Dashboard::spawn(command.command())
    }

    /// `pagent dashboard --no-open` allowed only `files` open file descriptors.
    pub fn start_with_descriptors(env: &TestEnv, files: u64) -> Dashboard {
        let mut command = env.cmd(&["dashboard", "--no-open"]).command();
        pagent_door::testing::limit_open_files(&mut command, files);
        Dashboard::spawn(command)
    }

    pub fn spawn(mut command: std::process::Command) -> Dashboard {
        let mut child = command
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap();
        let mut lines = Lines::of(child.stdout.take().unwrap());
        let deadline = Duration::from_secs(20);
        let printed = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            vec![
                lines.wait_for(deadline, "the dashboard's address", |_| true),
                lines.wait_for(deadline, "the dashboard's second line", |_| true),
            ]
        }))
        .unwrap_or_else(|failed| {
            let _ = child.kill();
            std::panic::resume_unwind(failed)
        });
        let url = printed[0]
            .strip_prefix("pagent dashboard: ")
            .unwrap_or_else(|| panic!("{printed:?}"))
            .to_owned();
        let (host, token) = url
            .strip_prefix("http://")
            .and_then(|rest| rest.split_once("/?token="))
            .unwrap_or_else(|| panic!("{url}"));
        Dashboard {
            addr: host.parse().unwrap(),
            token: token.to_owned(),
            url: url.clone(),
            child,
            printed,
        }
    }

    /// The dashboard process's thread count (Linux: /proc).
    pub fn threads(&self) -> usize {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.child.id())).unwrap();
        status
            .lines()
            .find_map(|l| l.strip_prefix("Threads:"))
            .unwrap()
            .trim()
            .parse()
            .unwrap()
    }

    /// How many file descriptors the dashboard process holds (Linux: /proc).
    pub fn descriptors(&self) -> usize {
        std::fs::read_dir(format!("/proc/{}/fd", self.child.id()))
            .unwrap()
            .count()
    }

    /// `GET path` as the page's script sends it.
    pub fn api(&self, path: &str) -> (u16, Value) {
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nX-Pagent-Token: {}\r\nSec-Fetch-Site: same-origin\r\n\r\n",
            self.addr, self.token
        );
        let (status, body) = http(self.addr, request.as_bytes());
        (status, serde_json::from_slice(&body).unwrap_or(Value::Null))
    }
}

impl Drop for Dashboard {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Sends `request` as it is and returns the status and body of the answer.
pub fn http(addr: SocketAddr, request: &[u8]) -> (u16, Vec<u8>) {
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(5)).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    stream.write_all(request).unwrap();
    read_answer(&mut stream)
}

/// Reads a whole answer (the server closes after each), as status and body.
pub fn read_answer(stream: &mut TcpStream) -> (u16, Vec<u8>) {
    let mut bytes = Vec::new();
    stream.read_to_end(&mut bytes).unwrap();
    let text = String::from_utf8_lossy(&bytes);
    let status = text
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("not an HTTP answer: {text:?}"));
    let body = bytes
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map_or_else(Vec::new, |i| bytes[i + 4..].to_vec());
    (status, body)
}

/// The ids (register keys) of the listed loops, by project folder name.
pub fn loop_ids(env: &TestEnv) -> Vec<(String, String)> {
    let out = env.cmd(&["status", "--all", "--json"]).success();
    let rows: Vec<Value> = serde_json::from_str(&out.stdout).unwrap();
    rows.iter()
        .map(|r| {
            (
                r["name"].as_str().unwrap().to_owned(),
                r["id"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

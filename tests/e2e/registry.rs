//! A local npm registry, owned by the tests: what lets `npm install -g pagent` and `npx
//! pagent install` run here exactly as a user types them after the first release, with
//! the release's own tarballs in place of the published packages and no other registry
//! reachable (`npm_config_registry` names this one; nothing else answers).
//!
//! It speaks the part of the registry protocol an install uses: `GET /NAME`, the
//! package's document (each version's manifest, with `dist.tarball` and `dist.integrity`,
//! the SHA-512 npm checks), and `GET /-/FILE`, a tarball. A platform package the release
//! did not build on this machine is listed with the `os` and `cpu` of its name and no
//! tarball, as the public registry lists it for everyone: npm reads its manifest, sees
//! another platform, and never asks for the file (a request for it would fail the install).
//! Every request is recorded, so a test can tell what npm fetched, and that it sent
//! nothing (anything but a `GET` is answered 405).

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::{Arc, Mutex};
use std::thread;

use serde_json::{Value, json};
use sha2::{Digest, Sha512};

pub struct NpmRegistry {
    pub url: String,
    requests: Arc<Mutex<Vec<(String, String)>>>,
}

/// What is served at each path.
type Routes = BTreeMap<String, Vec<u8>>;

impl NpmRegistry {
    /// Serves `tarballs` (npm packs); the platform packages the main package names but
    /// `tarballs` lack are listed without a file (see the module's text).
    pub fn serve(tarballs: &[PathBuf]) -> NpmRegistry {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!(
            "http://127.0.0.1:{}/",
            listener.local_addr().unwrap().port()
        );
        let routes = Arc::new(routes(&url, tarballs));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let log = Arc::clone(&requests);
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                let (routes, log) = (Arc::clone(&routes), Arc::clone(&log));
                thread::spawn(move || answer(stream, &routes, &log));
            }
        });
        NpmRegistry { url, requests }
    }

    /// The paths npm asked for, in order.
    pub fn requests(&self) -> Vec<String> {
        let requests = self.requests.lock().unwrap();
        requests.iter().map(|(_, path)| path.clone()).collect()
    }

    /// The requests that were not a `GET`: an upload, had anything tried one.
    pub fn sent(&self) -> Vec<String> {
        let requests = self.requests.lock().unwrap();
        requests
            .iter()
            .filter(|(method, _)| method != "GET")
            .map(|(method, path)| format!("{method} {path}"))
            .collect()
    }
}

fn manifest(tarball: &Path) -> Value {
    let out = Command::new("tar")
        .args(["-xzOf"])
        .arg(tarball)
        .arg("package/package.json")
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

fn routes(url: &str, tarballs: &[PathBuf]) -> Routes {
    let mut routes = Routes::new();
    let mut listed: Vec<String> = Vec::new();
    let mut wanted: Vec<(String, String)> = Vec::new();
    for tarball in tarballs {
        let mut version = manifest(tarball);
        let bytes = std::fs::read(tarball).unwrap();
        let name = version["name"].as_str().unwrap().to_owned();
        let file = tarball.file_name().unwrap().to_string_lossy().into_owned();
        version["dist"] = json!({
            "tarball": format!("{url}-/{file}"),
            "integrity": format!("sha512-{}", base64(&Sha512::digest(&bytes))),
        });
        if let Some(deps) = version["optionalDependencies"].as_object() {
            wanted.extend(
                deps.iter()
                    .map(|(n, v)| (n.clone(), v.as_str().unwrap().to_owned())),
            );
        }
        routes.insert(format!("/{name}"), document(&name, version));
        routes.insert(format!("/-/{file}"), bytes);
        listed.push(name);
    }
    for (name, version) in wanted {
        if listed.contains(&name) {
            continue;
        }
        let (os, cpu) = name
            .strip_prefix("pagent-")
            .and_then(|p| p.split_once('-'))
            .unwrap();
        let manifest = json!({
            "name": name, "version": version, "os": [os], "cpu": [cpu],
            "dist": {"tarball": format!("{url}-/{name}-{version}.tgz"),
                     "integrity": "sha512-not-built-on-this-machine"},
        });
        routes.insert(format!("/{name}"), document(&name, manifest));
    }
    routes
}

/// A package's document with one version.
fn document(name: &str, version: Value) -> Vec<u8> {
    let number = version["version"].as_str().unwrap().to_owned();
    json!({
        "name": name,
        "dist-tags": {"latest": number},
        "versions": {number: version},
    })
    .to_string()
    .into_bytes()
}

fn answer(stream: TcpStream, routes: &Routes, log: &Mutex<Vec<(String, String)>>) {
    let mut reader = BufReader::new(&stream);
    loop {
        let mut request = String::new();
        if reader.read_line(&mut request).unwrap_or(0) == 0 {
            return;
        }
        // The headers, up to the blank line; an install sends no body.
        let mut line = String::new();
        while reader.read_line(&mut line).unwrap_or(0) > 2 {
            line.clear();
        }
        let mut words = request.split_whitespace();
        let method = words.next().unwrap_or("").to_owned();
        let path = words.next().unwrap_or("/");
        let path = path.split('?').next().unwrap_or("/").to_owned();
        log.lock().unwrap().push((method.clone(), path.clone()));
        let (status, body) = match routes.get(&path) {
            // Nothing is ever stored: an upload's body is left unread, and refused.
            _ if method != "GET" => ("405 Method Not Allowed", &b"{}"[..]),
            Some(body) => ("200 OK", body.as_slice()),
            None => ("404 Not Found", &b"{\"error\":\"not found\"}"[..]),
        };
        let mut writer = &stream;
        let head = format!(
            "HTTP/1.1 {status}\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n",
            body.len()
        );
        if writer.write_all(head.as_bytes()).is_err() || writer.write_all(body).is_err() {
            return;
        }
    }
}

/// Standard base64, padded: the encoding of npm's `integrity`.
fn base64(bytes: &[u8]) -> String {
    const ALPHABET: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let n = chunk
            .iter()
            .enumerate()
            .fold(0u32, |n, (i, b)| n | u32::from(*b) << (16 - 8 * i));
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(char::from(ALPHABET[(n >> (18 - 6 * i) & 63) as usize]));
            } else {
                out.push('=');
            }
        }
    }
    out
}

#[test]
fn base64_is_the_standard_one() {
    assert_eq!(base64(b""), "");
    assert_eq!(base64(b"f"), "Zg==");
    assert_eq!(base64(b"fo"), "Zm8=");
    assert_eq!(base64(b"foo"), "Zm9v");
    assert_eq!(base64(b"foobar"), "Zm9vYmFy");
}

//! `pagent dashboard`: every loop on this machine on one live web page, with pause,
//! resume and cancel, served by the binary itself.
//!
//! The server is small and synchronous: a `TcpListener` on 127.0.0.1 (or the address the
//! user names, with a token they chose) whose connections one thread accepts and reads
//! as their bytes arrive ([`accept`], over mio's readiness of many sockets at once), so
//! a connection that sends nothing holds no worker; each request read whole under the
//! limits of [`http`] (size, count, a deadline for the whole request) goes to a fixed
//! pool of [`WORKERS`] threads through a bounded queue (one that finds the queue full is
//! told 503 at once), is admitted or refused by [`guard`] (Host, Sec-Fetch-Site, Origin,
//! token), answered by [`routes`], and the connection closed. No async runtime, no web
//! framework: the hooks share this binary, and nothing here runs unless `pagent
//! dashboard` does, so their start-up pays only for the bytes (measured in
//! BENCHMARKS.md).
//!
//! The page (`assets/`: one HTML file, one script, one style sheet, embedded with
//! `include_str!`, no CDN) polls the API once a second and updates in place; every text
//! from a project or an agent reaches it as JSON and is put in text nodes, never parsed
//! as markup. Reading goes through `store` and `world` (the register, the states, the
//! event logs, the runner's logs); acting only through `session::control`, the very
//! functions `pagent cancel`, `pagent pause` and `pagent resume` call.

mod accept;
mod detail;
mod guard;
mod http;
mod open;
mod routes;

use std::io::Write;
use std::net::{IpAddr, SocketAddr, TcpListener, TcpStream};
use std::panic::AssertUnwindSafe;
use std::sync::mpsc::{self, SyncSender};
use std::sync::{Arc, Mutex};

use anyhow::{Context, bail};

use crate::cli::env::Env;

/// Requests answered at once; the rest wait in the queue.
pub const WORKERS: usize = 8;
/// Requests (read whole) waiting for a worker; past this a new one is told 503.
pub const QUEUE: usize = 32;

/// The teams of loops across machines (`pagent team`) the page shows beside the local
/// loops: given by the command (the runner watches them), read here without waiting.
pub trait Teams: Send + Sync + std::fmt::Debug {
    /// Every team as last seen, for `GET /api/teams`.
    fn page(&self, now: pagent_engine::Timestamp) -> serde_json::Value;
    /// Pause, resume or cancel the team `id`: whether it changed and what was said;
    /// `None` when there is no such team or action.
    fn act(&self, id: &str, action: &str) -> Option<(bool, String)>;
}

/// How `pagent dashboard` was asked to run.
#[derive(Debug, Clone)]
pub struct Options {
    pub bind: IpAddr,
    pub port: u16,
    pub open: bool,
}

/// Serves the dashboard until the process is stopped. Prints the page's address (with
/// its token) on `stdout` first, and opens it in a browser when asked and possible.
pub fn serve(
    env: &Env,
    options: &Options,
    teams: Arc<dyn Teams>,
    stdout: &mut dyn Write,
) -> anyhow::Result<()> {
    if options.bind.is_unspecified() {
        bail!(
            "name the one address to listen on ({} means every address of this machine, \
             whose names the page could not check requests against)",
            options.bind
        );
    }
    let token = choose_token(env, options.bind)?;
    let listener = TcpListener::bind((options.bind, options.port)).with_context(|| {
        format!(
            "cannot listen on {}",
            SocketAddr::new(options.bind, options.port)
        )
    })?;
    let listening = listener.local_addr()?;
    let site = routes::Site::new(
        env.clone(),
        guard::Guard::new(token.clone(), listening),
        &token,
        teams,
    );
    // The workers exist before the address is printed: whoever reads it finds the pool.
    let queue = start_workers(Arc::new(site));
    let url = format!("http://{listening}/?token={token}");
    writeln!(stdout, "pagent dashboard: {url}")?;
    writeln!(
        stdout,
        "Every loop on this machine and every team it knows, live, with pause, resume and cancel. Ctrl-C stops the page, not the loops."
    )?;
    if options.open {
        if env.has_display {
            match open::open_in_browser(env, &url) {
                Ok(()) => writeln!(stdout, "Opened it in your browser.")?,
                Err(err) => writeln!(
                    stdout,
                    "Could not open a browser ({err:#}); open the address above."
                )?,
            }
        } else {
            writeln!(
                stdout,
                "No graphical session to open a browser in; open the address above."
            )?;
        }
    }
    stdout.flush()?;
    accept::run(listener, &queue).context("the dashboard stopped accepting connections")
}

/// The user's token when they set one (required beyond loopback), else a random one.
fn choose_token(env: &Env, bind: IpAddr) -> anyhow::Result<String> {
    if let Some(token) = &env.dashboard_token {
        if !guard::valid_token(token) {
            bail!(
                "PAGENT_DASHBOARD_TOKEN must be at least 32 letters, digits, - or _ (and at most 256)"
            );
        }
        return Ok(token.clone());
    }
    if !bind.is_loopback() {
        bail!(
            "pagent dashboard listens beyond this machine ({bind}) only with a token you chose: \
             set PAGENT_DASHBOARD_TOKEN (at least 32 letters, digits, - or _). Anyone who can \
             reach the address and has the token can pause and cancel your loops, over plain HTTP."
        );
    }
    let random: [u8; 32] =
        pagent_door::random_bytes().context("cannot read random bytes for the token")?;
    Ok(pagent_engine::seal::hex(&random))
}

/// Requests read whole, waiting for a worker.
type Queue = SyncSender<accept::Job>;

/// The pool: [`WORKERS`] threads answering the requests sent to the returned queue.
fn start_workers(site: Arc<routes::Site>) -> Queue {
    let (tx, rx) = mpsc::sync_channel::<accept::Job>(QUEUE);
    let rx = Arc::new(Mutex::new(rx));
    for _ in 0..WORKERS {
        let rx = Arc::clone(&rx);
        let site = Arc::clone(&site);
        std::thread::spawn(move || {
            loop {
                let next = match rx.lock() {
                    Ok(queue) => queue.recv(),
                    Err(_) => return,
                };
                match next {
                    Ok((stream, request)) => handle(&site, stream, request),
                    Err(_) => return,
                }
            }
        });
    }
    tx
}

fn handle(
    site: &routes::Site,
    mut stream: TcpStream,
    request: Result<http::Request, http::Refusal>,
) {
    let request = match request {
        Ok(request) => request,
        Err(refusal) => {
            http::write_response(&mut stream, &http::Response::refusal(refusal));
            return;
        }
    };
    // A bug answering one request must not take a worker with it.
    let response = std::panic::catch_unwind(AssertUnwindSafe(|| routes::answer(site, &request)))
        .unwrap_or_else(|_| http::Response::text(500, "pagent dashboard: internal error\n"));
    http::write_response(&mut stream, &response);
}

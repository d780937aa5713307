//! The forwarder: pagent's own binary, started by the walls as the contained child's
//! parent (`FORWARDER_ARG SOCKET PROGRAM ARGS...`). It listens on `127.0.0.1:PORT` in the
//! child's network namespace before the child starts (so no first connection races it),
//! relays every connection to the proxy's Unix socket, then runs the child with the proxy
//! variables set and ends with its exit code. It runs inside the walls, with the child's
//! rights, so it needs no bounds of its own: whatever it holds, the child could hold.

use std::ffi::OsString;
use std::io;
use std::net::{Shutdown, TcpListener, TcpStream};
use std::os::unix::net::UnixStream;
use std::os::unix::process::ExitStatusExt;
use std::path::PathBuf;
use std::process::Command;

/// The variables that name the proxy, in both of the spellings tools read.
pub const PROXY_VARIABLES: &[&str] = &[
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "all_proxy",
];

/// Runs the forwarder for `args` (`SOCKET PROGRAM ARGS...`): the child's exit code, or
/// 125 (with a line on stderr) when it could not start.
pub fn run(args: &[OsString]) -> u8 {
    match start(args) {
        Ok(code) => code,
        Err(err) => {
            // The forwarder is a process of its own: its one way to say why it stopped.
            #[allow(clippy::print_stderr, reason = "the forwarder's own process")]
            {
                eprintln!("pagent: error: the sandbox's network forwarder could not start: {err}");
            }
            125
        }
    }
}

fn start(args: &[OsString]) -> io::Result<u8> {
    let [socket, program, rest @ ..] = args else {
        return Err(io::Error::other("expected SOCKET PROGRAM [ARGS...]"));
    };
    let socket = PathBuf::from(socket);
    let listener = TcpListener::bind("127.0.0.1:0")?;
    let proxy = format!("http://127.0.0.1:{}", listener.local_addr()?.port());
    std::thread::Builder::new()
        .name("pagent-forward".into())
        .spawn(move || {
            for conn in listener.incoming().flatten() {
                let socket = socket.clone();
                let _ = std::thread::Builder::new()
                    .name("pagent-forward-conn".into())
                    .spawn(move || relay(conn, &socket));
            }
        })?;
    let mut command = Command::new(program);
    command
        .args(rest)
        .env_remove("NO_PROXY")
        .env_remove("no_proxy");
    for name in PROXY_VARIABLES {
        command.env(name, &proxy);
    }
    let status = command.status()?;
    let code = status
        .code()
        .or_else(|| status.signal().map(|s| 128 + s))
        .unwrap_or(1);
    Ok(u8::try_from(code & 0xff).unwrap_or(1))
}

/// Copies `tcp` and the proxy's socket both ways until both directions end.
fn relay(tcp: TcpStream, socket: &std::path::Path) {
    let Ok(unix) = UnixStream::connect(socket) else {
        return;
    };
    let (Ok(mut tcp_in), Ok(mut unix_out)) = (tcp.try_clone(), unix.try_clone()) else {
        return;
    };
    let up = std::thread::spawn(move || {
        let _ = io::copy(&mut tcp_in, &mut unix_out);
        let _ = unix_out.shutdown(Shutdown::Write);
    });
    let (mut unix_in, mut tcp_out) = (unix, tcp);
    let _ = io::copy(&mut unix_in, &mut tcp_out);
    let _ = tcp_out.shutdown(Shutdown::Write);
    let _ = up.join();
}

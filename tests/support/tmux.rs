//! The one tmux helper of the integration and end-to-end suites: a tmux server of the test's own, on its own socket and with no user
//! configuration, holding one window of a fixed size that runs one command; killed on
//! drop, so a failed test leaves nothing behind and tests run side by side. Waiting is
//! polling with a deadline ([`crate::wait::wait_showing`]), never a fixed sleep. Without `tmux` the test fails
//! (scripts/install-tools.sh installs it), it never skips.

use std::path::Path;
use std::process::Command;

#[derive(Debug)]
pub struct Server {
    socket: String,
}

impl Server {
    /// A server named after `prefix`, the process and a counter, whose one window
    /// (session `ui`) of `width` x `height` runs `command` (a shell line) in `dir`.
    pub fn start(prefix: &str, (width, height): (u16, u16), dir: &Path, command: &str) -> Server {
        use std::sync::atomic::{AtomicU64, Ordering};
        static NEXT: AtomicU64 = AtomicU64::new(0);
        let server = Server {
            socket: format!(
                "{prefix}-{}-{}",
                std::process::id(),
                NEXT.fetch_add(1, Ordering::Relaxed)
            ),
        };
        server.run(&[
            "new-session",
            "-d",
            "-s",
            "ui",
            "-x",
            &width.to_string(),
            "-y",
            &height.to_string(),
            "-c",
            &dir.display().to_string(),
            command,
        ]);
        server
    }

    /// `tmux ARGS` on this server; fails the test with tmux's own words.
    pub fn run(&self, args: &[&str]) -> String {
        self.try_run(args)
            .unwrap_or_else(|err| panic!("tmux {args:?}: {err}"))
    }

    /// `tmux ARGS` on this server, or what went wrong: for a caller that must not panic
    /// (a drop while the test unwinds, a server whose one program has exited).
    pub fn try_run(&self, args: &[&str]) -> Result<String, String> {
        let out = Command::new("tmux")
            .args(["-u", "-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env("LANG", "C.UTF-8")
            .output()
            .map_err(|e| format!("cannot run tmux ({e}): scripts/install-tools.sh installs it"))?;
        if !out.status.success() {
            return Err(String::from_utf8_lossy(&out.stderr).into_owned());
        }
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

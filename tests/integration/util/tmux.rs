//! A terminal for tests that need one: a tmux server of the test's own (its own socket,
//! killed on drop) with one window of a fixed size running a script, read back with
//! `capture-pane` as a person would see it. Waiting is polling the screen with a
//! deadline, never a fixed sleep; a wait that times out fails with the screen. Needs
//! `tmux` (scripts/install-tools.sh installs it): without it the test fails, never skips.

use std::path::{Path, PathBuf};

use super::TestEnv;
use std::process::Command;
use std::time::{Duration, Instant};

const WAIT: Duration = Duration::from_secs(60);

/// A tmux server of our own with one window of a fixed size.
pub struct Tmux {
    socket: String,
}

impl Tmux {
    pub fn start(size: (u16, u16), dir: &Path, script: &Path) -> Tmux {
        let tmux = Tmux {
            socket: format!("pagent-it-{}-{}", std::process::id(), unique()),
        };
        tmux.run(&[
            "new-session",
            "-d",
            "-x",
            &size.0.to_string(),
            "-y",
            &size.1.to_string(),
            "-c",
            &dir.display().to_string(),
            &format!("sh {}", script.display()),
        ]);
        tmux
    }

    pub fn run(&self, args: &[&str]) -> String {
        let out = Command::new("tmux")
            .args(["-u", "-L", &self.socket, "-f", "/dev/null"])
            .args(args)
            .env("LANG", "C.UTF-8")
            .output()
            .unwrap_or_else(|e| {
                panic!("cannot run tmux ({e}): scripts/install-tools.sh installs it")
            });
        assert!(
            out.status.success(),
            "tmux {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// The visible screen, one string per row (a wrapped line is two rows).
    pub fn rows(&self) -> Vec<String> {
        self.run(&["capture-pane", "-p"])
            .lines()
            .map(str::to_owned)
            .collect()
    }

    /// The screen with wrapped lines joined: what was printed, for snapshots.
    pub fn joined(&self) -> String {
        self.run(&["capture-pane", "-p", "-J"])
    }

    pub fn wait_until(&self, what: &str, ready: impl Fn(&[String]) -> bool) -> Vec<String> {
        let deadline = Instant::now() + WAIT;
        loop {
            let rows = self.rows();
            if ready(&rows) {
                return rows;
            }
            assert!(
                Instant::now() < deadline,
                "waited {WAIT:?} for {what}:\n{}",
                rows.join("\n")
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = Command::new("tmux")
            .args(["-L", &self.socket, "kill-server"])
            .output();
    }
}

fn unique() -> u64 {
    use std::sync::atomic::{AtomicU64, Ordering};
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

/// A script that runs `pagent ARGS` (shell words) in a clean environment, then says
/// `[exit N]` and keeps the window open.
pub fn pagent_script(env: &TestEnv, args: &str) -> PathBuf {
    let path = env.home.join("run.sh");
    std::fs::write(
        &path,
        format!(
            "exec env -i TERM=\"$TERM\" LANG=C.UTF-8 HOME='{home}' PAGENT_CONFIG_DIR='{config}' \
             PATH=/usr/bin:/bin sh -c '\"$0\" \"$@\"; echo \"[exit $?]\"; exec cat' '{bin}' {args}\n",
            home = env.home.display(),
            config = env.config.display(),
            bin = super::pagent_bin().display(),
        ),
    )
    .unwrap();
    path
}

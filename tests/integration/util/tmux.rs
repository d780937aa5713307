//! A terminal for tests that need one (the shared server of `tests/support/tmux.rs`),
//! read back with `capture-pane` as a person would see it: the visible rows, or the
//! printed lines with wrapping undone, for snapshots.

use std::path::{Path, PathBuf};
use std::time::Duration;

use super::TestEnv;
use pagent_test_support::tmux::Server;
use pagent_test_support::wait::wait_showing_every;

const WAIT: Duration = Duration::from_secs(60);

/// A tmux server of our own with one window of a fixed size.
pub struct Tmux {
    server: Server,
}

impl Tmux {
    pub fn start(size: (u16, u16), dir: &Path, script: &Path) -> Tmux {
        Tmux {
            server: Server::start("pagent-it", size, dir, &format!("sh {}", script.display())),
        }
    }

    pub fn run(&self, args: &[&str]) -> String {
        self.server.run(args)
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
        wait_showing_every(WAIT, Duration::from_millis(50), what, || {
            let rows = self.rows();
            if ready(&rows) {
                Ok(rows)
            } else {
                Err(rows.join("\n"))
            }
        })
    }
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

//! `pagent team` (issue 32) with the real Claude Code CLI: a team worker runs each story's
//! loop through the same runner as `pagent loop`, so `claude -p` (against the mock API)
//! does a story's work in the worker's worktree, and the worker lands it on a remote
//! served by a real `git daemon` on loopback.

use std::fs;
use std::net::TcpListener;
use std::os::unix::process::CommandExt;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::git::git;
use crate::harness::{E2e, claude_binary};
use crate::mock::Reply;

/// `git daemon` serving `base` on a free port of 127.0.0.1, killed when dropped.
struct Daemon {
    child: Child,
    port: u16,
}

impl Daemon {
    fn serve(base: &std::path::Path) -> Daemon {
        let port = TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let child = Command::new("git")
            .args([
                "daemon",
                "--export-all",
                "--enable=receive-pack",
                "--reuseaddr",
                "--listen=127.0.0.1",
                &format!("--port={port}"),
                &format!("--base-path={}", base.display()),
            ])
            .arg(base)
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .process_group(0)
            .spawn()
            .unwrap();
        let started = Instant::now();
        while std::net::TcpStream::connect(("127.0.0.1", port)).is_err() {
            assert!(
                started.elapsed() < Duration::from_secs(10),
                "git daemon never listened"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
        Daemon { child, port }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        // The daemon's own process group (it forks one child per connection).
        let _ = Command::new("kill")
            .args(["-KILL", "--", &format!("-{}", self.child.id())])
            .status();
        let _ = self.child.wait();
    }
}

/// Issue 32: a team worker drives the real Claude Code CLI. The team is published to a
/// remote served by `git daemon`; a worker (`pagent team work`) claims the story, runs its
/// loop with `claude -p` against the mock (the agent writes the story's file in the
/// worker's worktree and makes its promise), and lands it on the remote's shared branch,
/// where the file is.
#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn issue_32_a_team_worker_drives_claude_code_and_lands_its_story_on_a_git_daemon_remote() {
    let e2e = E2e::start_with(|e2e| {
        let tree = e2e.path(".pagent/worktrees/alpha/alpha.md");
        vec![
            Reply::write(&tree, "alpha by claude\n"),
            Reply::text("Done.\n<promise>DONE</promise>"),
        ]
    });
    let project = &e2e.project;
    for (key, value) in [("user.name", "Tess"), ("user.email", "tess@example.com")] {
        git(project, &["config", key, value]);
    }
    git(project, &["branch", "-M", "main"]);
    let served = project.parent().unwrap().join("served");
    fs::create_dir_all(&served).unwrap();
    let bare = served.join("remote.git");
    git(&served, &["init", "-q", "--bare", bare.to_str().unwrap()]);
    let daemon = Daemon::serve(&served);
    let url = format!("git://127.0.0.1:{}/remote.git", daemon.port);
    git(project, &["remote", "add", "origin", &url]);
    git(project, &["push", "-q", "origin", "main"]);
    e2e.write("tasks.txt", "alpha: Write alpha.md\n");

    let start = e2e.pagent_team(&["start", "tasks.txt", "--name", "e2e", "--agent", "claude"]);
    assert_eq!(
        start.status.code(),
        Some(0),
        "{}{}",
        String::from_utf8_lossy(&start.stdout),
        String::from_utf8_lossy(&start.stderr)
    );
    let claude = claude_binary();
    let work = e2e.pagent_team(&[
        "work",
        "--team",
        "e2e",
        "--name",
        "w1",
        "--agent-bin",
        claude.to_str().unwrap(),
    ]);
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&work.stdout),
        String::from_utf8_lossy(&work.stderr)
    );
    assert_eq!(work.status.code(), Some(0), "{said}");
    assert_eq!(e2e.mock.requests().len(), 2, "{said}");
    // The story's prompt reached Claude Code in the worker's worktree.
    assert!(e2e.mock.all_text(0).contains("Write alpha.md"), "{said}");
    let remote = |args: &[&str]| {
        let out = Command::new("git")
            .args(args)
            .current_dir(&bare)
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        String::from_utf8(out.stdout).unwrap()
    };
    assert_eq!(remote(&["show", "main:alpha.md"]), "alpha by claude\n");
    let subjects = remote(&["log", "--first-parent", "--format=%s", "main"]);
    assert!(
        subjects
            .lines()
            .next()
            .unwrap()
            .starts_with("pagent: land alpha"),
        "{subjects}"
    );
    let status = e2e.pagent_team(&["status", "--team", "e2e", "--json"]);
    let status: serde_json::Value = serde_json::from_slice(&status.stdout).unwrap();
    assert_eq!(status["stories"][0]["state"], "landed", "{status}");
    assert!(
        status["workers"][0]["tokens"].as_u64().unwrap() > 0,
        "the worker's spend counts Claude Code's tokens: {status}"
    );
    drop(daemon);
}

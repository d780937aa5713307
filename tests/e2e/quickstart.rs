//! The README's quick start, as a new reader takes it on the day they read it (issue 34):
//! in a fresh clone of this tree, every command of its shell blocks that is not marked
//! `after-release` runs as written, with a Rust toolchain and the Claude Code CLI on
//! `PATH` and nothing else of pagent's; then what it says to type into Claude Code runs
//! there, through the plugin the commands installed, to the loop's end. (The
//! `after-release` commands run against local registries in `npm.rs`; the docs test keeps
//! the two lists apart.)
//!
//! The build keeps the release profile's name but not its cost (no LTO, no optimisation,
//! through `CARGO_PROFILE_RELEASE_*`), and the packages come from cargo's cache (offline):
//! what is proven is that the quick start installs a working pagent from a clone.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::harness::{E2e, claude_binary};
use crate::marketplace::repository_of_this_tree;
use crate::mock::Reply;

fn check(what: &str, out: &Output) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The fenced blocks of the README's quick start: each block's info string and lines.
pub fn quick_start_blocks(readme: &str) -> Vec<(String, Vec<String>)> {
    let start = readme.find("\n## Quick start\n").expect("a quick start");
    let section = &readme[start + 1..];
    let end = section[3..].find("\n## ").map_or(section.len(), |e| e + 3);
    let mut blocks = Vec::new();
    let mut open: Option<(String, Vec<String>)> = None;
    for line in section[..end].lines() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(info)) => open = Some((info.trim().to_owned(), Vec::new())),
            (Some(_), Some(_)) => blocks.push(open.take().unwrap()),
            (Some((_, lines)), None) => lines.push(line.to_owned()),
            (None, None) => {}
        }
    }
    blocks
}

/// The shell commands of blocks `sh` without `after-release`, comments left out.
fn commands_for_today(readme: &str) -> Vec<String> {
    quick_start_blocks(readme)
        .into_iter()
        .filter(|(info, _)| info.split_whitespace().next() == Some("sh"))
        .filter(|(info, _)| !info.split_whitespace().any(|w| w == "after-release"))
        .flat_map(|(_, lines)| lines)
        .map(|l| l.split(" #").next().unwrap_or("").trim().to_owned())
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .collect()
}

#[test]
#[ignore = "end-to-end: needs cargo's cache of the lock file's packages and the Claude Code CLI (scripts/test.sh runs it)"]
fn issue_34_the_quick_start_runs_from_a_fresh_clone() {
    let e2e = E2e::start(vec![
        Reply::text("Working on it."),
        Reply::text("Every test passes.\n<promise>DONE</promise>"),
    ]);
    let base = e2e.home.parent().unwrap().to_path_buf();
    let served = base.join("pagent.git");
    repository_of_this_tree(&served);
    let clone = base.join("pagent");
    let out = Command::new("git")
        .args(["clone", "-q"])
        .arg(&served)
        .arg(&clone)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    check("git clone", &out);

    let readme = fs::read_to_string(clone.join("README.md")).unwrap();
    let commands = commands_for_today(&readme);
    assert!(
        !commands.is_empty(),
        "the quick start has no command for today"
    );
    let cargo = PathBuf::from(env!("CARGO"));
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        cargo.parent().unwrap().display(),
        claude_binary().parent().unwrap().display()
    );
    let installed = base.join("cargo-root");
    for command in &commands {
        let out = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(&clone)
            .env("HOME", &e2e.home)
            .env("PATH", &path)
            .env("CARGO_INSTALL_ROOT", &installed)
            .env("CARGO_TARGET_DIR", base.join("target"))
            .env("CARGO_NET_OFFLINE", "true")
            .env("CARGO_PROFILE_RELEASE_LTO", "false")
            .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
            .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256")
            .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env_remove("RUSTFLAGS")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("XDG_DATA_HOME")
            .env_remove("PAGENT_BIN")
            .env_remove("PAGENT_PLUGIN_SOURCE")
            .env_remove("PAGENT_MARKETPLACE_DIR")
            .output()
            .unwrap();
        let said = check(&format!("the quick start's `{command}`"), &out);
        assert!(said.contains("plugin pagent@pagent: installed"), "{said}");
    }
    let out = Command::new(installed.join("bin/pagent"))
        .arg("--version")
        .output()
        .unwrap();
    assert!(
        check("pagent --version", &out)
            .starts_with(&format!("pagent {}", env!("CARGO_PKG_VERSION")))
    );

    // What the quick start says to type into Claude Code, through what it installed.
    let prompts: Vec<String> = quick_start_blocks(&readme)
        .into_iter()
        .filter(|(info, _)| info == "text prompt")
        .flat_map(|(_, lines)| lines)
        .collect();
    assert_eq!(prompts.len(), 1, "{prompts:?}");
    let run = e2e
        .claude(&prompts[0])
        .plugin_dir(None)
        .env_remove("PAGENT_BIN")
        .env("PATH", "/usr/bin:/bin")
        .run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 2);
    assert_eq!(e2e.status()["status"], "complete");
    assert_installed_from(&e2e.home, &clone, &installed.join("bin/pagent"));
}

/// The plugin the session used is the staged copy of the clone's plugin files, with the
/// installed binary as the program its hooks start (`scripts/pagent`: no launcher).
fn assert_installed_from(home: &Path, clone: &Path, binary: &Path) {
    let staged = home.join(".local/share/pagent/marketplace");
    for rel in ["hooks/hooks.json", "commands/ralph.md"] {
        assert_eq!(
            fs::read(staged.join(rel)).unwrap(),
            fs::read(clone.join(rel)).unwrap(),
            "{rel}"
        );
    }
    // Compared by digest: a mismatch of two binaries must not print them whole.
    let digest = |path: &Path| {
        use sha2::Digest;
        pagent_engine::seal::hex(&sha2::Sha256::digest(fs::read(path).unwrap()))
    };
    assert_eq!(
        digest(&staged.join("scripts/pagent")),
        digest(binary),
        "scripts/pagent is the installed binary"
    );
}

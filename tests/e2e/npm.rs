//! The npm route, end to end: `scripts/release.sh` packs the packages (with the binary
//! under test, not a fresh LTO build), npm installs them from the tarballs into a scratch
//! prefix with no registry access, with install scripts off (the package has none: the
//! Node launcher runs the binary from the platform package, as esbuild's and Biome's do),
//! and the installed `pagent` sets up Claude Code in a scratch HOME: the plugin is listed,
//! a ralph loop runs to its promise through the short command name without
//! `--plugin-dir`, and `pagent uninstall` leaves the HOME's file list as it found it, or
//! names what it leaves (in a fresh HOME, Claude Code's own settings). Then the command a
//! user types after the first release, `npm install -g pagent`, against a local registry
//! serving the same tarballs (`registry.rs`).

use std::collections::BTreeSet;
use std::fs;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::harness::{E2e, claude_binary, pagent_bin, repo_root};
use crate::mock::Reply;
use crate::registry::NpmRegistry;

fn check(what: &str, out: &Output) {
    assert!(
        out.status.success(),
        "{what}: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The npm platform (`process.platform`-`process.arch`) these tests were built for: the
/// package scripts/release.sh packs on this machine.
fn npm_platform() -> &'static str {
    pagent_test_support::project::npm_platform(env!("PAGENT_TARGET"))
}

/// `npm install -g` of the tarballs into `prefix`, offline, with a cache of its own;
/// what npm said on stderr.
fn npm_install(base: &Path, prefix: &Path, tarballs: &[PathBuf], extra: &[&str]) -> String {
    let out = Command::new("npm")
        .args([
            "install",
            "-g",
            "--offline",
            "--no-audit",
            "--no-fund",
            "--prefix",
        ])
        .arg(prefix)
        .args(extra)
        .args(tarballs)
        .env("npm_config_cache", base.join("npm-cache"))
        .env("npm_config_update_notifier", "false")
        .output()
        .unwrap();
    check("npm install", &out);
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// The packages of a release, packed by scripts/release.sh in `base/npm` with the binary
/// under test: this platform's package and the main one.
pub fn pack(base: &Path) -> [PathBuf; 2] {
    let out = Command::new(repo_root().join("scripts/release.sh"))
        .arg(base.join("npm"))
        .env("PAGENT_RELEASE_BIN", pagent_bin())
        .output()
        .unwrap();
    check("scripts/release.sh", &out);
    let version = env!("CARGO_PKG_VERSION");
    let dist = base.join("npm/dist");
    [
        dist.join(format!("pagent-{}-{version}.tgz", npm_platform())),
        dist.join(format!("pagent-{version}.tgz")),
    ]
}

/// The main package's manifest, as packed.
fn main_manifest(tarball: &Path) -> serde_json::Value {
    let out = Command::new("tar")
        .arg("-xzOf")
        .arg(tarball)
        .arg("package/package.json")
        .output()
        .unwrap();
    check("tar", &out);
    serde_json::from_slice(&out.stdout).unwrap()
}

/// What npm says when a package has an install script it was not allowed to run (npm
/// 11's `allowScripts`), or when one ran or failed.
fn assert_no_install_script_talk(npm_said: &str) {
    for word in [
        "install-scripts",
        "allowScripts",
        "allow-scripts",
        "postinstall",
    ] {
        assert!(!npm_said.contains(word), "npm said: {npm_said}");
    }
}

/// Every path under `home`, relative.
fn file_list(home: &Path) -> BTreeSet<String> {
    walkdir::WalkDir::new(home)
        .min_depth(1)
        .into_iter()
        .flatten()
        .map(|e| e.path().strip_prefix(home).unwrap().display().to_string())
        .collect()
}

/// Item 13 of issue 20: what uninstall leaves that was not there before is named in what
/// it said (the path itself, or a folder it is in).
fn assert_named(before: &BTreeSet<String>, after: &BTreeSet<String>, home: &Path, said: &str) {
    let gone: Vec<&String> = before.difference(after).collect();
    assert!(
        gone.is_empty(),
        "uninstall removed what it did not make: {gone:?}\n{said}"
    );
    for extra in after.difference(before) {
        let named = Path::new(extra).ancestors().any(|p| {
            !p.as_os_str().is_empty() && said.contains(&format!("left {}", home.join(p).display()))
        });
        assert!(named, "{extra} is left and not named:\n{said}");
    }
}

#[test]
#[ignore = "end-to-end: needs npm and the Claude Code CLI (scripts/test.sh runs it)"]
fn npm_packages_install_offline_and_pagent_install_sets_up_claude_code() {
    let e2e = E2e::start(vec![
        Reply::text("Working on it."),
        Reply::text("All done.\n<promise>DONE</promise>"),
    ]);
    let base = e2e.home.parent().unwrap().to_path_buf();
    let tarballs = pack(&base);
    let scripts = &main_manifest(&tarballs[1])["scripts"];
    assert!(scripts.is_null(), "the package has scripts: {scripts}");

    // Install scripts off, as a careful user (or a company's npm config) has them: the
    // package needs none. The Node launcher finds the binary in the platform package and
    // passes arguments, stdin and exit code through.
    let prefix = base.join("prefix");
    let said = npm_install(&base, &prefix, &tarballs, &["--ignore-scripts"]);
    assert_no_install_script_talk(&said);
    let pagent = prefix.join("bin/pagent");
    the_launcher_passes_everything_through(&e2e, &pagent);

    // `pagent install` into a HOME where Claude Code has run once.
    let claude_dir = claude_binary().parent().unwrap().to_path_buf();
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        prefix.join("bin").display(),
        claude_dir.display()
    );
    let run = |args: &[&str]| pagent_in(&pagent, &e2e.home, &path, args, false);
    assert_eq!(plugin_ids(&e2e.home), Vec::<String>::new());
    let before = file_list(&e2e.home);
    install_twice_then_uninstall(&e2e.home, &run, &before);
    // A HOME where Claude Code never ran: its first `claude plugin` command creates
    // Claude Code's own settings, which uninstall leaves and names.
    let fresh = base.join("fresh-home");
    fs::create_dir_all(&fresh).unwrap();
    pagent_in(&pagent, &fresh, &path, &["install"], true);
    let said = pagent_in(&pagent, &fresh, &path, &["uninstall"], true);
    let after = file_list(&fresh);
    assert_named(&BTreeSet::new(), &after, &fresh, &said);
    assert!(after.contains(".claude.json"), "{after:?}\n{said}");

    // Installed again, a ralph loop through the short name runs the binary from the
    // plugin's data folder: no --plugin-dir, no PAGENT_BIN, no pagent on PATH.
    run(&["install"]);
    let data_bin = e2e
        .home
        .join(".claude/plugins/data/pagent-pagent/bin/pagent");
    assert_eq!(
        fs::read(&data_bin).unwrap(),
        fs::read(pagent_bin()).unwrap()
    );
    let run = e2e
        .claude("/ralph Finish the task --max-iterations 3")
        .plugin_dir(None)
        .env_remove("PAGENT_BIN")
        .env("PATH", "/usr/bin:/bin")
        .run();
    assert_eq!(run.code, Some(0));
    let plugins = run.init()["plugins"].to_string();
    assert!(plugins.contains("pagent"), "{plugins}");
    assert_eq!(e2e.mock.requests().len(), 2);
    assert!(
        e2e.mock
            .stop_feedback(1)
            .starts_with("pagent · ralph loop · iteration 2 of 3"),
        "{}",
        e2e.mock.stop_feedback(1)
    );
    assert_eq!(e2e.status()["status"], "complete");
}

/// The Node launcher finds the binary in the platform package and passes arguments,
/// stdin and exit code through.
fn the_launcher_passes_everything_through(e2e: &E2e, pagent: &Path) {
    let version = env!("CARGO_PKG_VERSION");
    let out = Command::new(pagent).arg("--version").output().unwrap();
    check("pagent --version", &out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("pagent {version} ({})", env!("PAGENT_TARGET"))
    );
    let shim = pagent;
    assert!(
        fs::read(shim).unwrap().starts_with(b"#!/usr/bin/env node"),
        "bin/pagent is the Node launcher"
    );
    let input = format!(
        r#"{{"session_id":"s1","transcript_path":"/nonexistent.jsonl","cwd":"{}","hook_event_name":"Stop","stop_hook_active":false,"last_assistant_message":"Done."}}"#,
        e2e.project.display()
    );
    let mut child = Command::new(shim)
        .args(["hook", "stop"])
        .env_remove("CLAUDE_PROJECT_DIR")
        .env("PAGENT_CONFIG_DIR", &e2e.config)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    check("the Stop hook through the launcher", &out);
    assert!(out.stdout.is_empty(), "{out:?}");
    let out = Command::new(shim).arg("no-such-command").output().unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
}

/// `pagent ARGS` as installed, with `home` as HOME and `path` as PATH; in a `fresh` HOME
/// no config folder is named either. What it printed.
fn pagent_in(pagent: &Path, home: &Path, path: &str, args: &[&str], fresh: bool) -> String {
    let mut command = Command::new(pagent);
    command
        .args(args)
        .env("HOME", home)
        .env("PATH", path)
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("XDG_DATA_HOME")
        .env_remove("PAGENT_MARKETPLACE_DIR")
        .env_remove("PAGENT_PLUGIN_SOURCE");
    if fresh {
        command
            .env_remove("XDG_CONFIG_HOME")
            .env_remove("PAGENT_CONFIG_DIR");
    }
    let out = command.output().unwrap();
    let shown = if fresh { " in a fresh HOME" } else { "" };
    check(&format!("pagent {args:?}{shown}"), &out);
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// The installed plugins' ids, Claude Code's own (`...@builtin`, listed from 2.1.332)
/// left out.
fn plugin_ids(home: &Path) -> Vec<String> {
    let out = Command::new(claude_binary())
        .args(["plugin", "list", "--json"])
        .env("HOME", home)
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .output()
        .unwrap();
    check("claude plugin list --json", &out);
    let listed: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    listed
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|p| p["id"].as_str())
        .filter(|id| !id.ends_with("@builtin"))
        .map(str::to_owned)
        .collect()
}

/// A second install changes nothing; uninstall removes what the first did and names
/// what it leaves.
fn install_twice_then_uninstall(
    home: &Path,
    run: &dyn Fn(&[&str]) -> String,
    before: &BTreeSet<String>,
) {
    let said = run(&["install"]);
    assert!(said.contains("plugin pagent@pagent: installed"), "{said}");
    assert_eq!(plugin_ids(home), ["pagent@pagent"]);
    let said = run(&["install"]);
    for line in [
        "are up to date",
        "marketplace pagent: already registered",
        "plugin pagent@pagent: already installed and up to date",
        "is up to date",
    ] {
        assert!(
            said.contains(line),
            "a second install should change nothing: {said}"
        );
    }

    let said = run(&["uninstall"]);
    assert!(said.contains("removed plugin pagent@pagent"), "{said}");
    assert!(
        said.contains("removed short command names /pagent-run"),
        "{said}"
    );
    assert_named(before, &file_list(home), home, &said);
}

/// Issue 34: the README's commands for after the first release (its `after-release`
/// block: `npm install -g pagent`, then `pagent install`), typed as written, against a
/// registry serving the release's tarballs as the public one will: npm takes the main
/// package and this platform's, fetches no other platform's file, says nothing about
/// install scripts (the package has none), the `pagent` it installs runs the binary, and
/// `pagent install` sets Claude Code up.
#[test]
#[ignore = "end-to-end: needs npm and the Claude Code CLI (scripts/test.sh runs it)"]
fn issue_34_the_readmes_after_release_commands_work_against_a_registry() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path();
    let home = base.join("home");
    fs::create_dir_all(&home).unwrap();
    let tarballs = pack(base);
    let registry = NpmRegistry::serve(&tarballs);
    let prefix = base.join("prefix");
    let readme = fs::read_to_string(repo_root().join("README.md")).unwrap();
    let commands: Vec<String> = crate::quickstart::quick_start_blocks(&readme)
        .into_iter()
        .filter(|(info, _)| info.split_whitespace().any(|w| w == "after-release"))
        .flat_map(|(_, lines)| lines)
        .map(|l| l.split(" #").next().unwrap_or("").trim().to_owned())
        .filter(|l| !l.is_empty())
        .collect();
    assert_eq!(
        commands.first().map(String::as_str),
        Some("npm install -g pagent")
    );
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        prefix.join("bin").display(),
        claude_binary().parent().unwrap().display()
    );
    let mut said = String::new();
    for command in &commands {
        let out = Command::new("sh")
            .arg("-c")
            .arg(command)
            .current_dir(base)
            .env("HOME", &home)
            .env("PATH", &path)
            .env("npm_config_registry", &registry.url)
            .env("npm_config_prefix", &prefix)
            .env("npm_config_cache", base.join("npm-cache"))
            .env("npm_config_update_notifier", "false")
            .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
            .env("DISABLE_AUTOUPDATER", "1")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("XDG_DATA_HOME")
            .env_remove("PAGENT_BIN")
            .env_remove("PAGENT_PLUGIN_SOURCE")
            .env_remove("PAGENT_MARKETPLACE_DIR")
            .output()
            .unwrap();
        check(command, &out);
        said.push_str(&String::from_utf8_lossy(&out.stdout));
        said.push_str(&String::from_utf8_lossy(&out.stderr));
    }
    assert_no_install_script_talk(&said);
    assert!(said.contains("plugin pagent@pagent: installed"), "{said}");
    let version = env!("CARGO_PKG_VERSION");
    let out = Command::new(prefix.join("bin/pagent"))
        .arg("--version")
        .output()
        .unwrap();
    check("pagent --version", &out);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        format!("pagent {version} ({})", env!("PAGENT_TARGET"))
    );
    let mut files: Vec<String> = registry
        .requests()
        .into_iter()
        .filter(|r| r.starts_with("/-/"))
        .collect();
    files.sort();
    assert_eq!(
        files,
        [
            format!("/-/pagent-{version}.tgz"),
            format!("/-/pagent-{}-{version}.tgz", npm_platform())
        ],
        "npm fetched {:?}",
        registry.requests()
    );
}

/// `scripts/publish.sh` on this machine's packages: the set is not whole (the other
/// platforms are built on their own runners), so it refuses, naming each missing package,
/// before anything reaches npm; a tag of another version is refused too. The registry is
/// an address where nothing listens, so nothing could be sent in any case. The whole set
/// goes through the same script as a dry run in the release workflow.
#[test]
#[ignore = "end-to-end: needs npm (scripts/test.sh runs it)"]
fn publish_refuses_a_release_that_lacks_a_platform() {
    let base = tempfile::tempdir().unwrap();
    pack(base.path());
    let dist = base.path().join("npm/dist");
    let version = env!("CARGO_PKG_VERSION");
    let publish = |args: &[&str]| {
        Command::new(repo_root().join("scripts/publish.sh"))
            .args(args)
            .arg(&dist)
            .env("npm_config_registry", "http://127.0.0.1:9/")
            .env_remove("NODE_AUTH_TOKEN")
            .env_remove("GITHUB_REF_NAME")
            .output()
            .unwrap()
    };
    let out = publish(&["--dry-run"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let missing: Vec<&str> = [
        "linux-x64",
        "linux-arm64",
        "darwin-arm64",
        "darwin-x64",
        "win32-x64",
    ]
    .into_iter()
    .filter(|p| *p != npm_platform())
    .collect();
    for platform in &missing {
        assert!(
            stderr.contains(&format!("pagent-{platform}={version}")),
            "{platform}: {stderr}"
        );
    }
    assert!(
        !stderr.contains("npm publish"),
        "nothing published: {stderr}"
    );

    let out = publish(&["--dry-run", "--tag", "v0.0.0-not-this"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!("does not name version {version}")),
        "{stderr}"
    );
}

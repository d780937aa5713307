//! `scripts/pagent`, the launcher the hooks and slash commands call: the order in which it
//! looks for the binary (an npm install's platform package among the places), that
//! arguments and stdin pass untouched, that a copy of itself is never run in a loop, and
//! that a missing binary allows the stop (exit 0, one line) and, in the hook a user meets
//! first, answers on screen with the command that installs it.
//!
//! Each case runs a copy of the launcher in a temp plugin folder, with fake binaries that
//! print their own name and arguments, and a bare environment (no inherited `PAGENT_*` or
//! `CLAUDE_*` variable).

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::util::{Said, assert_text};

struct Plugin {
    _dir: tempfile::TempDir,
    base: PathBuf,
}

impl Plugin {
    fn new() -> Plugin {
        let dir = tempfile::tempdir().unwrap();
        let base = dir.path().canonicalize().unwrap();
        let launcher = base.join("plugin/scripts/pagent");
        fs::create_dir_all(launcher.parent().unwrap()).unwrap();
        fs::copy(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("scripts/pagent"),
            &launcher,
        )
        .unwrap();
        fs::create_dir_all(base.join("home")).unwrap();
        Plugin { _dir: dir, base }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.base.join(rel)
    }

    /// A fake binary at `rel` that prints `name`, its arguments and its stdin.
    fn fake(&self, rel: &str, name: &str) -> PathBuf {
        self.script(rel, &format!("#!/bin/sh\necho {name} \"$@\"; cat\n"))
    }

    fn script(&self, rel: &str, text: &str) -> PathBuf {
        let path = self.path(rel);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(&path, text).unwrap();
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
        path
    }

    /// The launcher as hooks.json calls it (absolute path), `hook stop`, stdin `input`.
    fn run(&self, env: &[(&str, &Path)]) -> Output {
        self.run_hook("stop", env)
    }

    /// The launcher as hooks.json calls it for the hook `hook`.
    fn run_hook(&self, hook: &str, env: &[(&str, &Path)]) -> Output {
        let mut command = Command::new(self.path("plugin/scripts/pagent"));
        command
            .args(["hook", hook])
            .env_clear()
            .env("HOME", self.path("home"))
            .env("PATH", "/usr/bin:/bin")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        for (key, value) in env {
            command.env(key, value);
        }
        let mut child = command.spawn().unwrap();
        use std::io::Write;
        child
            .stdin
            .take()
            .unwrap()
            .write_all(b"{\"x\": \"it's\"}")
            .unwrap();
        child.wait_with_output().unwrap()
    }
}

fn said(out: &Output) -> String {
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

const DATA_BIN: &str = "home/.claude/plugins/data/pagent-pagent/bin/pagent";

/// The platform package npm installs on this machine, as `uname` names it.
fn npm_package() -> String {
    let uname = |flag: &str| {
        String::from_utf8(Command::new("uname").arg(flag).output().unwrap().stdout)
            .unwrap()
            .trim()
            .to_owned()
    };
    let os = match uname("-s").as_str() {
        "Linux" => "linux",
        "Darwin" => "darwin",
        other => panic!("no npm package for {other}"),
    };
    let cpu = match uname("-m").as_str() {
        "x86_64" | "amd64" => "x64",
        "aarch64" | "arm64" => "arm64",
        other => panic!("no npm package for {other}"),
    };
    format!("pagent-{os}-{cpu}")
}

#[test]
fn the_launcher_looks_in_its_documented_order() {
    let plugin = Plugin::new();
    let path_dir = plugin.path("on-path");
    plugin.fake("on-path/pagent", "path");
    let path = format!("{}:/usr/bin:/bin", path_dir.display());
    let path = Path::new(&path);
    let plugin_data = plugin.path("plugin-data");
    let custom = plugin.fake("custom/pagent", "custom");
    let env: Vec<(&str, &Path)> = vec![
        ("PATH", path),
        ("CLAUDE_PLUGIN_DATA", &plugin_data),
        ("PAGENT_BIN", &custom),
    ];
    // Each step removes the winner of the one before.
    plugin.fake("plugin/target/release/pagent", "release");
    plugin.fake("plugin/target/debug/pagent", "debug");
    plugin.fake("plugin-data/bin/pagent", "plugin-data");
    plugin.fake(DATA_BIN, "installed");
    // An npm install: the platform package inside the package's node_modules, or beside
    // the package (npm's global folder); one for another platform is never run.
    let nested = format!("plugin/node_modules/{}/bin/pagent", npm_package());
    let beside = format!("{}/bin/pagent", npm_package());
    plugin.fake(&nested, "npm-nested");
    plugin.fake(&beside, "npm-beside");
    plugin.fake("plugin/node_modules/pagent-win32-x64/bin/pagent", "wrong");
    plugin.fake("pagent-sunos-sparc/bin/pagent", "wrong");
    let expected = [
        "custom",
        "release",
        "debug",
        "plugin-data",
        "installed",
        "npm-nested",
        "npm-beside",
        "path",
    ];
    let winners = [
        "custom/pagent",
        "plugin/target/release/pagent",
        "plugin/target/debug/pagent",
        "plugin-data/bin/pagent",
        DATA_BIN,
        &nested,
        &beside,
        "on-path/pagent",
    ];
    for (name, winner) in expected.iter().zip(winners) {
        assert_eq!(
            said(&plugin.run(&env)),
            format!("{name} hook stop\n{{\"x\": \"it's\"}}"),
        );
        fs::remove_file(plugin.path(winner)).unwrap();
    }
    let out = plugin.run(&env);
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("pagent: the pagent binary is not installed"),
        "{stderr}"
    );
}

#[test]
fn a_copy_of_the_launcher_in_every_place_never_loops() {
    let plugin = Plugin::new();
    let launcher = fs::read_to_string(plugin.path("plugin/scripts/pagent")).unwrap();
    let plugin_data = plugin.path("plugin-data");
    let on_path = plugin.path("on-path");
    plugin.script("plugin-data/bin/pagent", &launcher);
    plugin.script(DATA_BIN, &launcher);
    plugin.script("on-path/pagent", &launcher);
    let path = format!("{}:relative:/usr/bin:/bin", on_path.display());
    let env: Vec<(&str, &Path)> = vec![
        ("PATH", Path::new(&path)),
        ("CLAUDE_PLUGIN_DATA", &plugin_data),
    ];
    let out = plugin.run(&env);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.starts_with("pagent: the pagent binary is not installed"),
        "{stderr}"
    );
    // With a real binary further down PATH, the chain of launchers reaches it.
    plugin.fake("later/pagent", "later");
    let path = format!(
        "{}:{}:/usr/bin:/bin",
        on_path.display(),
        plugin.path("later").display()
    );
    let env: Vec<(&str, &Path)> = vec![
        ("PATH", Path::new(&path)),
        ("CLAUDE_PLUGIN_DATA", &plugin_data),
    ];
    assert_eq!(
        said(&plugin.run(&env)),
        "later hook stop\n{\"x\": \"it's\"}"
    );
}

#[test]
fn a_planted_binary_in_a_relative_path_entry_never_runs() {
    let plugin = Plugin::new();
    plugin.fake("plugin/scripts/bin/pagent", "planted");
    // PATH entries that are empty or relative name the current folder: skipped.
    let out = Command::new(plugin.path("plugin/scripts/pagent"))
        .args(["hook", "stop"])
        .env_clear()
        .env("HOME", plugin.path("home"))
        .env("PATH", ":bin:/usr/bin:/bin")
        .current_dir(plugin.path("plugin/scripts"))
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    assert!(out.stdout.is_empty(), "{out:?}");
}

#[test]
fn the_common_cases_resolve_nothing() {
    // Traced with `sh -x`: an installed binary (or PAGENT_BIN, or a checkout's build) is
    // run without the path resolution of the careful path, which costs subshells.
    let plugin = Plugin::new();
    plugin.fake("plugin-data/bin/pagent", "plugin-data");
    let plugin_data = plugin.path("plugin-data");
    let out = Command::new("sh")
        .arg("-x")
        .arg(plugin.path("plugin/scripts/pagent"))
        .args(["hook", "stop"])
        .env_clear()
        .env("HOME", plugin.path("home"))
        .env("PATH", "/usr/bin:/bin")
        .env("CLAUDE_PLUGIN_DATA", &plugin_data)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "plugin-data hook stop\n"
    );
    let trace = String::from_utf8_lossy(&out.stderr);
    assert!(!trace.contains("pagent_resolve"), "{trace}");
    assert!(!trace.contains("pwd -P"), "{trace}");
    // Only PATH is left: now it resolves, and still finds the binary.
    fs::remove_file(plugin.path("plugin-data/bin/pagent")).unwrap();
    plugin.fake("on-path/pagent", "path");
    let out = Command::new("sh")
        .arg("-x")
        .arg(plugin.path("plugin/scripts/pagent"))
        .args(["hook", "stop"])
        .env_clear()
        .env("HOME", plugin.path("home"))
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", plugin.path("on-path").display()),
        )
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert_eq!(String::from_utf8_lossy(&out.stdout), "path hook stop\n");
    assert!(String::from_utf8_lossy(&out.stderr).contains("pagent_resolve"));
}

/// Issue 34: a plugin installed from a marketplace, with no binary yet. Every hook allows
/// and says one line on stderr, which Claude Code shows no one for a hook that exits 0;
/// the expansion of one of pagent's slash commands, the hook a user meets first, answers
/// with the same line as a block, which Claude Code shows on screen (and sends nothing to
/// the model). The line names the command that installs the binary.
#[test]
fn issue_34_without_the_binary_a_slash_command_is_answered_with_the_install_command() {
    let plugin = Plugin::new();
    let mut said = Said::new();
    for hook in ["user-prompt-expansion", "stop", "post-tool-use"] {
        let out = plugin.run_hook(hook, &[]);
        assert_eq!(out.status.code(), Some(0), "{hook}: {out:?}");
        let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(stderr.lines().count(), 1, "{hook}: {stderr}");
        let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
        if hook == "user-prompt-expansion" {
            let answer: serde_json::Value = serde_json::from_str(&stdout).unwrap();
            assert_eq!(answer["decision"], "block", "{stdout}");
            assert!(
                stderr.starts_with(answer["reason"].as_str().unwrap()),
                "{stderr}"
            );
        } else {
            assert!(stdout.is_empty(), "{hook}: {stdout}");
        }
        said.say(&format!("hook {hook} (stdout)"), &stdout);
        said.say(&format!("hook {hook} (stderr)"), &stderr);
    }
    assert_text!(said.text());
}

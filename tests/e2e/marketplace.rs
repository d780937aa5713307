//! The Claude Code plugin marketplace route, end to end (issue 34), as a user takes it
//! after the first release: this repository added as a marketplace with Claude Code's
//! own command, the plugin installed from it, and no pagent binary anywhere. The user's
//! first pagent command is answered on screen with one line naming the command that
//! installs the binary; that command, typed as shown, installs it (from a local npm
//! registry holding the release's packages, `registry.rs`); the same command typed again
//! in the same session then runs a loop through the plugin's hooks.
//!
//! The repository is served over `file://` from a git repository of this working tree
//! (tracked and new files, so what is tested is what is about to be committed): the
//! marketplace is added by the address in Cargo.toml, the one setting, and the test's
//! HOME has git read that address from the local repository (`url.<local>.insteadOf`),
//! so the command is the one the docs show, and nothing leaves the machine.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use crate::harness::{E2e, claude_binary, repo_root};
use crate::mock::Reply;
use crate::npm::pack;
use crate::registry::NpmRegistry;
use crate::tmux::Tmux;

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

/// The repository's address: Cargo.toml's `repository`.
pub fn repository() -> String {
    let text = fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    let manifest: toml::Table = text.parse().unwrap();
    manifest["workspace"]["package"]["repository"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("GIT_AUTHOR_NAME", "pagent e2e")
        .env("GIT_AUTHOR_EMAIL", "e2e@example.invalid")
        .env("GIT_COMMITTER_NAME", "pagent e2e")
        .env("GIT_COMMITTER_EMAIL", "e2e@example.invalid")
        .output()
        .unwrap();
    check(&format!("git {args:?}"), &out)
}

/// A bare git repository at `dest` holding this working tree's files as one commit.
pub fn repository_of_this_tree(dest: &Path) {
    let tree = dest.with_extension("tree");
    let listed = git(
        &repo_root(),
        &[
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ],
    );
    for rel in listed.split('\0').filter(|r| !r.is_empty()) {
        let from = repo_root().join(rel);
        // A file deleted in the working tree but still in the index is not there.
        let Ok(meta) = fs::symlink_metadata(&from) else {
            continue;
        };
        let to = tree.join(rel);
        fs::create_dir_all(to.parent().unwrap()).unwrap();
        if meta.is_file() {
            fs::copy(&from, &to).unwrap();
        }
    }
    git(&tree, &["init", "-q", "-b", "main"]);
    git(&tree, &["add", "-A"]);
    git(&tree, &["commit", "-q", "-m", "pagent"]);
    git(
        &tree,
        &["clone", "-q", "--bare", ".", dest.to_str().unwrap()],
    );
}

/// `claude ARGS` outside the session, as a person types it in a terminal.
fn claude(e2e: &E2e, args: &[&str]) -> String {
    let out = Command::new(claude_binary())
        .args(args)
        .current_dir(&e2e.project)
        .env("HOME", &e2e.home)
        .env("PATH", "/usr/bin:/bin")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .output()
        .unwrap();
    check(&format!("claude {args:?}"), &out)
}

/// The command between backticks after `run ` in what the screen shows.
fn command_named(screen: &str) -> String {
    let flat = crate::tmux::flat(screen);
    let after = flat
        .split("run `")
        .nth(1)
        .unwrap_or_else(|| panic!("no command named on screen:\n{screen}"));
    after.split('`').next().unwrap().to_owned()
}

/// The line the user sees for a pagent command typed before the binary is installed.
const NO_BINARY: &str = "pagent: the pagent binary is not installed, so nothing was done: \
                         run `npx pagent install` in a terminal to install it, then try again.";

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI, npm, git and tmux (scripts/test.sh runs it)"]
fn issue_34_from_a_git_marketplace_the_user_is_told_the_install_command_and_then_hooks_work() {
    let e2e = E2e::start(vec![
        Reply::text("Working on it."),
        Reply::text("Done.\n<promise>DONE</promise>"),
    ]);
    let base = e2e.home.parent().unwrap().to_path_buf();
    let served = base.join("pagent.git");
    repository_of_this_tree(&served);
    let address = format!("{}.git", repository());
    fs::write(
        e2e.home.join(".gitconfig"),
        format!(
            "[url \"file://{}\"]\n\tinsteadOf = {address}\n",
            served.display()
        ),
    )
    .unwrap();

    add_the_git_marketplace(&e2e, &address);
    let data_bin = e2e
        .home
        .join(".claude/plugins/data/pagent-pagent/bin/pagent");
    assert!(!data_bin.exists());

    // The user's first pagent command, in an 80x24 terminal: one line on screen naming
    // the command that installs the binary, and nothing sent to the model.
    let ui = Tmux::start_as_set_up(&e2e, 80, 24);
    ui.type_line("/pagent:ralph Fix the parser --max-iterations 3");
    let screen = ui.wait_for(NO_BINARY);
    assert_eq!(e2e.mock.requests().len(), 0, "{screen}");
    let command = command_named(&screen);
    assert_eq!(command, "npx pagent install");

    // That command, typed as shown, with the release's packages in the registry.
    let registry = NpmRegistry::serve(&pack(&base));
    let out = typed_in_a_terminal(&e2e, &command, &base, &registry.url);
    let said = check(&command, &out);
    assert!(
        said.contains(&format!("marketplace pagent: yours, from {address}, kept")),
        "{said}"
    );
    assert!(
        said.contains("plugin pagent@pagent: installed from it, kept"),
        "{said}"
    );
    assert_eq!(
        fs::read(&data_bin).unwrap(),
        fs::read(crate::harness::pagent_bin()).unwrap()
    );
    assert!(
        registry
            .requests()
            .iter()
            .any(|r| r.starts_with("/-/pagent-")),
        "npx took nothing from the registry: {:?}",
        registry.requests()
    );

    // The same command again, in the same session: the plugin's hooks now run the binary.
    ui.type_line("/pagent:ralph Fix the parser --max-iterations 3");
    ui.wait_for("pagent: started a Ralph loop: up to 3 iterations");
    ui.wait_for("Stop says: pagent: ralph complete");
    assert_eq!(e2e.mock.requests().len(), 2);
    assert_eq!(e2e.status()["status"], "complete");
    let listed: serde_json::Value =
        serde_json::from_str(&claude(&e2e, &["plugin", "list", "--json"])).unwrap();
    let pagents: Vec<&serde_json::Value> = listed
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["id"].as_str().unwrap().starts_with("pagent@"))
        .collect();
    assert_eq!(pagents.len(), 1, "one pagent plugin: {listed}");
}

/// As the docs say, in a terminal: the marketplace, then the plugin from it (since
/// 2.1.275 both in one command); Claude Code then lists the plugin.
fn add_the_git_marketplace(e2e: &E2e, address: &str) {
    if crate::harness::claude_at_least("2.1.275") {
        claude(
            e2e,
            &["plugin", "install", "pagent", "--marketplace", address],
        );
    } else {
        claude(e2e, &["plugin", "marketplace", "add", address]);
        claude(e2e, &["plugin", "install", "pagent@pagent"]);
    }
    let listed: serde_json::Value =
        serde_json::from_str(&claude(e2e, &["plugin", "list", "--json"])).unwrap();
    assert!(
        listed.to_string().contains(r#""id":"pagent@pagent""#),
        "{listed}"
    );
}

/// `command` run by a shell in the project, with node and claude on PATH and npm pointed
/// at `registry`, as a user's terminal would run it.
fn typed_in_a_terminal(e2e: &E2e, command: &str, base: &Path, registry: &str) -> Output {
    let node_dir = which("npx").parent().unwrap().to_path_buf();
    let claude_dir = claude_binary().parent().unwrap().to_path_buf();
    Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(&e2e.project)
        .env("HOME", &e2e.home)
        .env(
            "PATH",
            format!(
                "{}:{}:/usr/bin:/bin",
                node_dir.display(),
                claude_dir.display()
            ),
        )
        .env("npm_config_registry", registry)
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
        .unwrap()
}

/// The absolute path of `program` on this process's PATH.
fn which(program: &str) -> PathBuf {
    std::env::split_paths(&std::env::var_os("PATH").unwrap())
        .map(|dir| dir.join(program))
        .find(|path| path.is_file())
        .unwrap_or_else(|| panic!("{program} is not on PATH"))
}

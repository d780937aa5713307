//! A release before its tag (issue 34): everything the release workflow publishes, made
//! and checked here, with nothing sent anywhere.
//!
//! - crates.io: the crates as `cargo package` packs them, served as a local registry (a
//!   directory source of those packages and every dependency of the lock file, `cargo
//!   vendor`), then `cargo install --locked pagent` as a user types it, offline; the
//!   installed binary sets Claude Code up from the plugin it carries, and a loop runs;
//! - the whole of `scripts/publish.sh --dry-run`: the set of packages and archives, the
//!   sums, the Homebrew formula (valid Ruby, its sums the archives', its install and test
//!   run here), crates.io's dry run and npm's, on this machine's real packages plus
//!   stand-ins for the platforms built on the workflow's other runners; and that
//!   cargo-binstall's address for this machine is the archive the release packs.
//!
//! They need no Claude Code version of their own: scripts/test.sh runs them once.

use std::fs;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use sha2::{Digest, Sha256};

use crate::harness::{E2e, claude_binary, repo_root};
use crate::mock::Reply;
use crate::registry::NpmRegistry;

fn check(what: &str, out: &Output) -> String {
    assert!(
        out.status.success(),
        "{what}: {}\n--- stdout ---\n{}\n--- stderr ---\n{}",
        out.status,
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn sha256_hex(path: &Path) -> String {
    Sha256::digest(fs::read(path).unwrap())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A directory source holding what `cargo install pagent` needs: every package of the
/// lock file (`cargo vendor`, from cargo's cache: offline) and the workspace's crates as
/// `cargo package` packed them, each unpacked with the checksum of its `.crate`.
fn local_registry(base: &Path) -> PathBuf {
    let source = base.join("registry");
    let out = Command::new(env!("CARGO"))
        .args(["vendor", "--locked", "--offline", "--versioned-dirs"])
        .arg(&source)
        .current_dir(repo_root())
        .output()
        .unwrap();
    check(
        "cargo vendor (the lock file's packages must be in cargo's cache: cargo fetch --locked)",
        &out,
    );
    let packed = base.join("package-target");
    let out = Command::new(env!("CARGO"))
        .args([
            "package",
            "--workspace",
            "--no-verify",
            "--locked",
            "--offline",
            "--allow-dirty",
            "--target-dir",
        ])
        .arg(&packed)
        .current_dir(repo_root())
        .output()
        .unwrap();
    check("cargo package", &out);
    for entry in fs::read_dir(packed.join("package")).unwrap() {
        let crate_file = entry.unwrap().path();
        if crate_file.extension().is_none_or(|e| e != "crate") {
            continue;
        }
        let out = Command::new("tar")
            .arg("-xzf")
            .arg(&crate_file)
            .arg("-C")
            .arg(&source)
            .output()
            .unwrap();
        check("tar", &out);
        let dir = source.join(crate_file.file_stem().unwrap());
        fs::write(
            dir.join(".cargo-checksum.json"),
            format!(
                r#"{{"files":{{}},"package":"{}"}}"#,
                sha256_hex(&crate_file)
            ),
        )
        .unwrap();
    }
    source
}

/// Issue 34: `cargo install --locked pagent` from the packaged crates, offline, as a user
/// types it once pagent is on crates.io: it builds, the binary says its version, and with
/// no plugin folder beside it `pagent install` sets Claude Code up from the plugin it
/// carries; a Ralph loop then runs through the short name.
///
/// The build keeps the release profile's name but not its cost (no LTO, no
/// optimisation, through `CARGO_PROFILE_RELEASE_*`): what is proven is that the published
/// crates and their dependencies build into a working pagent, not the optimiser.
#[test]
#[ignore = "end-to-end: needs cargo's cache of the lock file's packages and the Claude Code CLI (scripts/test.sh runs it)"]
fn issue_34_cargo_install_pagent_from_the_packaged_crates_works_offline() {
    let e2e = E2e::start(vec![
        Reply::text("Working on it."),
        Reply::text("All done.\n<promise>DONE</promise>"),
    ]);
    let base = e2e.home.parent().unwrap().to_path_buf();
    let source = local_registry(&base);
    let cargo_home = base.join("cargo-home");
    fs::create_dir_all(&cargo_home).unwrap();
    fs::write(
        cargo_home.join("config.toml"),
        format!(
            "[source.crates-io]\nreplace-with = \"local\"\n\n[source.local]\ndirectory = \"{}\"\n\n[net]\noffline = true\n",
            source.display()
        ),
    )
    .unwrap();
    let command = "cargo install --locked pagent";
    let out = Command::new("sh")
        .arg("-c")
        .arg(command)
        .current_dir(&base)
        .env("CARGO_HOME", &cargo_home)
        .env("CARGO_TARGET_DIR", base.join("install-target"))
        .env("CARGO_PROFILE_RELEASE_LTO", "false")
        .env("CARGO_PROFILE_RELEASE_OPT_LEVEL", "0")
        .env("CARGO_PROFILE_RELEASE_CODEGEN_UNITS", "256")
        .env("CARGO_PROFILE_RELEASE_DEBUG", "false")
        .env("PATH", cargo_path())
        .env_remove("RUSTFLAGS")
        .output()
        .unwrap();
    check(command, &out);
    let pagent = cargo_home.join("bin/pagent");
    let out = Command::new(&pagent).arg("--version").output().unwrap();
    let said = check("pagent --version", &out);
    assert_eq!(
        said.trim(),
        format!(
            "pagent {} ({})",
            env!("CARGO_PKG_VERSION"),
            env!("PAGENT_TARGET")
        )
    );

    let claude_dir = claude_binary().parent().unwrap().to_path_buf();
    let out = Command::new(&pagent)
        .arg("install")
        .env("HOME", &e2e.home)
        .env("PATH", format!("{}:/usr/bin:/bin", claude_dir.display()))
        .env("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")
        .env("DISABLE_AUTOUPDATER", "1")
        .env_remove("CLAUDE_CONFIG_DIR")
        .env_remove("XDG_DATA_HOME")
        .env_remove("PAGENT_MARKETPLACE_DIR")
        .env_remove("PAGENT_PLUGIN_SOURCE")
        .output()
        .unwrap();
    let said = check("pagent install", &out);
    assert!(said.contains("plugin pagent@pagent: installed"), "{said}");
    let staged = e2e.home.join(".local/share/pagent/marketplace");
    let out = Command::new(claude_binary())
        .args(["plugin", "validate", "--strict"])
        .arg(&staged)
        .env("HOME", &e2e.home)
        .output()
        .unwrap();
    check("claude plugin validate --strict (the staged plugin)", &out);
    let run = e2e
        .claude("/ralph Finish the task --max-iterations 3")
        .plugin_dir(None)
        .env_remove("PAGENT_BIN")
        .env("PATH", "/usr/bin:/bin")
        .run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 2);
    assert_eq!(e2e.status()["status"], "complete");
}

/// The PATH with this cargo's folder first (rustup's proxies, or the toolchain's own).
fn cargo_path() -> String {
    let cargo = PathBuf::from(env!("CARGO"));
    format!(
        "{}:{}",
        cargo.parent().unwrap().display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

/// Stand-ins for what the workflow's other runners build: the npm package and the
/// archive of `platform` (`target`), each holding a text where the binary would be.
fn stand_in(base: &Path, platform: &str, target: &str, version: &str) {
    let (os, cpu) = platform.split_once('-').unwrap();
    let exe = if os == "win32" {
        "pagent.exe"
    } else {
        "pagent"
    };
    let package = base.join(format!("stand-in/pagent-{platform}"));
    fs::create_dir_all(package.join("bin")).unwrap();
    fs::write(
        package.join("bin").join(exe),
        format!("a stand-in for the {target} build\n"),
    )
    .unwrap();
    let manifest = serde_json::json!({
        "name": format!("pagent-{platform}"), "version": version, "license": "MIT",
        "description": "a stand-in", "os": [os], "cpu": [cpu], "files": [format!("bin/{exe}")],
    });
    fs::write(package.join("package.json"), manifest.to_string()).unwrap();
    let out = Command::new("npm")
        .args(["pack", "--silent", "--pack-destination"])
        .arg(base.join("npm/dist"))
        .current_dir(&package)
        .output()
        .unwrap();
    check("npm pack", &out);
    let name = format!("pagent-{version}-{target}");
    let tree = base.join("stand-in/archives");
    fs::create_dir_all(tree.join(&name)).unwrap();
    fs::write(tree.join(&name).join(exe), "a stand-in\n").unwrap();
    let out = Command::new("tar")
        .arg("-C")
        .arg(&tree)
        .arg("-czf")
        .arg(base.join(format!("npm/archives/{name}.tar.gz")))
        .arg(&name)
        .output()
        .unwrap();
    check("tar", &out);
}

/// A whole release in `base/npm` (`dist/`, `archives/`): this machine's packages, packed
/// by scripts/release.sh, and stand-ins for every other platform of its matrix.
fn whole_release(base: &Path) {
    crate::npm::pack(base);
    let matrix = Command::new(repo_root().join("scripts/release.sh"))
        .arg("--matrix")
        .output()
        .unwrap();
    for row in check("release.sh --matrix", &matrix).lines() {
        let mut words = row.split_whitespace();
        let (platform, target) = (words.next().unwrap(), words.next().unwrap());
        if target != env!("PAGENT_TARGET") {
            stand_in(base, platform, target, env!("CARGO_PKG_VERSION"));
        }
    }
}

/// `scripts/publish.sh --dry-run ARGS` on `base/npm`, sending nothing: npm's registry is
/// `registry` (an empty one of the test's, which records what npm asks: an address where
/// nothing listens costs npm a minute of retries per package), and no token is set (cargo
/// reads crates.io's index, as its dry run must, and uploads nothing).
fn publish_dry_run(base: &Path, registry: &NpmRegistry) -> Output {
    Command::new(repo_root().join("scripts/publish.sh"))
        .args(["--dry-run", "--out"])
        .arg(base.join("assets"))
        .arg(base.join("npm/dist"))
        .arg(base.join("npm/archives"))
        .env("npm_config_registry", &registry.url)
        .env_remove("NODE_AUTH_TOKEN")
        .env_remove("CARGO_REGISTRY_TOKEN")
        .env_remove("HOMEBREW_TAP_TOKEN")
        .env_remove("GITHUB_REF_NAME")
        .env_remove("GITHUB_REPOSITORY")
        .output()
        .unwrap()
}

/// A binstall template (`{ name }` style) filled in.
fn fill(template: &str, values: &[(&str, &str)]) -> String {
    values
        .iter()
        .fold(template.to_owned(), |text, (key, value)| {
            text.replace(&format!("{{ {key} }}"), value)
        })
}

/// Issue 34: the whole of `scripts/publish.sh --dry-run`, as the release workflow runs it
/// on every pull request: the set checked whole, the archives' sums, the Homebrew formula
/// written from them and checked (valid Ruby, every sum the archive's, this platform's
/// archive installed and tested as Homebrew would), crates.io's dry run, npm's; nothing
/// sent. cargo-binstall's address for this platform is its archive, and the binary is
/// where binstall looks in it. A set missing an archive, or an archive changed after the
/// formula was written, is refused.
#[test]
#[ignore = "end-to-end: needs npm, ruby and cargo's cache (scripts/test.sh runs it)"]
fn issue_34_publish_dry_run_checks_the_whole_release_and_sends_nothing() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path();
    whole_release(base);
    let version = env!("CARGO_PKG_VERSION");
    let host = env!("PAGENT_TARGET");

    let registry = NpmRegistry::serve(&[]);
    let out = publish_dry_run(base, &registry);
    let said = check("scripts/publish.sh --dry-run", &out);
    assert_eq!(registry.sent(), Vec::<String>::new(), "npm sent something");
    for line in [
        format!("installed from pagent-{version}-{host}.tar.gz, and its test passed"),
        "publish-crates: dry run: every crate packed and built from its package; nothing was sent"
            .into(),
        format!("npm publish pagent-{version}.tgz --access public --dry-run"),
        format!("done: pagent {version} (dry run: nothing was sent)"),
    ] {
        assert!(said.contains(&line), "{line}:\n{said}");
    }
    let assets = base.join("assets");
    let sums = fs::read_to_string(assets.join("SHA256SUMS")).unwrap();
    assert_eq!(sums.lines().count(), 5, "{sums}");
    for line in sums.lines() {
        let (sum, name) = line.split_once("  ").unwrap();
        assert_eq!(sum, sha256_hex(&assets.join(name)), "{name}");
    }

    binstall_finds_this_platforms_archive(&assets, &sums);

    // An archive changed after the formula was written: its sum is refused.
    let changed = assets.join(format!("pagent-{version}-aarch64-apple-darwin.tar.gz"));
    fs::write(&changed, b"changed").unwrap();
    let out = Command::new("ruby")
        .arg(repo_root().join("scripts/check-formula.rb"))
        .arg(assets.join("pagent.rb"))
        .arg(&assets)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains(&format!(
            "the sha256 of pagent-{version}-aarch64-apple-darwin.tar.gz"
        )),
        "{out:?}"
    );
    // A set without one platform's archive is refused before anything else.
    fs::remove_file(base.join(format!(
        "npm/archives/pagent-{version}-x86_64-apple-darwin.tar.gz"
    )))
    .unwrap();
    let out = publish_dry_run(base, &registry);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "the release's archives are not whole: missing pagent-{version}-x86_64-apple-darwin.tar.gz"
        )),
        "{stderr}"
    );
    assert!(!stderr.contains("npm publish"), "{stderr}");
}

/// cargo-binstall: Cargo.toml's templates, filled for this platform, name the archive
/// the formula names, and the binary is at the path they give inside it.
fn binstall_finds_this_platforms_archive(assets: &Path, sums: &str) {
    let (version, host) = (env!("CARGO_PKG_VERSION"), env!("PAGENT_TARGET"));
    let manifest: toml::Table = fs::read_to_string(repo_root().join("Cargo.toml"))
        .unwrap()
        .parse()
        .unwrap();
    let binstall = &manifest["package"]["metadata"]["binstall"];
    let repository = manifest["workspace"]["package"]["repository"]
        .as_str()
        .unwrap();
    let values = [
        ("repo", repository),
        ("version", version),
        ("target", host),
        ("bin", "pagent"),
        ("binary-ext", ""),
    ];
    let url = fill(binstall["pkg-url"].as_str().unwrap(), &values);
    let formula = fs::read_to_string(assets.join("pagent.rb")).unwrap();
    assert!(
        formula.contains(&format!("url \"{url}\"")),
        "{url}\n{formula}"
    );
    let archive = assets.join(url.rsplit('/').next().unwrap());
    let listing = Command::new("tar")
        .arg("-tzf")
        .arg(&archive)
        .output()
        .unwrap();
    let bin_dir = fill(binstall["bin-dir"].as_str().unwrap(), &values);
    assert!(
        check("tar -tzf", &listing).lines().any(|l| l == bin_dir),
        "{bin_dir} is not in {}",
        archive.display()
    );
    let msvc = &binstall["overrides"]["x86_64-pc-windows-msvc"]["pkg-url"];
    let msvc = fill(msvc.as_str().unwrap(), &values);
    assert!(sums.contains(msvc.rsplit('/').next().unwrap()), "{msvc}");
}

/// Stand-ins for the registries' own clients, each appending what it was asked to
/// `$CALLS` and remembering what it published in `$STATE`, so a second run sees it there:
/// `gh` (the release), `npm` (`view` answers once published), `cargo` (`publish` says
/// "already exists" the second time; `metadata` is the real cargo's).
fn fake_clients(dir: &Path) {
    let cargo = PathBuf::from(env!("CARGO"));
    let scripts = [
        (
            "gh",
            "echo \"gh $*\" >> \"$CALLS\"\n\
             case \"$1 $2\" in\n\
             'release view') [ -e \"$STATE/release\" ] ;;\n\
             'release create') touch \"$STATE/release\" ;;\n\
             esac"
                .to_owned(),
        ),
        (
            "npm",
            "echo \"npm $*\" >> \"$CALLS\"\n\
             case \"$1\" in\n\
             --version) echo 11.6.0 ;;\n\
             config) echo http://127.0.0.1:9/ ;;\n\
             view) [ -e \"$STATE/npm-$2\" ] && echo \"${2##*@}\" ;;\n\
             publish) name=$(tar -xzOf \"$2\" package/package.json | sed -n 's/.*\"name\": *\"\\([^\"]*\\)\".*/\\1/p' | head -n 1)\n\
               version=$(tar -xzOf \"$2\" package/package.json | sed -n 's/.*\"version\": *\"\\([^\"]*\\)\".*/\\1/p' | head -n 1)\n\
               touch \"$STATE/npm-$name@$version\" ;;\n\
             esac"
                .to_owned(),
        ),
        (
            "cargo",
            format!(
                "case \"$1\" in metadata) exec '{}' \"$@\" ;; esac\n\
                 echo \"cargo $*\" >> \"$CALLS\"\n\
                 if [ -e \"$STATE/crate-$4\" ]; then echo \"error: crate $4 already exists on the index\" >&2; exit 101; fi\n\
                 touch \"$STATE/crate-$4\"",
                cargo.display()
            ),
        ),
    ];
    fs::create_dir_all(dir).unwrap();
    for (name, body) in scripts {
        let path = dir.join(name);
        fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
        use std::os::unix::fs::PermissionsExt;
        fs::set_permissions(&path, fs::Permissions::from_mode(0o755)).unwrap();
    }
}

/// Issue 34: the real run of `scripts/publish.sh`, as the workflow starts it on a tag,
/// against stand-ins for `gh`, `npm` and `cargo` and a local git repository as the
/// Homebrew tap: in a clone whose repository is set (scripts/set-repository.sh), it makes
/// the GitHub release first (what the formula and binstall download), then crates.io in
/// dependency order, then every platform package before `pagent`, then the formula in the
/// tap; run again, as after a stop half-way, it sends nothing twice. A workflow of another
/// repository, and the placeholder address, are refused before anything is sent.
#[test]
#[ignore = "end-to-end: needs npm, ruby and git (scripts/test.sh runs it)"]
fn issue_34_a_real_publish_sends_each_registry_once_in_order() {
    let base = tempfile::tempdir().unwrap();
    let base = base.path();
    whole_release(base);
    let served = base.join("pagent.git");
    crate::marketplace::repository_of_this_tree(&served);
    let clone = base.join("clone");
    git_in(base, &["clone", "-q", served.to_str().unwrap(), "clone"]);
    let publish = |repository: &str, state: &Path| publish_in(base, repository, state);
    fake_clients(&base.join("fake"));
    let state = base.join("state");
    git_in(base, &["init", "-q", "--bare", "tap.git"]);

    // The placeholder address: refused before anything is sent.
    let out = publish("acme/pagent", &state);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("still the placeholder"),
        "{out:?}"
    );
    assert!(!base.join("calls").exists());

    let out = Command::new(clone.join("scripts/set-repository.sh"))
        .arg("https://github.com/acme/pagent")
        .current_dir(&clone)
        .output()
        .unwrap();
    check("set-repository.sh", &out);
    let out = publish("someone/else", &state);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    assert!(!base.join("calls").exists());

    check("scripts/publish.sh", &publish("acme/pagent", &state));
    let calls = fs::read_to_string(base.join("calls")).unwrap();
    let sent = sent_in_order(&calls);
    crates_then_packages(&sent, &calls);
    let tap = git_in(
        base,
        &["--git-dir", "tap.git", "show", "HEAD:Formula/pagent.rb"],
    );
    assert!(
        tap.contains("https://github.com/acme/pagent/releases/download/v"),
        "{tap}"
    );

    // Again, as after a stop half-way.
    fs::remove_file(base.join("calls")).unwrap();
    nothing_is_sent_twice(base, &publish("acme/pagent", &state));
}

/// `git ARGS` in `dir`, without the user's config: what it printed.
fn git_in(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .output()
        .unwrap();
    check(&format!("git {args:?}"), &out)
}

/// `scripts/publish.sh` of the clone, as the workflow of `repository` runs it on the tag,
/// with the stand-in clients, remembering what they published in `state`.
fn publish_in(base: &Path, repository: &str, state: &Path) -> Output {
    let clone = base.join("clone");
    fs::create_dir_all(state).unwrap();
    let home = base.join("home");
    fs::create_dir_all(&home).unwrap();
    fs::write(
        home.join(".gitconfig"),
        format!(
            "[url \"file://{}\"]\n\tinsteadOf = https://github.com/acme/homebrew-pagent.git\n",
            base.join("tap.git").display()
        ),
    )
    .unwrap();
    Command::new(clone.join("scripts/publish.sh"))
        .arg(base.join("npm/dist"))
        .arg(base.join("npm/archives"))
        .current_dir(&clone)
        .env(
            "PATH",
            format!("{}:/usr/bin:/bin", base.join("fake").display()),
        )
        .env("HOME", &home)
        .env("CALLS", base.join("calls"))
        .env("STATE", state)
        .env("GITHUB_REF_NAME", format!("v{}", env!("CARGO_PKG_VERSION")))
        .env("GITHUB_SERVER_URL", "https://github.com")
        .env("GITHUB_REPOSITORY", repository)
        .env("CARGO_REGISTRY_TOKEN", "a-token")
        .env("NODE_AUTH_TOKEN", "a-token")
        .env("HOMEBREW_TAP_TOKEN", "a-token")
        .env_remove("GIT_CONFIG_GLOBAL")
        .output()
        .unwrap()
}

/// What the stand-ins were asked to send, in order, each named by what it sent.
fn sent_in_order(calls: &str) -> Vec<String> {
    calls
        .lines()
        .filter_map(|line| {
            let words: Vec<&str> = line.split_whitespace().collect();
            match words.as_slice() {
                ["gh", "release", "create", tag, ..] => Some(format!("release {tag}")),
                ["cargo", "publish", .., name] => Some(format!("crate {name}")),
                ["npm", "publish", file, ..] => Some(format!(
                    "npm {}",
                    Path::new(file).file_name().unwrap().to_string_lossy()
                )),
                _ => None,
            }
        })
        .collect()
}

/// The release first, the crates in the order each one's dependencies are there before
/// it, then every platform package before `pagent`.
fn crates_then_packages(sent: &[String], calls: &str) {
    let version = env!("CARGO_PKG_VERSION");
    assert_eq!(
        &sent[..6],
        [
            format!("release v{}", env!("CARGO_PKG_VERSION")),
            "crate pagent-door".to_owned(),
            "crate pagent-engine".to_owned(),
            "crate pagent-protocol".to_owned(),
            "crate pagent-stories".to_owned(),
            "crate pagent".to_owned()
        ],
        "{calls}"
    );
    assert_eq!(sent.len(), 6 + 6, "{calls}");
    assert_eq!(sent[11], format!("npm pagent-{version}.tgz"), "{calls}");
    assert!(
        sent[6..11]
            .iter()
            .all(|s| s.starts_with("npm pagent-") && *s != format!("npm pagent-{version}.tgz")),
        "{calls}"
    );
    assert!(calls.lines().next().unwrap().starts_with("gh release view"));
}

/// A second publish (its calls log emptied) sends nothing twice, and the tap keeps one
/// commit.
fn nothing_is_sent_twice(base: &Path, again: &Output) {
    let version = env!("CARGO_PKG_VERSION");
    let said = check("scripts/publish.sh, again", again);
    let calls = fs::read_to_string(base.join("calls")).unwrap();
    assert!(
        !calls.contains("release create") && !calls.contains("npm publish"),
        "{calls}"
    );
    assert!(calls.contains("gh release upload"), "{calls}");
    for line in [
        "pagent-engine 0.1.0: published already, skipped".replace("0.1.0", version),
        format!("pagent@{version} is published already: skipped"),
        "has this formula already".to_owned(),
    ] {
        assert!(said.contains(&line), "{line}\n{said}");
    }
    assert_eq!(
        git_in(
            base,
            &["--git-dir", "tap.git", "rev-list", "--count", "HEAD"]
        )
        .trim(),
        "1"
    );
}

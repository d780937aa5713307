//! What `pagent install` decides before it touches Claude Code: where things go, what
//! counts as pagent's, what is staged.

use super::*;
use serde_json::json;

#[test]
fn only_empty_bookkeeping_counts_as_holding_nothing() {
    assert!(holds_nothing(&json!({})));
    assert!(holds_nothing(&json!({"version": 2, "plugins": {}})));
    assert!(holds_nothing(
        &json!({"enabledPlugins": {}, "extraKnownMarketplaces": {}})
    ));
    assert!(!holds_nothing(&json!({"enabledPlugins": {"x@y": true}})));
    assert!(!holds_nothing(&json!({"model": "opus"})));
    assert!(!holds_nothing(&json!({"version": "2"})));
}

#[test]
fn the_default_layout_follows_home_and_xdg() {
    let env = InstallEnv {
        home: Some("/h".into()),
        ..InstallEnv::default()
    };
    let layout = Layout::resolve(&env).unwrap();
    assert_eq!(
        layout.staging,
        Path::new("/h/.local/share/pagent/marketplace")
    );
    assert_eq!(
        layout.data_bin,
        Path::new("/h/.claude/plugins/data/pagent-pagent/bin/pagent")
    );
    assert_eq!(
        layout.record_file,
        Path::new("/h/.local/share/pagent/marketplace.record.json")
    );
    assert_eq!(
        &layout.may_create()[..3],
        [
            PathBuf::from("/h/.local"),
            PathBuf::from("/h/.local/share"),
            PathBuf::from("/h/.local/share/pagent")
        ]
    );
    let env = InstallEnv {
        home: Some("/h".into()),
        claude_config_dir: Some("/c".into()),
        xdg_data_home: Some("/d".into()),
        ..InstallEnv::default()
    };
    let layout = Layout::resolve(&env).unwrap();
    assert_eq!(layout.staging, Path::new("/d/pagent/marketplace"));
    assert_eq!(layout.commands_dir, Path::new("/c/commands"));
}

/// Issue 25 and issue 33 (no shell on the hot path): the staged plugin carries the binary
/// where its exec-form hooks start it: `scripts/pagent.exe` on Windows (the launcher
/// beside it is a shell script Windows cannot start), `scripts/pagent` itself elsewhere
/// (in place of the launcher: no shell before the binary); staging it again is no
/// change, a new binary is one.
#[test]
fn the_staged_plugin_carries_the_binary_the_hooks_start() {
    #![allow(clippy::disallowed_methods)] // a scratch folder of the test's own
    let tmp = tempfile::tempdir().unwrap();
    let dir = tmp.path().join("source");
    let source = PluginSource::Folder(dir.clone());
    for (rel, text) in [
        (".claude-plugin/marketplace.json", "{}"),
        ("hooks/hooks.json", "{}"),
        ("scripts/pagent", "#!/bin/sh\n"),
    ] {
        std::fs::create_dir_all(dir.join(rel).parent().unwrap()).unwrap();
        std::fs::write(dir.join(rel), text).unwrap();
    }
    let binary = tmp.path().join("pagent-built.exe");
    std::fs::write(&binary, b"MZ one build").unwrap();
    let staging = tmp.path().join("staging");

    assert!(stage_plugin(&source, &staging, Some(&binary)).unwrap());
    assert_eq!(
        std::fs::read(staging.join(HOOK_EXE)).unwrap(),
        b"MZ one build"
    );
    if cfg!(windows) {
        assert_eq!(
            std::fs::read(staging.join("scripts/pagent")).unwrap(),
            b"#!/bin/sh\n",
            "the launcher stays beside pagent.exe"
        );
    }
    assert!(owned(&staging));
    assert!(!stage_plugin(&source, &staging, Some(&binary)).unwrap());

    std::fs::write(&binary, b"MZ another build").unwrap();
    assert!(stage_plugin(&source, &staging, Some(&binary)).unwrap());
    assert_eq!(
        std::fs::read(staging.join(HOOK_EXE)).unwrap(),
        b"MZ another build"
    );
    // Without a binary the plugin's own files are staged: the launcher finds one.
    assert!(stage_plugin(&source, &staging, None).unwrap());
    assert_eq!(
        std::fs::read(staging.join("scripts/pagent")).unwrap(),
        b"#!/bin/sh\n"
    );
    assert_eq!(staging.join(HOOK_EXE).exists(), !cfg!(windows));
}

/// A binary with no plugin folder near it (`cargo install pagent`, Homebrew, a release
/// archive) stages the plugin it carries: the repository's plugin files, byte for byte,
/// the launcher executable, every command and the manifests among them.
#[test]
fn the_embedded_plugin_is_the_repositorys_plugin() {
    #![allow(clippy::disallowed_methods)] // a scratch folder of the test's own
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let exe = Path::new("/nowhere/bin/pagent");
    let source = plugin_source(None, &InstallEnv::default(), exe).unwrap();
    assert_eq!(source, PluginSource::Embedded);
    let tmp = tempfile::tempdir().unwrap();
    let staging = tmp.path().join("staging");
    assert!(stage_plugin(&source, &staging, None).unwrap());
    let staged = files::list_tree(&staging).unwrap();
    for rel in &staged {
        if rel == Path::new(MARKER) {
            continue;
        }
        assert_eq!(
            std::fs::read(staging.join(rel)).unwrap(),
            std::fs::read(repo.join(rel)).unwrap(),
            "{}",
            rel.display()
        );
    }
    let mut wanted: Vec<PathBuf> = [
        ".claude-plugin/plugin.json",
        ".claude-plugin/marketplace.json",
        "hooks/hooks.json",
        "scripts/pagent",
        "agents/ralph-worker.md",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    for entry in std::fs::read_dir(repo.join("commands")).unwrap() {
        wanted.push(Path::new("commands").join(entry.unwrap().file_name()));
    }
    for rel in &wanted {
        assert!(staged.contains(rel), "{} is not staged", rel.display());
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(staging.join("scripts/pagent"))
            .unwrap()
            .permissions()
            .mode();
        assert_eq!(mode & 0o111, 0o111, "the launcher is executable");
    }
    // Staging it again is no change.
    assert!(!stage_plugin(&source, &staging, None).unwrap());
}

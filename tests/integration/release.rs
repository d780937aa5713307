//! What a release publishes, as far as it is written in the repository (issue 34): the
//! repository's address is one setting that every manifest repeats exactly, the versions
//! agree, every published crate carries what crates.io asks for, and the plugin's
//! manifests carry what a marketplace listing asks for. The builds and the registries
//! themselves are proven by the end-to-end suite (`tests/e2e/release.rs`, `npm.rs`).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

fn repo() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn json(rel: &str) -> Value {
    serde_json::from_str(&std::fs::read_to_string(repo().join(rel)).unwrap()).unwrap()
}

/// `cargo metadata` of the workspace (inherited fields resolved), without dependencies.
fn metadata() -> Value {
    let out = Command::new(env!("CARGO"))
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    serde_json::from_slice(&out.stdout).unwrap()
}

/// The workspace's packages that crates.io gets (`publish = false` ones left out).
fn published(meta: &Value) -> Vec<&Value> {
    meta["packages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|p| p["publish"] != serde_json::json!([]))
        .collect()
}

fn the_pagent_package(meta: &Value) -> &Value {
    published(meta)
        .into_iter()
        .find(|p| p["name"] == "pagent")
        .unwrap()
}

/// Cargo.toml's `repository` is the setting; the plugin manifests, which Claude Code reads
/// as they are, repeat it exactly (scripts/set-repository.sh writes all of them).
#[test]
fn issue_34_the_repository_is_one_setting_that_every_manifest_repeats() {
    let meta = metadata();
    let repository = the_pagent_package(&meta)["repository"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(repository.starts_with("https://"), "{repository}");
    for package in published(&meta) {
        assert_eq!(
            package["repository"],
            repository.as_str(),
            "{}",
            package["name"]
        );
        assert_eq!(
            package["homepage"],
            repository.as_str(),
            "{}",
            package["name"]
        );
    }
    let plugin = json(".claude-plugin/plugin.json");
    let market = json(".claude-plugin/marketplace.json");
    let entry = &market["plugins"][0];
    for (what, value) in [
        ("plugin.json repository", &plugin["repository"]),
        ("plugin.json homepage", &plugin["homepage"]),
        ("plugin.json author.url", &plugin["author"]["url"]),
        ("marketplace.json owner.url", &market["owner"]["url"]),
        ("marketplace.json plugin repository", &entry["repository"]),
        ("marketplace.json plugin homepage", &entry["homepage"]),
        (
            "marketplace.json plugin author.url",
            &entry["author"]["url"],
        ),
    ] {
        assert_eq!(value, repository.as_str(), "{what}");
    }
}

/// One version everywhere: the crates, the plugin, its marketplace entry, and the first
/// section of CHANGELOG.md (the release's notes).
#[test]
fn issue_34_every_manifest_and_the_changelog_name_one_version() {
    let meta = metadata();
    let version = the_pagent_package(&meta)["version"]
        .as_str()
        .unwrap()
        .to_owned();
    for package in published(&meta) {
        assert_eq!(package["version"], version.as_str(), "{}", package["name"]);
    }
    assert_eq!(
        json(".claude-plugin/plugin.json")["version"],
        version.as_str()
    );
    assert_eq!(
        json(".claude-plugin/marketplace.json")["plugins"][0]["version"],
        version.as_str()
    );
    let changelog = std::fs::read_to_string(repo().join("CHANGELOG.md")).unwrap();
    let first = changelog
        .lines()
        .find(|l| l.starts_with("## "))
        .expect("CHANGELOG.md has a section per release");
    assert_eq!(
        first,
        format!("## {version}"),
        "CHANGELOG.md starts with {first}"
    );
}

/// Category slugs crates.io knows (its `src/boot/categories.toml`, read 2026-11-27),
/// among them every one the crates use; an unknown one is refused at publication, which
/// no dry run sees.
const CATEGORIES: &[&str] = &[
    "command-line-utilities",
    "development-tools",
    "development-tools::testing",
    "filesystem",
    "os",
    "parser-implementations",
    "text-processing",
];

/// What crates.io shows and asks for, on every crate it gets: a description, a license,
/// the repository, a readme that is in the package, keywords and categories it accepts.
#[test]
fn issue_34_every_published_crate_carries_what_crates_io_asks_for() {
    let meta = metadata();
    let crates = published(&meta);
    assert!(crates.len() >= 3, "{} crates", crates.len());
    for package in crates {
        let name = package["name"].as_str().unwrap();
        for field in ["description", "license", "repository", "homepage", "readme"] {
            assert!(
                package[field].as_str().is_some_and(|v| !v.is_empty()),
                "{name} has no {field}"
            );
        }
        let dir = Path::new(package["manifest_path"].as_str().unwrap())
            .parent()
            .unwrap();
        let readme = dir.join(package["readme"].as_str().unwrap());
        assert!(
            readme.starts_with(dir) && readme.is_file(),
            "{name}: {}",
            readme.display()
        );
        let keywords = package["keywords"].as_array().unwrap();
        assert!((1..=5).contains(&keywords.len()), "{name}: {keywords:?}");
        for keyword in keywords {
            let keyword = keyword.as_str().unwrap();
            assert!(
                keyword.len() <= 20
                    && keyword.starts_with(|c: char| c.is_ascii_alphabetic())
                    && keyword
                        .chars()
                        .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_'),
                "{name}: keyword {keyword:?}"
            );
        }
        let categories = package["categories"].as_array().unwrap();
        assert!((1..=5).contains(&categories.len()), "{name}");
        for category in categories {
            assert!(
                CATEGORIES.contains(&category.as_str().unwrap()),
                "{name}: category {category}"
            );
        }
    }
}

/// What a marketplace listing shows: the plugin and its marketplace entry each name the
/// repository (checked above), a homepage, a license, keywords and an author; the entry
/// also says where the binary comes from, which the plugin cannot bring by itself.
#[test]
fn issue_34_the_plugin_manifests_carry_what_a_listing_asks_for() {
    let plugin = json(".claude-plugin/plugin.json");
    let entry = json(".claude-plugin/marketplace.json")["plugins"][0].clone();
    for (what, manifest) in [("plugin.json", &plugin), ("marketplace.json", &entry)] {
        assert_eq!(manifest["name"], "pagent", "{what}");
        assert_eq!(manifest["license"], "MIT", "{what}");
        assert!(
            manifest["author"]["name"]
                .as_str()
                .is_some_and(|n| !n.is_empty()),
            "{what}"
        );
        assert!(
            manifest["keywords"]
                .as_array()
                .is_some_and(|k| !k.is_empty()),
            "{what}"
        );
        assert!(
            manifest["description"]
                .as_str()
                .is_some_and(|d| d.contains("npx pagent install")),
            "{what}: the description names the binary's install"
        );
    }
    assert_eq!(entry["source"], "./");
}

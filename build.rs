//! Link settings for the `pagent` binary, the target it is built for, and the plugin's
//! files it carries.
//!
//! The hook runs on every Stop and every tool call, so its start-up is most of its cost.
//! Lazy symbol binding lets the dynamic loader resolve only the symbols a run uses
//! (Rust links with `-z now` by default, resolving all of them up front): about 0.1 ms
//! per call, measured in BENCHMARKS.md. The binary stays position-independent.
//!
//! `PAGENT_TARGET` is the Rust target triple (`aarch64-apple-darwin`, ...): `pagent
//! --version` says it, so a user (and `scripts/release.sh`, which checks every binary it
//! packs) can tell which platform's build is installed; the tests compare it too.
//!
//! The plugin's files (its manifests, hooks, commands, agent, the hooks' launcher) are
//! compiled in as `$OUT_DIR/plugin_files.rs`, so that a binary with no plugin folder
//! beside it (`cargo install pagent`, Homebrew, a release archive) still sets Claude
//! Code up with `pagent install`, with the plugin of its own version. The list is made
//! from the folders here, so a new command is carried without a change to this file.

#![forbid(unsafe_code)]
// Cargo speaks to a build script through its environment (TARGET, OUT_DIR): the binary's
// one-place rule for the environment (cli/env.rs) is about the binary, not its build.
#![allow(clippy::disallowed_methods)]

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

/// Folders whose files make the plugin, and single files of it, relative to the package.
const PLUGIN_DIRS: &[&str] = &[".claude-plugin", "hooks", "commands", "agents"];
const PLUGIN_FILES: &[&str] = &["scripts/pagent", "README.md", "LICENSE"];

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,lazy");
    }
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_owned());
    println!("cargo:rustc-env=PAGENT_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
    embed_plugin();
}

/// Writes `plugin_files.rs`: `FILES`, each file's path in the plugin (with `/`) and its
/// bytes, sorted by path.
// A build script reads the package's own files when it is built; the door is for a
// project's files when pagent runs. A failure here is the build's message.
#[allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::panic,
    clippy::disallowed_methods
)]
fn embed_plugin() {
    let root = PathBuf::from(std::env::var("CARGO_MANIFEST_DIR").unwrap());
    let mut files: Vec<String> = Vec::new();
    for dir in PLUGIN_DIRS {
        println!("cargo:rerun-if-changed={dir}");
        let mut names: Vec<String> = std::fs::read_dir(root.join(dir))
            .unwrap_or_else(|e| panic!("cannot read the plugin folder {dir}: {e}"))
            .map(|entry| entry.unwrap())
            .filter(|entry| entry.file_type().unwrap().is_file())
            .map(|entry| format!("{dir}/{}", entry.file_name().to_string_lossy()))
            .collect();
        names.sort();
        files.extend(names);
    }
    for file in PLUGIN_FILES {
        println!("cargo:rerun-if-changed={file}");
        assert!(
            root.join(file).is_file(),
            "the plugin file {file} is missing"
        );
        files.push((*file).to_owned());
    }
    files.sort();
    let mut out = String::from("pub const FILES: &[(&str, &[u8])] = &[\n");
    for file in &files {
        let path = root.join(Path::new(file));
        writeln!(out, "    ({file:?}, include_bytes!({:?})),", path.display()).unwrap();
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var("OUT_DIR").unwrap()).join("plugin_files.rs");
    std::fs::write(dest, out).expect("cannot write plugin_files.rs");
}

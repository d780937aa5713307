//! pagent's own files in a test's project, read as a test reads them: the event log (the
//! record of what every hook and runner decided, which a test asserts on instead of
//! timing), and the binary under test. The suites' harnesses build their project
//! helpers on these, so the paths and the parsing exist once.

use std::path::{Path, PathBuf};

use serde_json::Value;

/// The event log, relative to the project.
pub const EVENT_LOG: &str = ".claude/pagent/events.jsonl";

/// Every event of the project's log, in order (none when there is no log yet).
pub fn events(project: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(project.join(EVENT_LOG)).unwrap_or_default();
    text.lines()
        .map(|line| {
            serde_json::from_str(line).unwrap_or_else(|e| panic!("{EVENT_LOG}: {e}: {line}"))
        })
        .collect()
}

/// The `action` of every event, in order: what a test usually asserts on.
pub fn actions(project: &Path) -> Vec<String> {
    events(project)
        .iter()
        .map(|event| event["action"].as_str().unwrap_or_default().to_owned())
        .collect()
}

/// Every path under `project` (its `.git` left out), relative, in walk order: what a
/// failing test shows of the project.
pub fn files(project: &Path) -> Vec<String> {
    walkdir::WalkDir::new(project)
        .into_iter()
        .filter_entry(|e| e.file_name() != ".git")
        .flatten()
        .map(|entry| {
            let path = entry.path();
            path.strip_prefix(project)
                .unwrap_or(path)
                .display()
                .to_string()
        })
        .collect()
}

/// The npm platform (`process.platform`-`process.arch`) of a Rust target: the package
/// scripts/release.sh packs for it.
pub fn npm_platform(target: &str) -> &'static str {
    match target {
        "x86_64-unknown-linux-gnu" => "linux-x64",
        "aarch64-unknown-linux-gnu" => "linux-arm64",
        "aarch64-apple-darwin" => "darwin-arm64",
        "x86_64-apple-darwin" => "darwin-x64",
        other => panic!("no npm platform for {other}"),
    }
}

/// Whether the binary under test is the Windows build (under Wine: `scripts/test.sh` sets
/// `PAGENT_TEST_WINDOWS=1` beside `PAGENT_TEST_BIN`), which names paths the Windows way.
pub fn testing_windows_bin() -> bool {
    std::env::var_os("PAGENT_TEST_WINDOWS").is_some_and(|v| v == "1")
}

/// The binary under test: `$PAGENT_TEST_BIN` (another build of the same source, e.g. the
/// static one scripts/install.sh makes, or the arm64 one under qemu), else `built`, the
/// one cargo built for the suite (its `CARGO_BIN_EXE_pagent`).
pub fn pagent_bin(built: &str) -> PathBuf {
    std::env::var_os("PAGENT_TEST_BIN").map_or_else(|| PathBuf::from(built), PathBuf::from)
}

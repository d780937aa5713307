//! Issue 31, item 6: a guard for a source file that nothing declares. Cargo compiles the
//! modules a crate root reaches through `mod NAME;` and silently skips every other file:
//! a test file added without its `mod` line never runs, and passes. Every `.rs` file under
//! `crates/` and `tests/` is reached from a root here, or the test fails naming it.

use std::collections::BTreeSet;
use std::fs;
use std::path::{Path, PathBuf};

use super::scan::blank_comments_and_literals;

/// The roots cargo starts from (the manifests' `lib`, `bin`, `test` and `build` paths);
/// each file directly in a member crate's `tests/` is one too (cargo finds them itself).
const ROOTS: &[&str] = &[
    "build.rs",
    "crates/cli/lib.rs",
    "crates/cli/main.rs",
    "crates/door/src/lib.rs",
    "crates/engine/build.rs",
    "crates/engine/src/lib.rs",
    "crates/protocol/src/lib.rs",
    "crates/stories/src/lib.rs",
    "tests/support/lib.rs",
    "tests/integration/main.rs",
    "tests/e2e/main.rs",
];

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The files `file` declares: `mod NAME;` (any visibility and attributes), or the file a
/// `#[path = "..."]` before it names.
fn declared_by(file: &Path) -> Vec<PathBuf> {
    let raw = fs::read_to_string(file).unwrap();
    let text = blank_comments_and_literals(&raw);
    let (raw_lines, lines): (Vec<&str>, Vec<&str>) =
        (raw.lines().collect(), text.lines().collect());
    let dir = file.parent().unwrap();
    let stem = file.file_stem().unwrap().to_string_lossy();
    let own_dir = if ["mod", "lib", "main"].contains(&stem.as_ref()) {
        dir.to_path_buf()
    } else {
        dir.join(stem.as_ref())
    };
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(name) = mod_name(line) else { continue };
        let path_attr = i
            .checked_sub(1)
            .and_then(|j| raw_lines[j].trim().strip_prefix("#[path = \""))
            .and_then(|rest| rest.strip_suffix("\"]"));
        match path_attr {
            Some(rel) => out.push(dir.join(rel)),
            None => {
                let flat = own_dir.join(format!("{name}.rs"));
                out.push(if flat.is_file() {
                    flat
                } else {
                    own_dir.join(name).join("mod.rs")
                });
            }
        }
    }
    out
}

/// `NAME` of a line `[pub[(..)]] mod NAME;`.
fn mod_name(line: &str) -> Option<&str> {
    let mut rest = line.trim();
    if let Some(after) = rest.strip_prefix("pub") {
        rest = after.trim_start();
        if rest.starts_with('(') {
            rest = rest[rest.find(')')? + 1..].trim_start();
        }
    }
    let name = rest.strip_prefix("mod ")?.trim().strip_suffix(';')?.trim();
    name.chars()
        .all(|c| c.is_alphanumeric() || c == '_')
        .then_some(name)
}

fn all_sources(dir: &Path, out: &mut BTreeSet<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            if !path.ends_with("snapshots") && !path.ends_with("fixtures") {
                all_sources(&path, out);
            }
        } else if path.extension().is_some_and(|x| x == "rs") {
            out.insert(path);
        }
    }
}

/// The `.rs` files under `repo`'s `crates/` and `tests/` that no `mod` line reaches from
/// `roots` (or from a file directly in a member crate's `tests/`), relative to `repo`.
fn undeclared(repo: &Path, roots: &[&str]) -> Vec<String> {
    let mut reached = BTreeSet::new();
    let mut todo: Vec<PathBuf> = roots.iter().map(|r| repo.join(r)).collect();
    for krate in fs::read_dir(repo.join("crates")).into_iter().flatten() {
        let tests = krate.unwrap().path().join("tests");
        if let Ok(entries) = fs::read_dir(&tests) {
            todo.extend(
                entries
                    .map(|e| e.unwrap().path())
                    .filter(|p| p.extension().is_some_and(|x| x == "rs")),
            );
        }
    }
    while let Some(file) = todo.pop() {
        let file = fs::canonicalize(&file).unwrap_or_else(|err| {
            panic!("{} is declared but cannot be read: {err}", file.display())
        });
        if reached.insert(file.clone()) {
            todo.extend(declared_by(&file));
        }
    }
    let mut present = BTreeSet::new();
    for top in ["crates", "tests"] {
        if repo.join(top).is_dir() {
            all_sources(&repo.join(top), &mut present);
        }
    }
    present
        .iter()
        .filter(|f| !reached.contains(&fs::canonicalize(f).unwrap()))
        .map(|f| f.strip_prefix(repo).unwrap().display().to_string())
        .collect()
}

#[test]
fn issue_31_every_source_file_is_declared_by_a_module() {
    let undeclared = undeclared(&repo(), ROOTS);
    assert!(
        undeclared.is_empty(),
        "no `mod` line reaches these files, so cargo never compiles them (their tests never \
         run): {undeclared:#?}"
    );
}

/// The guard catches what it is for: test files dropped beside the others, in a room's
/// folder and in the end-to-end suite, in a tree shaped like this one; the declared ones
/// (a flat file, a room's `mod.rs` and what it declares) pass.
#[test]
fn issue_31_a_planted_undeclared_test_file_is_found() {
    let tree = tempfile::tempdir().unwrap();
    let files = [
        (
            "tests/integration/main.rs",
            "mod declared;\n#[cfg(unix)]\nmod room;\n",
        ),
        ("tests/integration/declared.rs", "#[test]\nfn runs() {}\n"),
        ("tests/integration/room/mod.rs", "pub(crate) mod inner;\n"),
        ("tests/integration/room/inner.rs", "// mod commented_out;\n"),
        (
            "tests/integration/planted.rs",
            "#[test]\nfn never_runs() {}\n",
        ),
        (
            "tests/integration/room/planted_too.rs",
            "#[test]\nfn never_runs() {}\n",
        ),
        ("tests/integration/room/commented_out.rs", ""),
        ("tests/integration/snapshots/not_a_module.rs", ""),
        ("tests/e2e/main.rs", "mod scenario;\n"),
        ("tests/e2e/scenario.rs", ""),
        ("tests/e2e/planted.rs", ""),
    ];
    for (path, text) in files {
        let path = tree.path().join(path);
        fs::create_dir_all(path.parent().unwrap()).unwrap();
        fs::write(path, text).unwrap();
    }
    let roots = ["tests/integration/main.rs", "tests/e2e/main.rs"];
    assert_eq!(
        undeclared(tree.path(), &roots),
        [
            "tests/e2e/planted.rs",
            "tests/integration/planted.rs",
            "tests/integration/room/commented_out.rs",
            "tests/integration/room/planted_too.rs",
        ]
    );
    assert_eq!(mod_name("pub(crate) mod cap;"), Some("cap"));
    assert_eq!(mod_name("    mod tests;"), Some("tests"));
    assert_eq!(mod_name("mod tests {"), None);
    assert_eq!(mod_name("use crate::mod_x;"), None);
}

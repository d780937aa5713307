//! The stack of crates, in what the compiler cannot keep by itself (issue 31). Cargo
//! refuses a cycle, but not a dependency that runs up or sideways without closing one
//! (the door taking the engine, the engine taking the protocol): each crate's manifest is
//! read here and its pagent dependencies compared with the stack. And `forbid(unsafe_code)`
//! holds only in a crate that says it: every crate root but the door's must, and no
//! source outside `crates/door` may hold an `unsafe` block, function, impl or extern.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use super::scan::blank_comments_and_literals;
use super::sources;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Each crate of the workspace (by its manifest, relative to the repository) and the
/// pagent crates it may depend on: the stack `cli -> {engine, stories, protocol, door}`,
/// `stories -> engine`, nothing upward. Test support (`pagent-test-support`, which
/// depends on no crate of pagent's) is beside the stack: any crate's tests may use it.
const STACK: &[(&str, &[&str])] = &[
    ("crates/door/Cargo.toml", &[]),
    ("crates/protocol/Cargo.toml", &[]),
    ("crates/engine/Cargo.toml", &[]),
    ("crates/stories/Cargo.toml", &["pagent-engine"]),
    (
        "Cargo.toml",
        &[
            "pagent-door",
            "pagent-engine",
            "pagent-protocol",
            "pagent-stories",
        ],
    ),
    ("tests/support/Cargo.toml", &[]),
];

/// The pagent crates a manifest depends on, in any table (normal, dev, build, per
/// target) but the engine's own `testing` feature for the stories crate's tests.
fn pagent_dependencies(manifest: &str) -> BTreeSet<String> {
    let value: toml::Value = toml::from_str(manifest).unwrap();
    let mut tables: Vec<&toml::Value> = Vec::new();
    for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
        tables.extend(value.get(key));
    }
    if let Some(targets) = value.get("target").and_then(toml::Value::as_table) {
        for target in targets.values() {
            for key in ["dependencies", "dev-dependencies", "build-dependencies"] {
                tables.extend(target.get(key));
            }
        }
    }
    tables
        .iter()
        .filter_map(|t| t.as_table())
        .flat_map(|t| t.keys())
        .filter(|name| name.starts_with("pagent-"))
        .cloned()
        .collect()
}

/// Each dependency that leaves the stack: "MANIFEST -> CRATE".
fn arrows_off_the_stack(read: impl Fn(&str) -> String) -> Vec<String> {
    STACK
        .iter()
        .flat_map(|(manifest, allowed)| {
            pagent_dependencies(&read(manifest))
                .into_iter()
                .filter(|dep| dep != "pagent-test-support" && !allowed.contains(&dep.as_str()))
                .map(move |dep| format!("{manifest} -> {dep}"))
        })
        .collect()
}

#[test]
fn issue_31_the_crates_depend_only_down_the_stack() {
    let read = |rel: &str| std::fs::read_to_string(repo().join(rel)).unwrap();
    assert_eq!(arrows_off_the_stack(read), Vec::<String>::new());
    // The root manifest lists every crate of the stack as a member.
    let root: toml::Value = toml::from_str(&read("Cargo.toml")).unwrap();
    let members: Vec<&str> = root["workspace"]["members"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(toml::Value::as_str)
        .collect();
    for crate_dir in [
        "crates/door",
        "crates/protocol",
        "crates/engine",
        "crates/stories",
    ] {
        assert!(members.contains(&crate_dir), "{crate_dir} in {members:?}");
    }
    // The same check fails on a planted arrow up: the door taking the engine.
    let planted = |rel: &str| {
        let text = read(rel);
        if rel == "crates/door/Cargo.toml" {
            text.replace(
                "[dependencies]\n",
                "[dependencies]\npagent-engine.workspace = true\n",
            )
        } else {
            text
        }
    };
    assert_eq!(
        arrows_off_the_stack(planted),
        ["crates/door/Cargo.toml -> pagent-engine"]
    );
}

/// Every crate root: each member's library and integration tests, the binary's library,
/// binary, build script and test binaries, and each fuzz target.
fn crate_roots() -> Vec<PathBuf> {
    let mut roots: Vec<PathBuf> = [
        "crates/cli/lib.rs",
        "crates/cli/main.rs",
        "build.rs",
        "tests/integration/main.rs",
        "tests/e2e/main.rs",
        "tests/support/lib.rs",
    ]
    .iter()
    .map(PathBuf::from)
    .collect();
    for krate in ["door", "protocol", "engine", "stories"] {
        roots.push(PathBuf::from(format!("crates/{krate}/src/lib.rs")));
        let tests = repo().join(format!("crates/{krate}/tests"));
        if let Ok(entries) = std::fs::read_dir(&tests) {
            for entry in entries {
                let path = entry.unwrap().path();
                if path.extension().is_some_and(|e| e == "rs") {
                    roots.push(path.strip_prefix(repo()).unwrap().to_path_buf());
                }
            }
        }
    }
    let fuzz: toml::Value =
        toml::from_str(&std::fs::read_to_string(repo().join("fuzz/Cargo.toml")).unwrap()).unwrap();
    for bin in fuzz["bin"].as_array().unwrap() {
        roots.push(Path::new("fuzz").join(bin["path"].as_str().unwrap()));
    }
    roots
}

/// The places in `src` (comments and literals aside) that use the `unsafe` keyword.
fn unsafe_uses(src: &str) -> Vec<usize> {
    let code = blank_comments_and_literals(src);
    let word = regex::Regex::new(r"\bunsafe\b").unwrap();
    code.lines()
        .enumerate()
        .filter(|(_, line)| word.is_match(line))
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn issue_31_unsafe_lives_only_in_the_door_crate() {
    let mut missing = Vec::new();
    for root in crate_roots() {
        let text = std::fs::read_to_string(repo().join(&root)).unwrap();
        let forbids = text.contains("#![forbid(unsafe_code)]");
        if root.starts_with("crates/door") {
            continue;
        }
        if !forbids {
            missing.push(root.display().to_string());
        }
    }
    assert_eq!(missing, Vec::<String>::new(), "crate roots without forbid");
    let mut found = Vec::new();
    let mut door = 0;
    for dir in ["crates", "tests", "fuzz/fuzz_targets"] {
        for rel in sources(&repo().join(dir)) {
            let path = Path::new(dir).join(&rel);
            let lines = unsafe_uses(&std::fs::read_to_string(repo().join(&path)).unwrap());
            if path.starts_with("crates/door") {
                door += lines.len();
            } else {
                found.extend(lines.iter().map(|l| format!("{}:{l}", path.display())));
            }
        }
    }
    assert_eq!(found, Vec::<String>::new(), "unsafe outside crates/door");
    assert!(door > 0, "the door's own unsafe blocks are seen");
    // Words are not uses: a forbid, an identifier, a comment, a string.
    let words = "#![forbid(unsafe_code)]\nfn is_unsafe() {} // unsafe here\nconst S: &str = \"unsafe { }\";\n";
    assert_eq!(unsafe_uses(words), Vec::<usize>::new());
    assert_eq!(unsafe_uses("fn f() {\n    unsafe { g() }\n}\n"), [2]);
}

//! What clippy keeps only while nobody turns it off (issue 31, item 2): a long argument
//! list becomes one value, so no source of pagent's may allow (or expect)
//! `clippy::too_many_arguments`, and no manifest or `clippy.toml` may raise its
//! threshold. And every crate and room says `too_many_lines`, at 80, which nothing
//! allows.

use std::path::{Path, PathBuf};

use super::scan::blank_comments_and_literals;
use super::sources;

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// The lines of `src` (comments and literals aside) that name the lint.
fn lint_uses(src: &str) -> Vec<usize> {
    blank_comments_and_literals(src)
        .lines()
        .enumerate()
        .filter(|(_, line)| line.contains("too_many_arguments"))
        .map(|(i, _)| i + 1)
        .collect()
}

#[test]
fn issue_31_clippy_runs_without_a_too_many_arguments_allow() {
    let mut found = Vec::new();
    let mut files = vec![PathBuf::from("build.rs")];
    for dir in ["crates", "tests", "fuzz/fuzz_targets"] {
        files.extend(
            sources(&repo().join(dir))
                .iter()
                .map(|rel| Path::new(dir).join(rel)),
        );
    }
    for path in files {
        let text = std::fs::read_to_string(repo().join(&path)).unwrap();
        found.extend(
            lint_uses(&text)
                .iter()
                .map(|l| format!("{}:{l}", path.display())),
        );
    }
    // This file names the lint in its own code to look for it.
    found.retain(|at| !at.starts_with("tests/integration/architecture/lints.rs"));
    assert_eq!(found, Vec::<String>::new(), "too_many_arguments allowed");
    // Nor is it switched off or its threshold raised for a whole crate.
    let mut settings = vec!["Cargo.toml".to_owned(), "clippy.toml".to_owned()];
    for krate in ["door", "protocol", "engine", "stories"] {
        settings.push(format!("crates/{krate}/Cargo.toml"));
        settings.push(format!("crates/{krate}/clippy.toml"));
    }
    for file in settings {
        let Ok(text) = std::fs::read_to_string(repo().join(&file)) else {
            continue;
        };
        assert!(
            !text.contains("too_many_arguments") && !text.contains("too-many-arguments"),
            "{file} changes too_many_arguments"
        );
    }
    // An attribute is a use; a comment or a string is not.
    assert_eq!(
        lint_uses("#[allow(clippy::too_many_arguments)]\nfn f() {}\n"),
        [1]
    );
    assert_eq!(
        lint_uses("#[expect(\n    clippy::too_many_arguments,\n)]\nfn f() {}\n"),
        [2]
    );
    let words = "// too_many_arguments\nconst S: &str = \"too_many_arguments\";\n";
    assert_eq!(lint_uses(words), Vec::<usize>::new());
}

/// Where clippy keeps each function at most 80 lines: every crate (its `lib.rs`), every
/// room of the binary (its `mod` line in `lib.rs`), and in `cmd` every command.
const CRATE_ROOTS: &[&str] = &[
    "crates/door/src/lib.rs",
    "crates/protocol/src/lib.rs",
    "crates/engine/src/lib.rs",
    "crates/stories/src/lib.rs",
    "crates/cli/main.rs",
    "tests/support/lib.rs",
    "tests/integration/main.rs",
    "tests/e2e/main.rs",
];

/// The modules `mod_list` declares without `#[warn(clippy::too_many_lines)]` just above.
fn modules_without_the_lint(mod_list: &str) -> Vec<String> {
    let text = blank_comments_and_literals(mod_list);
    let declared = regex::Regex::new(r"^(?:pub(?:\([^)]*\))? )?mod (\w+);$").unwrap();
    let mut previous = "";
    let mut missing = Vec::new();
    for line in text.lines().map(str::trim) {
        if let Some(name) = declared.captures(line).map(|c| c[1].to_owned())
            && previous != "#[warn(clippy::too_many_lines)]"
        {
            missing.push(name);
        }
        if !line.is_empty() {
            previous = line;
        }
    }
    missing
}

#[test]
fn issue_31_clippy_keeps_functions_under_80_lines_in_every_crate_and_room() {
    let read = |rel: &str| std::fs::read_to_string(repo().join(rel)).unwrap();
    for config in [
        "clippy.toml",
        "crates/door/clippy.toml",
        "crates/protocol/clippy.toml",
        "crates/engine/clippy.toml",
        "crates/stories/clippy.toml",
    ] {
        assert!(
            read(config)
                .lines()
                .any(|line| line.trim() == "too-many-lines-threshold = 80"),
            "{config} sets too-many-lines-threshold = 80"
        );
    }
    let lint = regex::Regex::new(r"#!\[(warn|deny|forbid)\(clippy::too_many_lines\)\]").unwrap();
    let missing: Vec<&str> = CRATE_ROOTS
        .iter()
        .copied()
        .filter(|root| !lint.is_match(&blank_comments_and_literals(&read(root))))
        .collect();
    assert_eq!(missing, Vec::<&str>::new(), "crates without too_many_lines");
    assert_eq!(
        modules_without_the_lint(&read("crates/cli/lib.rs")),
        Vec::<String>::new(),
        "rooms without too_many_lines"
    );
    assert_eq!(
        modules_without_the_lint(&read("crates/cli/cmd/mod.rs")),
        Vec::<String>::new(),
        "commands without too_many_lines"
    );
}

#[test]
fn issue_31_no_source_allows_a_long_function() {
    let allow = regex::Regex::new(r"(allow|expect)\([^)]*too_many_lines").unwrap();
    let mut found = Vec::new();
    for dir in ["crates", "tests", "fuzz/fuzz_targets"] {
        for rel in sources(&repo().join(dir)) {
            let path = repo().join(dir).join(&rel);
            let text = blank_comments_and_literals(&std::fs::read_to_string(&path).unwrap());
            if allow.is_match(&text) {
                found.push(Path::new(dir).join(rel).display().to_string());
            }
        }
    }
    assert_eq!(found, Vec::<String>::new());
}

#[test]
fn the_lint_check_sees_a_room_without_it() {
    let list = "#[warn(clippy::too_many_lines)]\nmod agent;\n\n// words\nmod cmd;\n#[warn(clippy::too_many_lines)]\npub mod store;\npub(crate) mod world;\n";
    assert_eq!(modules_without_the_lint(list), ["cmd", "world"]);
}

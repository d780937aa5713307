//! What clippy keeps only while nobody turns it off (issue 31, item 2): a long argument
//! list becomes one value, so no source of pagent's may allow (or expect)
//! `clippy::too_many_arguments`, and no manifest or `clippy.toml` may raise its
//! threshold. And the rooms whose functions are short say `too_many_lines`, at 80.

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

/// The rooms renovated so far, where clippy keeps each function at most 80 lines: the
/// runner (`pagent loop` and `parallel`), the agent process, set-up, the two
/// commands that start loops, and the hooks (their use cases and their command). A room
/// joins this list once its functions are short.
const SHORT_FUNCTIONS: &[&str] = &[
    "crates/cli/runner/mod.rs",
    "crates/cli/agent/mod.rs",
    "crates/cli/setup/mod.rs",
    "crates/cli/cmd/loop_cmd.rs",
    "crates/cli/cmd/parallel.rs",
    "crates/cli/hooks/mod.rs",
    "crates/cli/cmd/hook.rs",
    "crates/cli/cmd/hook_notify.rs",
];

#[test]
fn issue_31_clippy_keeps_functions_under_80_lines_in_the_runner_agent_and_setup() {
    let config = std::fs::read_to_string(repo().join("clippy.toml")).unwrap();
    assert!(
        config
            .lines()
            .any(|line| line.trim() == "too-many-lines-threshold = 80"),
        "clippy.toml sets too-many-lines-threshold = 80"
    );
    let lint = regex::Regex::new(r"#!\[(warn|deny|forbid)\(clippy::too_many_lines\)\]").unwrap();
    let missing: Vec<&str> = SHORT_FUNCTIONS
        .iter()
        .copied()
        .filter(|root| {
            let text = std::fs::read_to_string(repo().join(root)).unwrap();
            !lint.is_match(&blank_comments_and_literals(&text))
        })
        .collect();
    assert_eq!(missing, Vec::<&str>::new(), "rooms without too_many_lines");
}

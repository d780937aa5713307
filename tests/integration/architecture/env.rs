//! The environment is read in one place (issue 31, item 4): `crates/cli/cli/env.rs`
//! captures it once as an `Env` value, and everything else takes its values from there.
//! clippy's `disallowed-methods` bans the calls, but a module that allows
//! `disallowed_methods` for its file access (the installer's files, say) would allow an
//! environment read with it; this scan has no such hole. Test files are the tests'
//! own (they set up the processes they start); the door's one allowance is the system's
//! temporary folder, where a checker's scratch folder is made.

use std::path::Path;

use super::scan::blank_comments_and_literals;
use super::sources;

/// The source files allowed to read the environment, and how many reads each may hold.
const ALLOWED: &[(&str, usize)] = &[
    ("crates/cli/cli/env.rs", 9),
    ("crates/door/src/files/outside.rs", 1),
    // A build script's environment is cargo's (OUT_DIR), read when the crate is built.
    ("crates/engine/build.rs", 1),
];

/// Every read of the environment in `src` (comments and literals aside), by line.
fn env_reads(src: &str) -> Vec<usize> {
    let code = blank_comments_and_literals(src);
    let read =
        regex::Regex::new(r"\benv::(var|var_os|vars|vars_os|home_dir|temp_dir|current_dir)\b")
            .unwrap();
    code.lines()
        .enumerate()
        .filter(|(_, line)| read.is_match(line))
        .map(|(i, _)| i + 1)
        .collect()
}

/// A test's own file: `tests.rs`, `tests_*.rs`, or anything under a `tests` folder.
fn is_test_file(path: &Path) -> bool {
    path.components().any(|c| c.as_os_str() == "tests")
        || path
            .file_stem()
            .and_then(|s| s.to_str())
            .is_some_and(|s| s == "tests" || s.starts_with("tests_"))
}

#[test]
fn issue_31_the_environment_is_read_only_in_cli_env() {
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = Vec::new();
    let mut allowed_seen = Vec::new();
    for rel in sources(&repo.join("crates")) {
        let path = Path::new("crates").join(&rel);
        if is_test_file(&path) {
            continue;
        }
        let reads = env_reads(&std::fs::read_to_string(repo.join(&path)).unwrap());
        match ALLOWED
            .iter()
            .find(|(allowed, _)| Path::new(allowed) == path)
        {
            Some((_, most)) => {
                assert!(reads.len() <= *most, "{}: {reads:?}", path.display());
                allowed_seen.push((path.display().to_string(), reads.len()));
            }
            None => found.extend(reads.iter().map(|l| format!("{}:{l}", path.display()))),
        }
    }
    assert_eq!(
        found,
        Vec::<String>::new(),
        "the environment read outside cli/env.rs"
    );
    assert_eq!(allowed_seen.len(), ALLOWED.len(), "{allowed_seen:?}");
    assert!(allowed_seen.iter().all(|(_, n)| *n > 0), "{allowed_seen:?}");
}

#[test]
fn issue_31_an_environment_read_is_seen_and_words_are_not() {
    let planted = "fn f() {\n    let p = std::env::var_os(\"PATH\");\n}\n";
    assert_eq!(env_reads(planted), [2]);
    let aliased = "use std::env;\nfn f() { env::current_dir(); }\n";
    assert_eq!(env_reads(aliased), [2]);
    let words = "// std::env::var is banned\nconst S: &str = \"env::var\";\nfn envvar() {}\n";
    assert_eq!(env_reads(words), Vec::<usize>::new());
}

//! The crates form a stack the compiler keeps (issue 31): `cli -> {engine, stories,
//! protocol, door}`, `stories -> engine`, nothing upward (`crates.rs` checks what the
//! compiler cannot: that no crate takes a dependency up or sideways, and that `unsafe`
//! lives in the door crate alone). Inside `crates/cli` the rooms form a strict stack
//! (issue 22), which only a test can keep: every `crate::` and `super::` path in every
//! source file (comments and strings aside) is an arrow from the file's room to the room
//! it names, and an arrow the stack forbids fails the test with the file, the line and
//! the arrow.
//!
//! The stack, top to bottom (a room may name the rooms below it, never one above, and
//! never a sibling on its own tier; every room may use the crates below the binary):
//!
//! ```text
//! entry      main.rs, lib.rs, dispatch.rs    wiring: may name anything
//! cmd        one thin file per subcommand     (none names another)
//! hooks      the hooks' use cases over the typed protocol, their frame and words (a
//!            Stop answers a queued /pagent-status as the slash commands do)
//! use cases  runner, slash, dashboard, install
//! setup      turning a plan into a new loop   (the runner starts loops too)
//! session    applying an outcome: lock, re-read, compare-and-swap, log, the loop-end
//!            notice
//! world      the engine's World over the disk: probes, checks, fingerprint, transcript
//! agent      one agent process (a loop's worker, a reviewer): the hook's world and the
//!            runner both start them
//! store      state file, secret, trust, event log, config
//! ```
//!
//! The doors (files and processes) are the `pagent-door` crate below all of it.
//!
//! Beside the stack, `cli/` is the command line's edge: its arguments (`cli::args` and
//! the other parsers) are read by `cmd/`, `setup/` and `slash/` only, which turn them
//! into plan values for the rooms below; its output and environment (`ui`, `terminal`,
//! `screen`, `exit`, `costs`, and `io`'s streams and clock) reach down to `world` at most;
//! the captured environment (`cli::env`, a value) and an error with its hints
//! (`cli::hint`, a value) down to the store. The store (and the
//! door crate under it) neither print, read the clock, nor know clap. The edge itself
//! names only itself (and the crates below the binary).
//!
//! A room that is not in [`ROOMS`] fails the test: a new folder has to find its tier.

mod crates;
mod declared;
mod env;
mod lints;
mod rules;
mod scan;

use std::path::{Path, PathBuf};

use rules::{Arrow, check_source};

/// Where the rooms live.
fn cli_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("crates/cli")
}

/// Every `.rs` file under `dir`, relative to it, sorted.
fn sources(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                todo.push(path);
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path.strip_prefix(dir).unwrap().to_path_buf());
            }
        }
    }
    out.sort();
    out
}

/// Every forbidden arrow in the tree at `dir`.
fn forbidden_arrows(dir: &Path) -> Vec<Arrow> {
    sources(dir)
        .iter()
        .flat_map(|rel| check_source(rel, &std::fs::read_to_string(dir.join(rel)).unwrap()))
        .collect()
}

fn report(arrows: &[Arrow]) -> String {
    arrows
        .iter()
        .map(|a| format!("  {a}\n"))
        .collect::<String>()
}

#[test]
fn issue_22_the_rooms_of_crates_cli_form_a_strict_stack() {
    let arrows = forbidden_arrows(&cli_dir());
    assert!(
        arrows.is_empty(),
        "the rooms of crates/cli must form a strict stack (see tests/integration/architecture/mod.rs)\n\
         forbidden arrows:\n{}",
        report(&arrows),
    );
}

#[test]
fn issue_22_a_planted_upward_import_fails_with_file_line_and_arrow() {
    // A copy of a real store file with one line planted: the store printing through the
    // command line's output edge.
    let rel = Path::new("store/eventlog.rs");
    let real = std::fs::read_to_string(cli_dir().join(rel)).unwrap();
    assert!(
        check_source(rel, &real).is_empty(),
        "{}",
        report(&check_source(rel, &real))
    );
    let planted =
        format!("{real}\nfn planted() {{\n    crate::cli::ui::warn(todo!(), \"x\");\n}}\n");
    let line = planted.lines().count() - 1;
    let arrows = check_source(rel, &planted);
    let shown = report(&arrows);
    assert_eq!(
        shown,
        format!(
            "  store/eventlog.rs:{line}: store -> cli::ui (the store and the doors neither \
             print, read the clock nor know the command line)\n"
        )
    );
}

#[test]
fn issue_22_comments_strings_and_sibling_paths_are_read_right() {
    let src = r##"
//! crate::runner is named in a comment only
use crate::store::{self, door::Dir, project::{Project, STATE_FILE}};
use crate::cmd::status as other;
const S: &str = "crate::runner::x";
const R: &str = r#"crate::runner "quoted" "#;
fn f<'a>(c: char) -> bool { c == '"' && crate::world::probe::x() }
#[cfg(test)]
mod tests {
    use super::*;
    use super::super::super::cli::args::Global;
}
"##;
    let rel = Path::new("cmd/run.rs");
    let got: Vec<String> = check_source(rel, src)
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        got,
        vec!["cmd/run.rs:4: cmd::run -> cmd::status (no subcommand names another)".to_owned(),]
    );
    let named: Vec<String> = scan::named_paths(src, &["cmd".into(), "run".into()])
        .iter()
        .map(|n| format!("{}:{}", n.line, n.path.join("::")))
        .collect();
    assert_eq!(
        named,
        [
            "3:store",
            "3:store::door::Dir",
            "3:store::project::Project",
            "3:store::project::STATE_FILE",
            "4:cmd::status",
            "7:world::probe::x",
            "10:cmd::run",
            "11:cli::args::Global",
        ]
    );
}

/// A copy of `crates/cli` in a temporary folder, for planting.
fn copy_of_cli() -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    for rel in sources(&cli_dir()) {
        let to = copy.path().join(&rel);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(cli_dir().join(&rel), to).unwrap();
    }
    copy
}

#[test]
fn issue_31_the_architecture_test_fails_on_a_planted_back_arrow() {
    // The whole tree, as the real test reads it, with one arrow planted back up: the
    // world (the engine's World over the disk) reaching into the runner above it.
    let copy = copy_of_cli();
    assert!(forbidden_arrows(copy.path()).is_empty());
    let planted = copy.path().join("world/probe.rs");
    let real = std::fs::read_to_string(&planted).unwrap();
    std::fs::write(
        &planted,
        format!(
            "{real}
fn planted() {{
    crate::runner::stories::prepare();
}}
"
        ),
    )
    .unwrap();
    let line = real.lines().count() + 3;
    assert_eq!(
        report(&forbidden_arrows(copy.path())),
        format!(
            "  world/probe.rs:{line}: world -> runner (a room names only the rooms below it)\n"
        )
    );
}

#[test]
fn issue_22_a_folder_outside_the_stack_fails_until_it_has_a_tier() {
    let got: Vec<String> = check_source(Path::new("helpers/mod.rs"), "fn f() {}\n")
        .iter()
        .map(ToString::to_string)
        .collect();
    assert_eq!(
        got,
        [
            "helpers/mod.rs:1: helpers -> ? (a room that is not in the stack: give it a tier in rules.rs)"
        ]
    );
}

#[test]
fn issue_31_the_hooks_room_sits_between_cmd_and_the_other_use_cases() {
    let arrows = |rel: &str, src: &str| -> Vec<String> {
        check_source(Path::new(rel), src)
            .iter()
            .map(ToString::to_string)
            .collect()
    };
    // The hooks may name the use cases below them (a Stop answers /pagent-status)...
    assert!(arrows("hooks/stop.rs", "fn f() { crate::slash::answer::x(); }\n").is_empty());
    assert!(arrows("cmd/hook.rs", "fn f() { crate::hooks::stop::decide(); }\n").is_empty());
    // ...but nothing below names them, and they name no command.
    assert_eq!(
        arrows(
            "slash/answer.rs",
            "fn f() {\n    crate::hooks::words::x();\n}\n"
        ),
        ["slash/answer.rs:2: slash -> hooks (a room names only the rooms below it)"]
    );
    assert_eq!(
        arrows(
            "session/mod.rs",
            "fn f() {\n    crate::hooks::frame::x();\n}\n"
        ),
        ["session/mod.rs:2: session -> hooks (a room names only the rooms below it)"]
    );
    assert_eq!(
        arrows(
            "hooks/stop.rs",
            "fn f() {\n    crate::cmd::status::run();\n}\n"
        ),
        ["hooks/stop.rs:2: hooks -> cmd::status (a room names only the rooms below it)"]
    );
}

//! Whole-output snapshots of what pagent says on the command line: the start output of
//! `ralph` and `run` (what the model reads first, in a session), `status` in its states,
//! and the CLI's errors, one table of wrong invocations. A change of wording shows up as
//! a diff to review (`cargo insta review`), never as a `.contains` that still passes.

use crate::util::*;

macro_rules! snapshot {
    ($name:expr, $text:expr) => {
        insta::with_settings!({filters => crate::util::snapshot::filters()}, {
            insta::assert_snapshot!($name, $text);
        })
    };
}

/// The text each part of a run printed, labelled, for one snapshot.
fn shown(label: &str, run: &Run) -> String {
    let mut out = format!("$ {label}   (exit {})\n", run.code.unwrap_or(-1));
    if !run.stdout.is_empty() {
        out.push_str(&format!("--- stdout ---\n{}", run.stdout));
    }
    if !run.stderr.is_empty() {
        out.push_str(&format!("--- stderr ---\n{}", run.stderr));
    }
    out
}

#[test]
fn ralph_start_output() {
    let env = TestEnv::new();
    let slash = env
        .cmd(&["ralph", "--stdin-args"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .stdin("Make the flaky test in tests/net.rs pass --max-iterations 1\n")
        .run();
    let env = TestEnv::new();
    let terminal = env
        .cmd(&[
            "ralph",
            "--promise",
            "SHIPPED",
            "--max-tokens",
            "2M",
            "--no-progress-limit",
            "1",
            "Release 1.2",
        ])
        .run();
    snapshot!(
        "ralph_start",
        format!(
            "{}\n{}",
            shown("/ralph Make the flaky test ... --max-iterations 1", &slash),
            shown(
                "pagent ralph --promise SHIPPED --max-tokens 2M --no-progress-limit 1 'Release 1.2'",
                &terminal
            )
        )
    );
}

#[test]
fn run_start_output() {
    let env = TestEnv::new();
    env.write("docs/prd.md", "# PRD\n");
    let run = env
        .cmd(&[
            "run",
            "docs/prd.md",
            "--max-iterations",
            "10",
            "--max-stages",
            "2",
        ])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .run();
    snapshot!(
        "run_start",
        shown(
            "pagent run docs/prd.md --max-iterations 10 --max-stages 2",
            &run
        )
    );
}

#[test]
fn status_in_each_state() {
    let env = TestEnv::new();
    let mut out = shown("pagent status   (no loop)", &env.cmd(&["status"]).run());
    out += &shown(
        "pagent status --json   (no loop)",
        &env.cmd(&["status", "--json"]).run(),
    );
    env.cmd(&["ralph", "Fix it"]).run();
    out += &shown(
        "pagent status   (not yet claimed)",
        &env.cmd(&["status"]).run(),
    );
    env.cmd(&["pause"]).run();
    out += &shown("pagent status   (paused)", &env.cmd(&["status"]).run());
    env.cmd(&["resume"]).run();
    env.cmd(&["cancel"]).run();
    out += &shown("pagent status   (cancelled)", &env.cmd(&["status"]).run());
    snapshot!(
        "status_states",
        out.replace(&env.root.display().to_string(), "[PROJECT]")
    );
}

/// Wrong invocations, each with its exit status and every line it printed: one error,
/// said once, that says what to do.
#[test]
fn errors_of_the_cli() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    env.write("flow.json", "{\"stages\": []}");
    let cases: &[&[&str]] = &[
        &["frobnicate"],
        &["ralph", "--max-iterations", "0", "Fix it"],
        &["ralph", "--max-cost", "1e3", "Fix it"],
        &["ralph", "--max-duration", "forever", "Fix it"],
        &["run", "missing.md"],
        &["run", "prd.md", "--workflow", "flow.json"],
        &["run", "prd.md", "--workflow", "no-such-flow"],
        &["loop"],
        &["parallel", "no-tasks.txt"],
        &["trust", "no-such-file.json"],
        &["log", "-n", "many"],
    ];
    let mut out = String::new();
    for args in cases {
        let run = env.cmd(args).run();
        assert_eq!(run.code, Some(1), "{run}");
        assert_eq!(
            run.stderr.matches("error:").count(),
            1,
            "one error, said once\n{run}"
        );
        out += &shown(&format!("pagent {}", args.join(" ")), &run);
    }
    // A loop is active: starting another is refused, and says how to go on.
    env.cmd(&["ralph", "Fix it"]).success();
    let run = env.cmd(&["ralph", "Another task"]).run();
    out += &shown("pagent ralph 'Another task'   (a loop is active)", &run);
    snapshot!(
        "errors",
        out.replace(&env.root.display().to_string(), "[PROJECT]")
    );
}

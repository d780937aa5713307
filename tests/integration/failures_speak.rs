//! Issue 31, item 6: the Wine retry of the test runner (`util::command`'s
//! `wine_did_not_start`) rests on a premise, that pagent never ends with exit 1 and nothing
//! said. Checked here, natively, over every command's failures: each says why on stderr
//! (and none exits 2, Claude Code's "block").

use crate::util::TestEnv;

/// Every way to make pagent fail that a user, a hook or a bad setting can reach: a
/// command or flag that does not exist, a file that is missing, a program that cannot
/// start, the notifier helper's every failure (it said nothing before, its stdio being
/// closed in real use).
const FAILURES: &[&[&str]] = &[
    &["no-such-command"],
    &["run", "missing-prd.md"],
    &["ralph"],
    &["loop", "--command", "/nonexistent/agent", "missing-prd.md"],
    &["parallel", "missing-plan.md"],
    &["trust", "no/such/file"],
    &["install", "--binary", "/nonexistent/pagent"],
    &["dashboard", "--port", "not-a-port"],
    &["hook", "no-such-hook"],
    &["hook", "notify"],
    &["hook", "notify", "--", "/nonexistent/notifier"],
    &["hook", "notify", "--", "no-such-notifier-on-path"],
    &["hook", "notify", "--", "false"],
    &["hook", "notify", "--timeout", "1", "--", "sleep", "30"],
];

/// The subcommands, each given a flag it does not have.
const COMMANDS: &[&str] = &[
    "run",
    "ralph",
    "status",
    "cancel",
    "pause",
    "resume",
    "prompt",
    "log",
    "loop",
    "parallel",
    "trust",
    "install",
    "uninstall",
    "dashboard",
    "hook",
];

#[test]
fn issue_31_no_failure_of_pagent_ends_with_nothing_said() {
    let env = TestEnv::new();
    let mut cases: Vec<Vec<String>> = FAILURES
        .iter()
        .map(|args| args.iter().map(|a| (*a).to_owned()).collect())
        .collect();
    cases.extend(
        COMMANDS
            .iter()
            .map(|command| vec![(*command).to_owned(), "--no-such-flag".to_owned()]),
    );
    let mut silent = Vec::new();
    for args in &cases {
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = env.bin(&args).env("PATH", "/usr/bin:/bin").run();
        assert_ne!(run.code, Some(2), "pagent {args:?} exited 2: {run}");
        assert_ne!(
            run.code,
            Some(0),
            "pagent {args:?} was meant to fail: {run}"
        );
        if run.stderr.trim().is_empty() {
            silent.push(format!("pagent {}: {run}", args.join(" ")));
        }
    }
    assert!(
        silent.is_empty(),
        "failed with nothing said:\n{}",
        silent.join("\n")
    );
}

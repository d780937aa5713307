//! Issue 30's command-line findings of the third trial, each as the user met it: the help
//! of `run`, `ralph` and `parallel`, a `pagent loop ralph` with no task, and the commands
//! run in a subfolder of a project. (`parallel`'s plans are in `parallel/plans.rs`, the
//! loop's page in `dashboard/browser.rs`.)

use crate::util::*;

/// `--stdin-args` is the slash commands' own flag: no help lists it, and `run`'s usage
/// says the PRD is required (it said `[PRD]`).
#[test]
fn issue_30_stdin_args_is_hidden_and_run_help_says_the_prd_is_required() {
    let env = TestEnv::new();
    let mut said = Said::new();
    for args in [
        ["run", "--help"].as_slice(),
        &["loop", "run", "--help"],
        &["ralph", "--help"],
        &["loop", "ralph", "--help"],
        &["parallel", "--help"],
    ] {
        let help = env.bin(args).success().stdout;
        assert!(!help.contains("stdin-args"), "{args:?}:\n{help}");
        // The usage line and the positional arguments: what says what is required.
        let head: String = help
            .lines()
            .skip_while(|l| !l.starts_with("Usage:"))
            .take_while(|l| !l.starts_with("Options:"))
            .map(|l| format!("{l}\n"))
            .collect();
        said.say(&args.join(" "), &head);
    }
    // Still taken, as the slash commands give it.
    env.cmd(&["run", "--stdin-args"]).stdin("--help").success();
    assert_text!(said.text());
}

/// `pagent loop ralph` with no task names `pagent loop ralph`, not `pagent ralph`.
#[test]
fn issue_30_loop_ralph_without_a_task_says_how_to_give_it_to_pagent_loop() {
    let env = TestEnv::new();
    let mut said = Said::new();
    for args in [
        ["loop", "--command", "true", "ralph"].as_slice(),
        &["loop", "--command", "true", "ralph", "  "],
        &["ralph"],
    ] {
        let out = env.cmd(args).stdin("").failure();
        said.say(&args.join(" "), &out.stderr);
        assert!(!env.exists(".claude/pagent-pipeline.json"), "{args:?}");
    }
    assert_text!(said.text());
}

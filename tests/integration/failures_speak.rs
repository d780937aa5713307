//! Issue 31, item 6: the Wine retry of the test runner (`util::command`'s
//! `wine_did_not_start`, at most two retries a command, each said on the test's stderr
//! with the run's count) rests on a premise, that pagent never ends with exit 1 and
//! nothing said. Checked here, natively, over every failure a test can reach: the commands
//! are read from pagent's own help (a new command is covered the moment it exists), each
//! given a flag it lacks, run with no arguments over no state, a loop's state and a
//! corrupt one, and each hook handed garbage; plus the failures named below. Each says why
//! on stderr (and none exits 2, Claude Code's "block").

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

/// Commands `--help` does not list (Claude Code's, not a user's), walked as the others.
const HIDDEN: &[&str] = &["hook"];

/// Commands that run until they are stopped (a server): not started with no arguments.
const RUN_UNTIL_STOPPED: &[&[&str]] = &[&["dashboard"]];

/// What a hook may be handed on stdin by a broken client or a hostile one.
const GARBAGE: &[&str] = &[
    "",
    "not json {",
    "null",
    "[]",
    r#"{"session_id": 5, "transcript_path": ["x"], "cwd": {}}"#,
    "\u{0}\u{ff}\u{fe}",
];

/// Every command path: those `pagent --help` lists and the hidden ones, each followed
/// into its subcommands, so a new command is covered here the moment it exists.
fn all_commands(env: &TestEnv) -> Vec<Vec<String>> {
    let mut all = commands(env, &[]);
    for hidden in HIDDEN {
        all.extend(commands(env, &[(*hidden).to_owned()]));
    }
    all
}

/// The command paths of `args`' help: each subcommand `--help` lists under `Commands:`
/// (but `help`), followed into its own subcommands.
fn commands(env: &TestEnv, args: &[String]) -> Vec<Vec<String>> {
    let mut with_help: Vec<&str> = args.iter().map(String::as_str).collect();
    with_help.push("--help");
    let help = env.bin(&with_help).run();
    assert_eq!(help.code, Some(0), "{help}");
    let Some((_, listed)) = help.stdout.split_once("Commands:\n") else {
        return vec![args.to_vec()];
    };
    let names: Vec<String> = listed
        .lines()
        .take_while(|line| !line.trim().is_empty())
        .filter(|line| line.starts_with("  ") && !line.starts_with("   "))
        .filter_map(|line| line.split_whitespace().next())
        .filter(|name| *name != "help")
        .map(str::to_owned)
        .collect();
    names
        .into_iter()
        .flat_map(|name| {
            let mut path = args.to_vec();
            path.push(name);
            commands(env, &path)
        })
        .collect()
}

/// pagent `args` (stdin `input`) either succeeds or says why on stderr; never exit 2.
/// A command other than a hook runs bounded: a new one that waited for something would
/// hang the test, not pass it.
fn speaks_if_it_fails(env: &TestEnv, args: &[&str], input: &str, silent: &mut Vec<String>) {
    let command = env.bin(args).env("PATH", "/usr/bin:/bin").stdin(input);
    let run = if args[0] == "hook" {
        command.run()
    } else {
        command.run_bounded(std::time::Duration::from_secs(20)).run
    };
    if run.code != Some(0) && run.stderr.trim().is_empty() {
        silent.push(format!("pagent {} <<< {input:?}: {run}", args.join(" ")));
    }
}

#[test]
fn issue_31_no_failure_of_pagent_ends_with_nothing_said() {
    let env = TestEnv::new();
    let mut silent = Vec::new();
    for args in FAILURES {
        let run = env.bin(args).env("PATH", "/usr/bin:/bin").run();
        assert_ne!(
            run.code,
            Some(0),
            "pagent {args:?} was meant to fail: {run}"
        );
        if run.stderr.trim().is_empty() {
            silent.push(format!("pagent {}: {run}", args.join(" ")));
        }
    }
    let commands = all_commands(&env);
    let hooks: Vec<&Vec<String>> = commands.iter().filter(|c| c[0] == "hook").collect();
    // The command list is what it claims to be: the hooks and the team's commands are in.
    assert!(
        hooks.len() >= 7 && commands.len() >= hooks.len() + 20,
        "{hooks:?}"
    );
    assert!(
        commands.iter().any(|c| c == &["team", "work"]),
        "{commands:?}"
    );
    for command in &commands {
        let mut args: Vec<&str> = command.iter().map(String::as_str).collect();
        args.push("--no-such-flag");
        let run = env.bin(&args).env("PATH", "/usr/bin:/bin").run();
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

/// Every command with no arguments, and every hook with garbage on stdin, over no state,
/// a loop's state, and a corrupt one: whatever they decide, a failure says why.
#[test]
fn issue_31_no_command_or_hook_fails_silently_over_missing_or_corrupt_state() {
    let env = TestEnv::new();
    let commands = all_commands(&env);
    let mut silent = Vec::new();
    for state in ["none", "a loop", "corrupt"] {
        let path = ".claude/pagent-pipeline.json";
        match state {
            "none" => {}
            "a loop" => {
                env.cmd(&["ralph", "Fix it"]).success();
            }
            _ => {
                env.write(path, r#"{"version": 1, "stages": [{"#);
            }
        }
        for command in &commands {
            let args: Vec<&str> = command.iter().map(String::as_str).collect();
            if command[0] == "hook" {
                for input in GARBAGE {
                    speaks_if_it_fails(&env, &args, input, &mut silent);
                }
            } else if !RUN_UNTIL_STOPPED.contains(&args.as_slice()) {
                speaks_if_it_fails(&env, &args, "", &mut silent);
            }
        }
        if env.exists(path) {
            std::fs::remove_file(env.path(path)).unwrap();
        }
    }
    assert!(
        silent.is_empty(),
        "failed with nothing said:\n{}",
        silent.join("\n\n")
    );
}

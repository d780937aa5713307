//! The slash-command text rules as tables.
use super::*;

#[test]
fn splits_words_with_balanced_quotes_only() {
    assert_eq!(
        values("prd.md --workflow 'my flow' --max-iterations=3"),
        ["prd.md", "--workflow", "my flow", "--max-iterations=3"]
    );
    assert_eq!(values("\"docs/my prd.md\""), ["docs/my prd.md"]);
    assert_eq!(values("it's fine"), ["it's", "fine"]);
    assert_eq!(values("  "), Vec::<String>::new());
}

/// The slash-command flag rule as a table: (text, task, options).
#[test]
fn ralph_lines_keep_the_task_byte_for_byte() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("Fix the tests", "Fix the tests", &[]),
        (
            "Fix the tests --max-tokens 500k --max-duration 1h30m --max-cost $5",
            "Fix the tests",
            &[
                "--max-tokens",
                "500k",
                "--max-duration",
                "1h30m",
                "--max-cost",
                "$5",
            ],
        ),
        // A budget flag without a budget-like value is the task's words.
        (
            "Document the --max-cost option",
            "Document the --max-cost option",
            &[],
        ),
        (
            "Lower the --max-tokens default",
            "Lower the --max-tokens default",
            &[],
        ),
        (
            "\"Fix the tests\" --max-iterations 5",
            "Fix the tests",
            &["--max-iterations", "5"],
        ),
        (
            "Build it --completion-promise=SHIPPED --force",
            "Build it",
            &["--completion-promise", "SHIPPED", "--force"],
        ),
        (
            "Build it --promise 'all done' --no-progress-limit 0",
            "Build it",
            &["--promise", "all done", "--no-progress-limit", "0"],
        ),
        (
            "--promise SHIPPED --max-iterations=3 -- Release 1.2 --force",
            "Release 1.2 --force",
            &["--promise", "SHIPPED", "--max-iterations", "3"],
        ),
    ];
    assert_ralph_lines(cases);
}

/// Options inside the task are the task's words, and so is anything a shell would read.
#[test]
fn ralph_lines_keep_options_inside_the_task_as_its_words() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "Remove the --force flag from deploy.sh",
            "Remove the --force flag from deploy.sh",
            &[],
        ),
        (
            "Remove the --force flag from deploy.sh --max-iterations 5",
            "Remove the --force flag from deploy.sh",
            &["--max-iterations", "5"],
        ),
        (
            "Document the --promise option",
            "Document the --promise option",
            &[],
        ),
        ("Explain --max-iterations", "Explain --max-iterations", &[]),
        ("Set --max-iterations ten", "Set --max-iterations ten", &[]),
        (
            "--promise 'ALL DONE' Build it",
            "--promise 'ALL DONE' Build it",
            &[],
        ),
        ("Fix a -- b", "Fix a -- b", &[]),
        ("Quote \"--force\"", "Quote \"--force\"", &[]),
        ("Fill in {{story}}", "Fill in {{story}}", &[]),
        (
            "Fix it's \"parser\"; run $(touch pwned) `id` (x) \\n\nsecond line",
            "Fix it's \"parser\"; run $(touch pwned) `id` (x) \\n\nsecond line",
            &[],
        ),
        ("\n  indented task\n", "indented task", &[]),
        ("--max-iterations 5", "", &["--max-iterations", "5"]),
    ];
    assert_ralph_lines(cases);
}

/// Each text parses to its task and options.
fn assert_ralph_lines(cases: &[(&str, &str, &[&str])]) {
    for (text, task, flags) in cases {
        let line = parse_ralph_line(text);
        assert_eq!(line.task, *task, "{text:?}");
        assert_eq!(line.flags, *flags, "{text:?}");
    }
}

/// A run at the end meant as options but not all valid goes to clap whole, so the user
/// gets an error instead of a loop whose task ends in a typo; anything that reads as the
/// task's own words stays the task.
#[test]
fn item_3_a_misspelt_or_refused_option_at_the_end_is_never_task_text() {
    let cases: &[(&str, &str, &[&str])] = &[
        (
            "Fix it --max-iteration 2",
            "Fix it",
            &["--max-iteration", "2"],
        ),
        ("Fix it --max-cost 1e3", "Fix it", &["--max-cost", "1e3"]),
        (
            "Fix it --max-iterations 0",
            "Fix it",
            &["--max-iterations", "0"],
        ),
        ("Fix it --forse", "Fix it", &["--forse"]),
        (
            "Fix it --max-iteration 2 --promise DONE",
            "Fix it",
            &["--max-iteration", "2", "--promise", "DONE"],
        ),
        (
            "Call it --dry-run --max-iterations 3",
            "Call it",
            &["--dry-run", "--max-iterations", "3"],
        ),
        ("--promis DONE -- Ship it", "Ship it", &["--promis", "DONE"]),
        ("--help", "", &["--help"]),
        ("Fix it --help", "Fix it", &["--help"]),
        // The task's own words.
        ("Explain --max-iteration", "Explain --max-iteration", &[]),
        ("Add a --verbose flag", "Add a --verbose flag", &[]),
        ("Add --verbose", "Add --verbose", &[]),
        (
            "Document the --max-cost option",
            "Document the --max-cost option",
            &[],
        ),
        ("Set --max-iterations ten", "Set --max-iterations ten", &[]),
    ];
    for (text, task, flags) in cases {
        let line = parse_ralph_line(text);
        assert_eq!(line.task, *task, "{text:?}");
        assert_eq!(line.flags, *flags, "{text:?}");
    }
}

/// Attacks on the rule (issue 20, items 2 and 3): a leading `--` makes everything after it
/// the task, `--help` and `--force` included; an option whose value is quoted after `=`
/// is an option, as in a shell; `-h` is help like `--help`; a quoted option is a word.
#[test]
fn item_3_odd_arguments_are_read_as_typed() {
    let cases: &[(&str, &str, &[&str])] = &[
        ("-- --help", "--help", &[]),
        (
            "-- Fix the --force flag --force",
            "Fix the --force flag --force",
            &[],
        ),
        ("--", "", &[]),
        (
            "--max-iterations 3 -- Explain what --help does",
            "Explain what --help does",
            &["--max-iterations", "3"],
        ),
        (
            "--max-iterations 3 -- Explain --help",
            "Explain --help",
            &["--max-iterations", "3"],
        ),
        (
            "Fix it --promise=\"ALL DONE\"",
            "Fix it",
            &["--promise", "ALL DONE"],
        ),
        (
            "Fix it --promise='ALL DONE' --max-iterations 2",
            "Fix it",
            &["--promise", "ALL DONE", "--max-iterations", "2"],
        ),
        ("Fix it --promise=done", "Fix it", &["--promise", "done"]),
        (
            "Fix \"it\" --promise \"ALL DONE\"",
            "Fix \"it\"",
            &["--promise", "ALL DONE"],
        ),
        (
            "Fix \"a --force\" --force",
            "Fix \"a --force\"",
            &["--force"],
        ),
        ("Fix it \"--force\"", "Fix it \"--force\"", &[]),
        (
            "Fix it \"--promise=DONE\"",
            "Fix it \"--promise=DONE\"",
            &[],
        ),
        ("'--help'", "--help", &[]),
        ("Fix it -h", "Fix it", &["-h"]),
        ("--help -- Fix", "Fix", &["--help"]),
    ];
    for (text, task, flags) in cases {
        let line = parse_ralph_line(text);
        assert_eq!(line.task, *task, "{text:?}");
        assert_eq!(line.flags, *flags, "{text:?}");
    }
}

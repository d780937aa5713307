//! Terminal escapes in project text (issue 19, finding 9): a window title, a clipboard
//! write (OSC 52), hidden text or a bidi override planted in a project file must never
//! reach the terminal raw, whichever command shows it. Every byte pagent writes passes
//! through one output edge (`cli::terminal`); these tests show the texts the finding
//! named, each reaching stdout or stderr with its escapes neutralised.

use serde_json::json;

use crate::util::{Run, SESSION, TestEnv};

const PLANTED: &str = "\u{1b}]0;pwned\u{7}\u{1b}]52;c;cHduZWQ=\u{7}\u{1b}[8mhidden\u{202e}";

/// Nothing a terminal would act on: no ESC, BEL, C1 or bidi control, in either stream.
fn assert_inert(run: &Run) {
    for (name, text) in [("stdout", &run.stdout), ("stderr", &run.stderr)] {
        let raw: Vec<char> = text
            .chars()
            .filter(|c| matches!(c, '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'))
            .collect();
        assert!(raw.is_empty(), "{name} holds {raw:?}\n{run}");
    }
}

#[test]
fn finding_9_project_text_in_prompts_errors_and_notices_never_reaches_the_terminal_raw() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    // The prompt shown by `pagent run`, and again by `pagent resume`.
    env.write(
        ".claude/prompts/architect.md",
        &format!("Design it {PLANTED} for {{{{prd_path}}}}\n"),
    );
    let run = env
        .cmd(&["run", "prd.md"])
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
    assert!(run.stdout.contains("Design it \\x1b]0;pwned\\x07"), "{run}");
    assert_inert(&run);
    assert_inert(
        &env.cmd(&["resume"])
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .run(),
    );
    env.cmd(&["cancel"]).success();

    // An error quoting a project file's path.
    env.write(
        ".claude/pagent/workflows/evil.json",
        &json!({"stages": [{"name": "s", "prompt_file": format!("x{PLANTED}.md"),
            "exit_when": {"file_exists": "a.md"}}]})
        .to_string(),
    );
    let failed = env.cmd(&["run", "prd.md", "--workflow", "evil"]).failure();
    assert!(failed.stderr.contains("x\\x1b]0;pwned"), "{failed}");
    assert_inert(&failed);

    // The ralph prompt, with a task a repository's PRD handed the user.
    assert_inert(
        &env.cmd(&["ralph", &format!("Fix {PLANTED}"), "--force"])
            .env("CLAUDE_CODE_SESSION_ID", SESSION)
            .success(),
    );
}

#[test]
fn finding_9_pagent_loop_output_never_carries_an_agents_escapes() {
    let env = TestEnv::new();
    let agent = format!(
        "printf '%s\\n' '{}'; echo '<promise>DONE</promise>'",
        PLANTED.replace('\'', "")
    );
    let out = env
        .cmd(&[
            "loop",
            "--command",
            &agent,
            "ralph",
            "--no-progress-limit",
            "0",
            &format!("task {PLANTED}"),
        ])
        .run();
    assert_eq!(out.code, Some(0), "{out}");
    assert!(out.stdout.contains("complete after 1 iteration"), "{out}");
    // The status lines name the agent's command line, planted escapes and all.
    assert!(out.stdout.contains("'\\x1b]0;pwned\\x07"), "{out}");
    assert_inert(&out);
}

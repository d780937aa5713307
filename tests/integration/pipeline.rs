//! Pipelines through the binary: the built-in prd-to-code workflow, user workflows,
//! prompt overrides, limits, and set-up validation.

use serde_json::json;

use crate::util::*;

fn start(env: &TestEnv, extra: &[&str]) -> Run {
    env.write("prd.md", "# PRD\nA todo app with a CLI.\n");
    let mut args = vec!["run", "prd.md"];
    args.extend_from_slice(extra);
    env.cmd(&args).success()
}

#[test]
fn the_five_stages_advance_in_order_as_their_files_appear() {
    let env = TestEnv::new();
    let out = start(&env, &[]);
    assert!(
        out.stdout
            .contains("architect → qa → security → implementer → verifier"),
        "{out}"
    );
    assert!(
        out.stdout
            .contains("pagent · stage 1 of 5: architect · iteration 1 of 25"),
        "{out}"
    );
    assert!(
        out.stdout.contains("prd.md") && !out.stdout.contains("{{prd_path}}"),
        "{out}"
    );
    assert!(out.stdout.contains("architecture.md"), "{out}");

    // Not met: re-prompted with what is missing.
    let reason = env.stop(&env.stop_input("Thinking.")).blocked();
    assert!(
        reason.starts_with("pagent · stage 1 of 5: architect · iteration 2 of 25\n"),
        "{reason}"
    );
    assert!(
        reason.contains("- architecture.md does not exist yet (it needs 50 non-blank lines)"),
        "{reason}"
    );
    env.write_lines("architecture.md", 12);
    let reason = env.stop(&env.stop_input("Drafted.")).blocked();
    assert!(
        reason.contains("- architecture.md has 12 of the 50 non-blank lines it needs"),
        "{reason}"
    );

    let steps: [(&str, usize, &str); 4] = [
        ("architecture.md", 50, "stage 2 of 5: qa"),
        ("test-plan.md", 30, "stage 3 of 5: security"),
        ("security-assessment.md", 20, "stage 4 of 5: implementer"),
        ("", 0, "stage 5 of 5: verifier"),
    ];
    for (file, lines, next) in steps {
        if file.is_empty() {
            for f in ["src/main.rs", "src/lib.rs", "src/todo.rs"] {
                env.write(f, "fn x() {}\n");
            }
        } else {
            env.write_lines(file, lines);
        }
        let reason = env.stop(&env.stop_input("Stage done.")).blocked();
        assert!(reason.contains(next), "{next}: {reason}");
    }
    let reason = env.stop(&env.stop_input("Verified most of it.")).blocked();
    assert!(
        reason.contains("- your last message has no line <promise>DONE</promise>"),
        "{reason}"
    );
    let message = env
        .stop(&env.stop_input("Everything holds.\n<promise>DONE</promise>"))
        .allowed()
        .unwrap();
    assert!(
        message.starts_with("pagent: prd-to-code complete: all 5 stages done"),
        "{message}"
    );
    let state = env.state();
    assert_eq!(state["status"], "complete");
    assert_eq!(state["iterations"], json!([3, 1, 1, 1, 2]));
    assert_eq!(env.stop(&env.stop_input("bye")).allowed(), None);
}

#[test]
fn max_stages_stops_early() {
    let env = TestEnv::new();
    start(&env, &["--max-stages", "2"]);
    env.write_lines("architecture.md", 50);
    assert!(
        env.stop(&env.stop_input("a"))
            .blocked()
            .contains("stage 2 of 2: qa")
    );
    env.write_lines("test-plan.md", 30);
    let message = env.stop(&env.stop_input("b")).allowed().unwrap();
    assert!(
        message.contains("2 of 5 stages done (max_stages 2)"),
        "{message}"
    );
}

#[test]
fn max_iterations_gives_up_and_allows_with_a_message() {
    let env = TestEnv::new();
    start(&env, &["--max-iterations", "3", "--no-progress-limit", "0"]);
    env.stop(&env.stop_input("1")).blocked();
    let reason = env.stop(&env.stop_input("2")).blocked();
    assert!(reason.contains("iteration 3 of 3"), "{reason}");
    let message = env.stop(&env.stop_input("3")).allowed().unwrap();
    assert!(
        message.contains("gave up: stage architect used all 3 iterations"),
        "{message}"
    );
    assert_eq!(env.state()["status"], "gave_up");
    let status = env.cmd(&["status"]).success().stdout;
    assert!(
        status.contains("ended: stage architect used all 3 iterations"),
        "{status}"
    );
}

#[test]
fn a_project_workflow_with_a_failing_check_feeds_its_output_back() {
    let env = TestEnv::new();
    env.write("check.sh", "#!/bin/sh\nif [ -f fixed ]; then echo ok; exit 0; fi\necho 'test result: FAILED. 2 failed'\nexit 1\n");
    env.write(
        ".claude/pagent/workflows/checked.json",
        &json!({
            "description": "one stage gated by a script",
            "stages": [
                {"name": "build", "prompt": "Read {{prd_path}} and make check.sh pass.", "exit_when": {"custom": "sh check.sh", "timeout": 10}},
                {"name": "review", "prompt_file": "review.md", "exit_when": {"promise_in_output": "SHIPPED"}}
            ]
        })
        .to_string(),
    );
    env.write(
        ".claude/pagent/workflows/review.md",
        "Review the work against PRD_PATH.",
    );
    // A project workflow that runs a command needs the user's trust first.
    env.write("prd.md", "# PRD\nA todo app with a CLI.\n");
    let refused = env
        .cmd(&["run", "prd.md", "--workflow", "checked"])
        .failure();
    assert!(
        refused
            .stderr
            .contains(".claude/pagent/workflows/checked.json (not trusted) would run:")
            && refused.stderr.contains("stage build: sh check.sh")
            && refused
                .stderr
                .contains("run `pagent trust .claude/pagent/workflows/checked.json`"),
        "{refused}"
    );
    let out = start(&env, &["--workflow", "checked", "--trust"]);
    assert!(
        out.stdout.contains("Read prd.md and make check.sh pass."),
        "{out}"
    );

    let reason = env.stop(&env.stop_input("tried")).blocked();
    assert!(
        reason.contains("- `sh check.sh` exited with code 1"),
        "{reason}"
    );
    assert!(reason.contains("test result: FAILED. 2 failed"), "{reason}");
    env.write("fixed", "");
    let reason = env.stop(&env.stop_input("fixed")).blocked();
    assert!(reason.contains("stage 2 of 2: review"), "{reason}");
    assert!(
        reason.ends_with("Review the work against prd.md."),
        "{reason}"
    );
    assert!(
        env.stop(&env.stop_input("<promise>SHIPPED</promise>"))
            .allowed()
            .unwrap()
            .contains("complete")
    );
}

#[test]
fn prompt_overrides_replace_a_stage_prompt() {
    let env = TestEnv::new();
    env.write(
        ".claude/prompts/architect.txt",
        "Our own architect prompt for {{prd_path}}.",
    );
    let out = start(&env, &[]);
    assert!(
        out.stdout
            .ends_with("Our own architect prompt for prd.md.\n"),
        "{out}"
    );
}

#[test]
fn a_workflow_given_by_path_is_used() {
    let env = TestEnv::new();
    env.write("flows/one.json", &json!({"stages": [{"name": "only", "prompt": "Do it.", "exit_when": {"file_exists": "done.txt"}}]}).to_string());
    let out = start(&env, &["--workflow", "flows/one.json"]);
    assert!(out.stdout.contains("the one pipeline"), "{out}");
    env.write("done.txt", "x");
    assert!(
        env.stop(&env.stop_input("ok"))
            .allowed()
            .unwrap()
            .contains("one complete")
    );
}

/// Found by the workflow fuzz target: a path with a whitespace-only last part was stored
/// in a form that normalised differently when read back, so the seal of the user's own
/// new loop did not verify and the Stop hook ignored it as "not set up by you".
#[test]
fn a_loop_whose_path_has_whitespace_parts_is_still_the_users_own() {
    let env = TestEnv::new();
    env.write(
        "flow.json",
        &json!({"stages": [{"name": "odd", "prompt": "Make the file.",
                            "exit_when": {"file_exists": "src/ 2   $ /   "}}]})
        .to_string(),
    );
    start(&env, &["--workflow", "flow.json"]);
    assert_eq!(
        env.state()["stages"][0]["exit_when"]["file_exists"],
        "src/ 2   $"
    );
    let reason = env.stop(&env.stop_input("not yet")).blocked();
    assert!(reason.contains("src/ 2   $ does not exist yet"), "{reason}");
    env.write("src/ 2   $", "made\n");
    let message = env.stop(&env.stop_input("made it")).allowed().unwrap();
    assert!(message.contains("flow complete"), "{message}");
    let log = env.read(".claude/pagent/events.jsonl");
    assert!(!log.contains("unsealed"), "{log}");
}

#[test]
fn invalid_workflows_are_rejected_at_setup_with_the_field_and_reason() {
    let env = TestEnv::new();
    env.write("prd.md", "# PRD\n");
    let cases = [
        (
            json!({"stages": [{"name": "a", "prompt": "p", "exit_when": {"magic": 1}}]}),
            "stages[0].exit_when: unknown condition",
        ),
        (
            json!({"stages": [{"name": "a", "prompt": "p", "exit_when": {"file_exists": "../x"}}]}),
            "stages[0].exit_when.file_exists",
        ),
        (
            json!({"stages": [{"name": "a", "prompt": "p", "exit_when": {"file_exists": "x", "min_lines": "5"}}]}),
            "stages[0].exit_when.min_lines",
        ),
        (
            json!({"stages": [{"name": "a", "prompt": "p"}]}),
            "stages[0].exit_when: every stage needs an exit condition",
        ),
        (
            json!({"stages": [{"name": "a", "prompt_file": "missing.md", "exit_when": {"file_exists": "x"}}]}),
            "missing.md",
        ),
        (json!({"stage": []}), "stage: unknown field"),
    ];
    for (workflow, expected) in cases {
        env.write("bad.json", &workflow.to_string());
        let out = env
            .cmd(&["run", "prd.md", "--workflow", "bad.json"])
            .failure();
        assert!(out.stderr.contains(expected), "{workflow}: {out}");
        assert!(!env.exists(".claude/pagent-pipeline.json"));
    }
    let out = env
        .cmd(&["run", "prd.md", "--workflow", "nonesuch"])
        .failure();
    assert!(
        out.stderr.contains("no workflow named \"nonesuch\""),
        "{out}"
    );
}

#[test]
fn a_symlink_out_of_the_project_is_refused_at_setup() {
    let env = TestEnv::new();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), env.path("docs")).unwrap();
    env.write("prd.md", "# PRD\n");
    env.write("flow.json", &json!({"stages": [{"name": "a", "prompt": "p", "exit_when": {"directory_exists": "docs"}}]}).to_string());
    let out = env
        .cmd(&["run", "prd.md", "--workflow", "flow.json"])
        .failure();
    assert!(out.stderr.contains("leads outside the project"), "{out}");
}

#[test]
fn the_prd_must_be_a_non_empty_text_file() {
    let env = TestEnv::new();
    env.write("empty.md", "");
    env.write("blank.md", "  \n\n");
    std::fs::write(env.path("binary.md"), b"\x00\x01\x02").unwrap();
    std::fs::write(env.path("latin1.md"), b"caf\xe9").unwrap();
    for (prd, expected) in [
        ("missing.md", "does not exist"),
        ("empty.md", "is empty"),
        ("blank.md", "only whitespace"),
        ("binary.md", "NUL bytes"),
        ("latin1.md", "not UTF-8"),
        (".", "not a file"),
    ] {
        let out = env.cmd(&["run", prd]).failure();
        assert!(out.stderr.contains(expected), "{prd}: {out}");
    }
}

#[test]
fn slash_command_text_is_parsed_without_a_shell() {
    let env = TestEnv::new();
    env.write("my prd.md", "# PRD\n");
    let out = env
        .cmd(&["run", "--stdin-args"])
        .stdin("\"my prd.md\" --max-stages 1 --max-iterations 4\n")
        .success();
    assert!(
        out.stdout
            .contains("for my prd.md: architect (up to 4 iterations per stage, giving up after 3 turns in a row that change no file). To stop it: Esc, then /pagent:cancel."),
        "{out}"
    );
}

/// A slash command's error is text with exit 0: Claude Code would otherwise show the
/// whole `!` block as "Shell command failed for pattern ..." (issue 10).
#[test]
fn slash_command_errors_are_text_with_exit_0() {
    let env = TestEnv::new();
    for (stdin, expected) in [
        ("\n", "pagent: error: name the PRD"),
        (
            "missing.md",
            "pagent: error: the PRD missing.md does not exist",
        ),
        (
            "prd.md --max-stages zero",
            "pagent: error: invalid value 'zero' for --max-stages: invalid digit found in string\nNothing was started.",
        ),
    ] {
        let out = env.cmd(&["run", "--stdin-args"]).stdin(stdin).success();
        assert!(out.stdout.starts_with(expected), "{stdin:?}: {out}");
        assert!(out.stdout.contains("Nothing was started."), "{out}");
        assert!(out.stderr.is_empty(), "{out}");
        assert!(!env.exists(".claude/pagent-pipeline.json"));
    }
    // From a terminal, an error is still an error.
    let out = env.cmd(&["run", "missing.md"]).failure();
    assert!(out.stderr.contains("does not exist"), "{out}");
}

//! Pipelines and checks: the PRD-to-code pipeline through all its stages, a failing
//! check command fed back until it passes, backpressure on an edited JSON file.

use super::*;

fn lines(n: usize, what: &str) -> String {
    (1..=n).map(|i| format!("{what} line {i}\n")).collect()
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn the_prd_to_code_pipeline_runs_all_five_stages_in_order() {
    let e2e_paths = |e2e: &E2e, rel: &str| e2e.path(rel);
    let e2e = E2e::start_with(|e2e| {
        vec![
            Reply::write(
                &e2e_paths(e2e, "architecture.md"),
                &lines(60, "architecture"),
            ),
            Reply::text("Architecture written."),
            Reply::write(&e2e_paths(e2e, "test-plan.md"), &lines(10, "test")),
            Reply::text("Test plan written."),
            Reply::write(&e2e_paths(e2e, "test-plan.md"), &lines(35, "test")),
            Reply::text("Test plan extended."),
            Reply::write(
                &e2e_paths(e2e, "security-assessment.md"),
                &lines(25, "threat"),
            ),
            Reply::text("Assessment written."),
            Reply::write(&e2e_paths(e2e, "src/main.rs"), "fn main() {}\n"),
            Reply::write(&e2e_paths(e2e, "src/lib.rs"), "pub fn todo() {}\n"),
            Reply::write(&e2e_paths(e2e, "src/store.rs"), "pub struct Store;\n"),
            Reply::text("Implemented."),
            Reply::text("Verified against the PRD; tests pass.\n<promise>DONE</promise>"),
        ]
    });
    e2e.write(
        "prd.md",
        "# PRD\nA command-line todo list with add, list and done.\n",
    );
    let run = e2e.claude("/pagent:run prd.md").run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 13);

    let first = e2e.mock.all_text(0);
    assert!(
        first.contains("pagent · stage 1 of 5: architect · iteration 1 of 25"),
        "{first}"
    );
    assert!(
        first.contains("prd.md") && !first.contains("{{prd_path}}"),
        "{first}"
    );
    let expectations = [
        (2, "pagent · stage 2 of 5: qa · iteration 1 of 25"),
        (4, "pagent · stage 2 of 5: qa · iteration 2 of 25"),
        (6, "pagent · stage 3 of 5: security · iteration 1 of 25"),
        (8, "pagent · stage 4 of 5: implementer · iteration 1 of 25"),
        (12, "pagent · stage 5 of 5: verifier · iteration 1 of 25"),
    ];
    for (request, header) in expectations {
        let told = e2e.mock.stop_feedback(request);
        assert!(told.starts_with(header), "request {request}: {told}");
    }
    let costs = crate::harness::context_costs(&e2e, &run, "prd-to-code");
    assert_eq!(costs.len(), 5);
    for cost in &costs {
        assert_eq!(cost.copies, crate::harness::reason_copies(), "{cost:?}");
    }
    let missing = e2e.mock.stop_feedback(4);
    assert!(
        missing.contains("- test-plan.md has 10 of the 30 non-blank lines it needs"),
        "{missing}"
    );
    assert!(missing.contains("test-plan.md"), "{missing}");
    let status = e2e.status();
    assert_eq!(status["status"], "complete", "{status}");
    assert_eq!(status["iterations"], 6);
    let last = run.stop_hook_outputs().pop().unwrap();
    assert!(
        last["systemMessage"]
            .as_str()
            .unwrap()
            .starts_with("pagent: prd-to-code complete: all 5 stages done"),
        "{last}"
    );
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn a_failing_check_command_feeds_its_output_back_until_it_passes() {
    let e2e = E2e::start_with(|e2e| {
        vec![
            Reply::text("Tried."),
            Reply::write(&e2e.path("fixed.txt"), "ok\n"),
            Reply::text("Fixed it."),
        ]
    });
    e2e.write("prd.md", "# PRD\nMake the check pass.\n");
    e2e.write("check.sh", "#!/bin/sh\ngrep -q ok fixed.txt 2>/dev/null && exit 0\necho 'CHECK FAILED: fixed.txt does not say ok'\nexit 3\n");
    e2e.write(
        ".claude/pagent/workflows/checked.json",
        &json!({"stages": [{"name": "fix", "prompt": "Make check.sh pass (see {{prd_path}}).", "exit_when": {"custom": "sh check.sh", "timeout": 20}}]}).to_string(),
    );
    let run = e2e
        .claude("/pagent:run prd.md --workflow checked --trust")
        .run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 3);
    let told = e2e.mock.stop_feedback(1);
    assert!(
        told.contains("- `sh check.sh` exited with code 3"),
        "{told}"
    );
    assert!(
        told.contains("CHECK FAILED: fixed.txt does not say ok"),
        "{told}"
    );
    assert_eq!(e2e.status()["status"], "complete");
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn backpressure_feeds_a_json_error_back_at_once_and_goes_quiet_when_fixed() {
    let e2e = E2e::start_with(|e2e| {
        vec![
            Reply::write(
                &e2e.path("config.json"),
                "{\n  \"name\": \"demo\",\n  \"port\": \n}\n",
            ),
            Reply::write(
                &e2e.path("config.json"),
                "{\n  \"name\": \"demo\",\n  \"port\": 8080\n}\n",
            ),
            Reply::text("Config fixed.\n<promise>DONE</promise>"),
        ]
    });
    let run = e2e.claude("/pagent:ralph Write config.json").run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 3);
    let after_bad_write = e2e.mock.told_text(1);
    assert!(
        after_bad_write.contains(
            "PostToolUse:Write hook additional context: pagent checked config.json after your edit"
        ),
        "{after_bad_write}"
    );
    assert!(
        after_bad_write.contains("config.json: line 4, column 1: expected value"),
        "{after_bad_write}"
    );
    let after_fix = e2e.mock.told_text(2);
    assert!(
        !after_fix.contains("hook additional context"),
        "a clean file must add no context: {after_fix}"
    );
    assert_eq!(run.hook_responses("PostToolUse").len(), 2);
    let status = e2e.pagent(&["status"]);
    let status = String::from_utf8_lossy(&status.stdout);
    assert!(
        status.contains("JSON syntax config.json: passed"),
        "{status}"
    );
}

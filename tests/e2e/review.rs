//! The `review` exit condition with real processes: the worker is Claude Code (in a
//! session with the Stop hook, or started afresh by `pagent loop`), and so is the
//! reviewer, a second `claude -p` that pagent starts in the project. Both talk to the same
//! mock, whose script therefore interleaves them: worker, reviewer, worker, reviewer.

use serde_json::Value;

use crate::harness::{E2e, claude_agent_args, claude_binary};
use crate::mock::Reply;

const CRITERIA: &str = "the parser handles the empty input, with a test for it";
const NOT_MET: &str = "I read src/parse.rs.\n{\"met\": false, \"missing\": [\"no test for the empty input\"], \"files\": [\"src/parse.rs\"]}";
const MET: &str = "Checked again.\n{\"met\": true, \"missing\": []}";

/// The names of the tools a request offered the model.
fn tools(request: &Value) -> Vec<String> {
    request["tools"]
        .as_array()
        .map(|tools| {
            tools
                .iter()
                .filter_map(|t| t["name"].as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default()
}

/// What every reviewer request must look like: a fresh conversation holding the criteria
/// and the answer format, without the tools that write.
fn assert_reviewer_request(e2e: &E2e, index: usize) {
    let request = &e2e.mock.requests()[index];
    let told = e2e.mock.all_text(index);
    assert!(
        told.contains("You are an independent reviewer"),
        "request {index}: {told}"
    );
    assert!(told.contains(CRITERIA), "request {index}: {told}");
    assert!(told.contains("Parse the input"), "the task: {told}");
    assert!(told.contains("\"met\""), "the answer format: {told}");
    let offered = tools(request);
    assert!(offered.iter().any(|t| t == "Read"), "{offered:?}");
    for edit in ["Write", "Edit", "NotebookEdit"] {
        assert!(
            !offered.iter().any(|t| t == edit),
            "the reviewer may {edit}: {offered:?}"
        );
    }
}

fn review_events(e2e: &E2e) -> Vec<Value> {
    std::fs::read_to_string(e2e.path(".claude/pagent/events.jsonl"))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|e| e["action"] == "review")
        .collect()
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn ralph_review_sends_the_reviewers_finding_back_until_it_agrees() {
    let e2e = E2e::start(vec![
        Reply::text("Wrote the parser.\n<promise>DONE</promise>"),
        Reply::text(NOT_MET),
        Reply::text("Added the empty-input test.\n<promise>DONE</promise>"),
        Reply::text(MET),
    ]);
    let run = e2e
        .claude(&format!(
            "/pagent:ralph Parse the input --review '{CRITERIA}' --max-iterations 5"
        ))
        .env("PAGENT_REVIEWER_BIN", claude_binary())
        .run();
    assert_eq!(run.code, Some(0));
    assert_eq!(e2e.mock.requests().len(), 4);
    assert_reviewer_request(&e2e, 1);
    assert_reviewer_request(&e2e, 3);
    // The worker's re-prompt carries the reviewer's finding.
    let told = e2e.mock.stop_feedback(2);
    assert!(told.contains("no test for the empty input"), "{told}");
    assert!(told.contains("src/parse.rs"), "{told}");
    assert!(told.contains("iteration 2 of 5"), "{told}");
    let status = e2e.status();
    assert_eq!(status["status"], "complete", "{status}");
    assert_eq!(status["review"]["met"], true, "{status}");
    assert_eq!(status["review"]["iteration"], 2, "{status}");
    let reviews = review_events(&e2e);
    assert_eq!(reviews.len(), 2, "{reviews:?}");
    assert!(
        reviews[0]["detail"]
            .as_str()
            .unwrap()
            .contains("no test for the empty input")
    );
}

#[test]
#[ignore = "end-to-end: needs the Claude Code CLI (scripts/test.sh runs it)"]
fn pagent_loop_review_sends_the_finding_to_the_next_fresh_worker() {
    let e2e = E2e::start(vec![
        Reply::text("Wrote the parser.\n<promise>DONE</promise>"),
        Reply::text(NOT_MET),
        Reply::text("Added the empty-input test.\n<promise>DONE</promise>"),
        Reply::text(MET),
    ]);
    let out = e2e.pagent_loop(&claude_agent_args(&[
        "ralph",
        "--no-progress-limit",
        "0",
        "--review",
        CRITERIA,
        "Parse the input",
    ]));
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(e2e.mock.requests().len(), 4);
    assert_reviewer_request(&e2e, 1);
    assert_reviewer_request(&e2e, 3);
    let second = e2e.mock.all_text(2);
    assert!(second.contains("iteration 2 of 25"), "{second}");
    assert!(second.contains("no test for the empty input"), "{second}");
    let status = e2e.status();
    assert_eq!(status["status"], "complete", "{status}");
    assert_eq!(status["review"]["met"], true, "{status}");
    assert_eq!(review_events(&e2e).len(), 2);
}

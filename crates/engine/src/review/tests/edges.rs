//! The review's forms and verdicts at their edges (found by mutation testing): the
//! criteria's length limit, a blank reviewer command, where in a long answer the verdict
//! is looked for, and an object after the verdict that is not one.

use serde_json::json;

use crate::Condition;
use crate::review::{MAX_CRITERIA_CHARS, parse_verdict};

#[test]
fn criteria_may_be_exactly_as_long_as_the_limit() {
    let review = |chars: usize| {
        Condition::from_json(&json!({"review": "x".repeat(chars)}), "exit_when")
            .map_err(|e| e.field)
    };
    assert!(review(MAX_CRITERIA_CHARS).is_ok());
    assert_eq!(
        review(MAX_CRITERIA_CHARS + 1).unwrap_err(),
        "exit_when.review"
    );
}

#[test]
fn a_blank_reviewer_command_is_refused() {
    for line in ["", "   "] {
        let err = Condition::from_json(
            &json!({"review": "x", "reviewer_command": line}),
            "exit_when",
        )
        .unwrap_err();
        assert_eq!(err.field, "exit_when.reviewer_command", "{line:?}");
    }
}

/// The verdict is searched for in the answer's last 64 KiB, so a reviewer may write a
/// page of prose after it.
#[test]
fn a_verdict_followed_by_prose_is_found() {
    let text = format!(
        "{{\"met\": true}}\n{}",
        "The tests pass and cover the edge cases. ".repeat(100)
    );
    assert!(parse_verdict(&text).unwrap().met);
}

/// Only an object with a true or false `met` is the verdict: a later object without
/// one (a quoted config, a note) does not replace it.
#[test]
fn an_object_after_the_verdict_is_not_the_verdict() {
    let text = "{\"met\": true}\nI also looked at {\"strict\": 1} in tsconfig.json.";
    assert!(parse_verdict(text).unwrap().met);
}

//! The review condition's JSON forms and the verdict's: what parses, what is refused
//! and with which field named.

use serde_json::json;

use super::{MET, NOT_MET};
use crate::Condition;
use crate::review::*;

#[test]
fn the_forms_parse_round_trip_and_count_as_commands() {
    for value in [
        json!({"review": "tests cover the empty input", "reviewer": "claude", "timeout": 240}),
        json!({"review": "x", "reviewer": "codex", "timeout": 10}),
        json!({"review": "x", "reviewer_command": "scripts/review.sh", "timeout": 480}),
        json!({"all": [{"command": ["cargo", "test"], "timeout": 60}, {"review": "x", "reviewer": "opencode", "timeout": 60}]}),
    ] {
        let condition = Condition::from_json(&value, "exit_when").unwrap();
        assert_eq!(condition.to_json(), value);
        assert!(condition.runs_commands(), "{value}");
        assert!(condition.review().is_some());
    }
    let condition = Condition::from_json(&json!({"review": "x"}), "exit_when").unwrap();
    assert_eq!(
        condition.review().unwrap(),
        &Review {
            criteria: "x".into(),
            reviewer: Reviewer::Claude,
            timeout_secs: DEFAULT_REVIEW_TIMEOUT_SECS
        }
    );
    let commands = Condition::from_json(
        &json!({"review": "x", "reviewer_command": "sh review.sh"}),
        "exit_when",
    )
    .unwrap()
    .commands();
    assert_eq!(commands, vec!["reviewer command: sh review.sh".to_owned()]);
}

#[test]
fn invalid_reviews_name_the_field() {
    let cases = [
        (json!({"review": ""}), "exit_when.review", "criteria"),
        (
            json!({"review": "x", "reviewer": "gpt"}),
            "exit_when.reviewer",
            "expected",
        ),
        (
            json!({"review": "x", "reviewer": "claude", "reviewer_command": "a"}),
            "exit_when.reviewer_command",
            "not both",
        ),
        (
            json!({"review": "x", "timeout": 5}),
            "exit_when.timeout",
            "10 to 480",
        ),
        (
            json!({"review": "x", "timeout": 600}),
            "exit_when.timeout",
            "Stop hook",
        ),
        (
            json!({"review": "x", "model": "y"}),
            "exit_when.model",
            "not a field",
        ),
        (
            json!({"any": [{"review": "x"}, {"promise_in_output": "D"}]}),
            "exit_when.any[0]",
            "top-level",
        ),
        (
            json!({"all": [{"all": [{"review": "x"}]}]}),
            "exit_when.all[0].all[0]",
            "top-level",
        ),
        (
            json!({"all": [{"review": "x"}, {"review": "y"}]}),
            "exit_when",
            "one review per stage",
        ),
        (
            json!({"review": "x".repeat(MAX_CRITERIA_CHARS + 1)}),
            "exit_when.review",
            "longer",
        ),
    ];
    for (value, field, words) in cases {
        let err = Condition::from_json(&value, "exit_when").unwrap_err();
        assert_eq!(err.field, field, "{value}");
        assert!(err.reason.contains(words), "{value}: {}", err.reason);
    }
}

#[test]
fn verdicts_are_read_from_the_last_object_with_met() {
    let ok = |text: &str| parse_verdict(text).unwrap();
    assert_eq!(
        ok(NOT_MET),
        Verdict {
            met: false,
            missing: vec!["no test for the empty input".into()],
            files: vec!["src/parse.rs:12".into()],
        }
    );
    assert!(ok(MET).met);
    // An earlier object (a quoted example) loses to the final verdict.
    let text =
        "The format is {\"met\": true}. My verdict:\n{\"met\": false, \"missing\": \"a test\"}";
    assert_eq!(ok(text).missing, vec!["a test".to_owned()]);
    // Objects without `met`, nested braces and trailing prose are fine.
    let text = "{\"note\": 1}\n{\"met\": true, \"files\": [\"a {b}\"]}\nThanks.";
    assert!(ok(text).met);
    // A huge answer is searched only near its end, and bounded.
    let text = format!("{}{}", "{".repeat(100_000), "{\"met\": true}");
    assert!(ok(&text).met);
}

/// Finding 3: a "not met" verdict holding a nested `{"met": true}` (in a note, a list, a
/// quoted example) completed the loop, because the innermost, rightmost object was read.
/// Only top-level objects count now.
#[test]
fn finding_3_a_nested_met_true_never_counts() {
    for text in [
        "{\"met\": false, \"missing\": [\"no test\"], \"note\": {\"met\": true}}",
        "{\"met\": false, \"missing\": [\"no test\"], \"evidence\": [{\"met\": true}]}",
        "Verdict:\n{\"met\": false, \"missing\": [\"a {\\\"met\\\": true} in a string\"], \"x\": [[{\"met\": true, \"missing\": []}]]}\n",
    ] {
        let verdict = parse_verdict(text).unwrap();
        assert!(!verdict.met, "{text}");
        assert_eq!(verdict.missing.len(), 1, "{text}");
    }
    // Objects inside a top-level array are nested too: no verdict at all.
    assert!(parse_verdict("[{\"met\": true}]").is_err());
    // A verdict after an unclosed brace in prose is still found.
    assert!(
        parse_verdict("I used {braces and [brackets\n{\"met\": true}")
            .unwrap()
            .met
    );
}

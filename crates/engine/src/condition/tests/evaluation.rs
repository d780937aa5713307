//! Evaluation, leaf by leaf: whether each form holds at its edges, and the two wordings
//! of each finding (a sentence for the model, a few words for status and the log).

use serde_json::json;

use super::parse;
use crate::testing::MemoryWorld;
use crate::world::{CheckOutcome, Probe};
use crate::{Evaluation, TAIL_CAP};

fn evaluate(condition: serde_json::Value, world: MemoryWorld) -> Evaluation {
    let mut world = world;
    parse(condition).unwrap().evaluate(&mut world)
}

/// (met, detail, short) of the only finding.
fn one(evaluation: &Evaluation) -> (bool, &str, &str) {
    assert_eq!(evaluation.findings.len(), 1, "{evaluation:?}");
    let f = &evaluation.findings[0];
    assert_eq!(f.met, evaluation.met);
    (f.met, f.detail.as_str(), f.short.as_str())
}

#[test]
fn counts_hold_from_their_minimum_and_say_so_in_the_singular_or_plural() {
    let file = |lines| {
        evaluate(
            json!({"file_exists": "a.md", "min_lines": 1}),
            MemoryWorld::default().file("a.md", lines),
        )
    };
    assert_eq!(
        one(&file(1)),
        (
            true,
            "a.md has 1 non-blank line (it needs 1)",
            "a.md 1/1 lines"
        )
    );
    // The real count against the minimum, never the minimum twice (issue 30).
    assert_eq!(
        one(&file(60)),
        (
            true,
            "a.md has 60 non-blank lines (it needs 1)",
            "a.md 60/1 lines"
        )
    );
    assert_eq!(
        one(&file(0)),
        (
            false,
            "a.md has 0 of the 1 non-blank line it needs",
            "a.md 0/1 lines"
        )
    );
    let dir = |files| {
        evaluate(
            json!({"directory_exists": "src", "min_files": 3}),
            MemoryWorld::default().dir("src", files),
        )
    };
    assert_eq!(
        one(&dir(3)),
        (
            true,
            "src/ has at least the 3 files it needs",
            "src/ 3+/3 files"
        )
    );
    assert_eq!(
        one(&dir(2)),
        (
            false,
            "src/ has 2 of the 3 files it needs",
            "src/ 2/3 files"
        )
    );
    assert!(dir(7).met, "more than enough holds");
    assert_eq!(
        one(&evaluate(
            json!({"file_exists": "b.md", "min_lines": 2}),
            MemoryWorld::default()
        )),
        (
            false,
            "b.md does not exist yet (it needs 2 non-blank lines)",
            "b.md missing"
        )
    );
}

#[test]
fn a_path_of_the_wrong_kind_outside_or_unreadable_never_holds() {
    let world = MemoryWorld::default()
        .dir("a.md", 4)
        .file("src", 4)
        .probe("link.md", Probe::Outside)
        .probe("locked.md", Probe::Error("permission denied".into()));
    let cases = [
        (
            json!({"file_exists": "a.md"}),
            "a.md is a folder, not a file",
            "a.md wrong kind",
        ),
        (
            json!({"directory_exists": "src"}),
            "src is a file, not a folder",
            "src/ wrong kind",
        ),
        (
            json!({"file_exists": "link.md"}),
            "link.md leads outside the project (symlink) and is not counted",
            "link.md outside project",
        ),
        (
            json!({"file_exists": "locked.md"}),
            "locked.md could not be read: permission denied",
            "locked.md unreadable",
        ),
    ];
    for (condition, detail, short) in cases {
        let evaluation = evaluate(condition.clone(), world.clone());
        assert_eq!(one(&evaluation), (false, detail, short), "{condition}");
    }
}

#[test]
fn a_promise_is_seen_only_on_its_own_line_of_a_readable_message() {
    let condition = json!({"promise_in_output": "DONE"});
    assert_eq!(
        one(&evaluate(
            condition.clone(),
            MemoryWorld::default().message("All set.\n<promise>DONE</promise>")
        )),
        (
            true,
            "the promise <promise>DONE</promise> was made",
            "promise DONE made"
        )
    );
    assert_eq!(
        one(&evaluate(
            condition.clone(),
            MemoryWorld::default().message("I will say DONE later")
        )),
        (
            false,
            "your last message has no line <promise>DONE</promise> of its own",
            "waiting for <promise>DONE</promise>"
        )
    );
    assert_eq!(
        one(&evaluate(condition, MemoryWorld::default())),
        (
            false,
            "your last message could not be read, so the promise <promise>DONE</promise> was not seen",
            "waiting for <promise>DONE</promise>"
        )
    );
}

#[test]
fn every_way_a_command_ends_is_worded_and_only_output_is_kept() {
    let condition = json!({"command": ["make", "check"]});
    let ran = |outcome: CheckOutcome| {
        evaluate(
            condition.clone(),
            MemoryWorld::default().check("make check", outcome),
        )
    };
    let passed = ran(CheckOutcome::Passed);
    assert_eq!(
        one(&passed),
        (true, "`make check` passed", "`make check` passed")
    );
    assert_eq!(passed.findings[0].output_tail, None);

    let killed = ran(CheckOutcome::Failed {
        code: None,
        tail: "  \n".into(),
    });
    assert_eq!(
        one(&killed),
        (
            false,
            "`make check` was killed by a signal",
            "`make check` failed"
        )
    );
    assert_eq!(
        killed.findings[0].output_tail, None,
        "blank output is no output"
    );

    let slow = ran(CheckOutcome::TimedOut {
        after_secs: 9,
        tail: "x".repeat(3 * TAIL_CAP),
    });
    assert_eq!(
        one(&slow),
        (
            false,
            "`make check` did not finish within 9 s and was stopped",
            "`make check` timed out"
        )
    );
    let tail = slow.findings[0].output_tail.as_deref().unwrap();
    assert!(tail.ends_with(&"x".repeat(TAIL_CAP)) && tail.len() < TAIL_CAP + 100);

    assert_eq!(
        one(&ran(CheckOutcome::Error("not found".into()))),
        (
            false,
            "`make check` could not run: not found",
            "`make check` could not run"
        )
    );
    assert_eq!(
        one(&ran(CheckOutcome::NotRun)),
        (
            false,
            "`make check` runs when the model stops",
            "`make check` (checked at stop)"
        )
    );
}

/// `any` keeps the findings of the alternative that held; when none holds, one finding
/// joins them all and carries the first command output among them.
#[test]
fn any_reports_the_alternative_that_held_or_one_finding_for_all() {
    let condition = json!({"any": [
        {"promise_in_output": "DONE"},
        {"custom": "make check"},
        {"file_exists": "a.md", "min_lines": 2}
    ]});
    let failing = CheckOutcome::Failed {
        code: Some(2),
        tail: "error: x\n".into(),
    };
    let world = MemoryWorld::default()
        .message("not yet")
        .check("make check", failing);

    let held = evaluate(condition.clone(), world.clone().file("a.md", 2));
    assert!(held.met);
    assert_eq!(held.summary(), "a.md 2/2 lines");
    assert!(held.missing().is_empty());

    let none = evaluate(condition, world);
    assert_eq!(
        one(&none),
        (
            false,
            "none of the alternatives holds: your last message has no line <promise>DONE</promise> of its own; or `make check` exited with code 2; or a.md does not exist yet (it needs 2 non-blank lines)",
            "waiting for <promise>DONE</promise> | `make check` failed | a.md missing"
        )
    );
    assert_eq!(none.findings[0].output_tail.as_deref(), Some("error: x\n"));
    assert_eq!(none.missing().len(), 1);
}

/// `all` evaluates every item even after one fails, so the model hears everything that
/// is missing at once, not one thing per stop.
#[test]
fn all_reports_every_item_and_holds_only_when_each_does() {
    let condition = json!({"all": [
        {"file_exists": "a.md"},
        {"file_exists": "b.md"},
        {"directory_exists": "src", "min_files": 1}
    ]});
    let some = evaluate(condition.clone(), MemoryWorld::default().file("b.md", 0));
    assert!(!some.met);
    assert_eq!(some.summary(), "a.md missing, b.md exists, src/ missing");
    let missing: Vec<&str> = some.missing().iter().map(|f| f.short.as_str()).collect();
    assert_eq!(missing, ["a.md missing", "src/ missing"]);
    let every = evaluate(
        condition,
        MemoryWorld::default()
            .file("a.md", 0)
            .file("b.md", 0)
            .dir("src", 1),
    );
    assert!(every.met);
}

/// Evaluated alone (as `pagent status` does), a review is never met and never run; its
/// finding says whether it is due: pending once every other item holds, waiting before.
#[test]
fn a_review_waits_until_every_other_item_holds() {
    let condition = json!({"all": [
        {"file_exists": "a.md"},
        {"file_exists": "b.md"},
        {"review": "tests cover the empty input"}
    ]});
    for (world, short) in [
        (
            MemoryWorld::default(),
            "a.md missing, b.md missing, then a review",
        ),
        (
            MemoryWorld::default().file("a.md", 1),
            "a.md exists, b.md missing, then a review",
        ),
        (
            MemoryWorld::default().file("b.md", 1),
            "a.md missing, b.md exists, then a review",
        ),
        (
            MemoryWorld::default().file("a.md", 1).file("b.md", 1),
            "a.md exists, b.md exists, review pending",
        ),
    ] {
        let evaluation = evaluate(condition.clone(), world);
        assert!(!evaluation.met);
        assert_eq!(evaluation.summary(), short);
        assert_eq!(evaluation.review_at, Some(2));
    }
}

/// A 60-line architecture.md showed as "50/50 lines": the count stopped at the minimum.
/// The file is counted to its end now, and the words give that count against the minimum.
#[test]
fn issue_30_a_60_line_file_shows_its_real_count_against_the_minimum() {
    let evaluation = evaluate(
        json!({"file_exists": "architecture.md", "min_lines": 50}),
        MemoryWorld::default().file("architecture.md", 60),
    );
    assert_eq!(
        one(&evaluation),
        (
            true,
            "architecture.md has 60 non-blank lines (it needs 50)",
            "architecture.md 60/50 lines"
        )
    );
}

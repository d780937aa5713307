//! [`decide_iteration`] (through the Stop hook and directly): advance, re-prompt, give up.

use serde_json::json;

use super::*;
use crate::testing::MemoryWorld;
use crate::{Action, CheckOutcome, Status};

#[test]
fn ralph_blocks_with_the_task_until_the_promise_then_completes() {
    let state = ralph(5);
    let outcome = decide_stop(
        &event(Some("s1")),
        &state,
        &mut MemoryWorld::default()
            .message("First pass done.")
            .tree("t1"),
    );
    let reason = block_reason(&outcome.decision);
    assert!(
        reason.starts_with("pagent · ralph loop · iteration 2 of 5\n"),
        "{reason}"
    );
    assert!(reason.contains("did not make the promise"));
    assert!(
        reason.ends_with("\n\nFix it's \"parser\"; $(rm -rf x)"),
        "{reason}"
    );
    let state = outcome.write.unwrap();
    assert_eq!(state.iterations, [2]);

    let outcome = decide_stop(
        &event(Some("s1")),
        &state,
        &mut MemoryWorld::default().message("Finished.\n<promise>DONE</promise>"),
    );
    assert!(matches!(&outcome.decision, Decision::Notify(m) if m.contains("complete")));
    let done = outcome.write.unwrap();
    assert_eq!(done.status, Status::Complete);
    assert_eq!(done.iterations, [2]);
    assert_eq!(
        done.end_reason.as_deref(),
        Some("the promise was made after 2 iterations")
    );
}

#[test]
fn a_missing_last_message_never_counts_as_the_promise() {
    let outcome = decide_stop(
        &event(Some("s1")),
        &ralph(5),
        &mut MemoryWorld::default().tree("t1"),
    );
    assert!(block_reason(&outcome.decision).contains("did not make the promise"));
}

#[test]
fn the_pipeline_advances_stage_by_stage_and_completes() {
    let mut state = pipeline();
    let mut world = MemoryWorld::default().tree("a");
    let outcome = decide_stop(&event(Some("s1")), &state, &mut world);
    let reason = block_reason(&outcome.decision);
    assert!(
        reason.starts_with("pagent · stage 1 of 5: architect · iteration 2 of 25\n"),
        "{reason}"
    );
    assert!(reason.contains("- architecture.md does not exist yet (it needs 50 non-blank lines)"));
    // A re-prompt of the same stage is quiet: no stage prompt, a pointer to it.
    assert!(!reason.contains("write architecture.md"), "{reason}");
    assert!(
        reason.ends_with("`pagent prompt` prints them, and they are in .claude/pagent/prompt.md.")
    );
    state = outcome.write.unwrap();

    let steps = [
        (
            MemoryWorld::default().file("architecture.md", 12).tree("b"),
            Action::Block,
            "architecture.md has 12 of the 50 non-blank lines it needs",
        ),
        (
            MemoryWorld::default().file("architecture.md", 60).tree("c"),
            Action::Advance,
            "stage 2 of 5: qa · iteration 1 of 25",
        ),
        (
            MemoryWorld::default().file("test-plan.md", 30).tree("d"),
            Action::Advance,
            "stage 3 of 5: security",
        ),
        (
            MemoryWorld::default()
                .file("security-assessment.md", 25)
                .tree("e"),
            Action::Advance,
            "stage 4 of 5: implementer",
        ),
        (
            MemoryWorld::default().dir("src", 2).tree("f"),
            Action::Block,
            "src/ has 2 of the 3 files it needs",
        ),
        (
            MemoryWorld::default().dir("src", 3).tree("g"),
            Action::Advance,
            "stage 5 of 5: verifier",
        ),
        (
            MemoryWorld::default().message("checked").tree("h"),
            Action::Block,
            "has no line <promise>DONE</promise> of its own",
        ),
    ];
    for (mut world, action, expected) in steps {
        let outcome = decide_stop(&event(Some("s1")), &state, &mut world);
        assert_eq!(outcome.log.as_ref().unwrap().action, action, "{expected}");
        assert!(
            block_reason(&outcome.decision).contains(expected),
            "{expected} not in {}",
            block_reason(&outcome.decision)
        );
        state = outcome.write.unwrap();
    }
    let outcome = decide_stop(
        &event(Some("s1")),
        &state,
        &mut MemoryWorld::default().message("All good.\n<promise>DONE</promise>"),
    );
    assert!(
        matches!(&outcome.decision, Decision::Notify(m) if m.starts_with("pagent: prd-to-code complete: all 5 stages done"))
    );
    let done = outcome.write.unwrap();
    assert_eq!(done.status, Status::Complete);
    assert_eq!(done.iterations, [3, 1, 1, 2, 2]);
}

#[test]
fn max_stages_completes_early() {
    let mut state = pipeline();
    state.max_stages = 2;
    let outcome = decide_stop(
        &event(Some("s1")),
        &state,
        &mut MemoryWorld::default().file("architecture.md", 50),
    );
    assert!(block_reason(&outcome.decision).contains("stage 2 of 2: qa"));
    let state = outcome.write.unwrap();
    let outcome = decide_stop(
        &event(Some("s1")),
        &state,
        &mut MemoryWorld::default().file("test-plan.md", 30),
    );
    let done = outcome.write.unwrap();
    assert_eq!(done.status, Status::Complete);
    assert_eq!(
        done.end_reason.as_deref(),
        Some("2 of 5 stages done (max_stages 2) in 2 iterations")
    );
}

#[test]
fn max_iterations_gives_up_and_allows_with_the_reason() {
    let mut state = ralph(3);
    let mut trees = ["t1", "t2", "t3"].into_iter();
    let mut blocks = 0;
    loop {
        let mut world = MemoryWorld::default()
            .message("still working")
            .tree(trees.next().unwrap_or("tx"));
        let outcome = decide_stop(&event(Some("s1")), &state, &mut world);
        state = outcome.write.clone().unwrap();
        match outcome.decision {
            Decision::Block { .. } => blocks += 1,
            Decision::Notify(message) => {
                assert!(
                    message.contains("gave up: stage ralph used all 3 iterations"),
                    "{message}"
                );
                break;
            }
            Decision::Allow => panic!("silent allow"),
        }
        assert!(blocks < 10, "the loop did not end");
    }
    assert_eq!(blocks, 2);
    assert_eq!(state.status, Status::GaveUp);
    assert_eq!(state.iterations, [3]);
}

#[test]
fn an_unchanged_tree_for_three_stops_gives_up_and_a_change_resets_the_count() {
    let mut state = ralph(25);
    for (tree, count) in [
        ("tree0", 1),
        ("tree0", 2),
        ("tree1", 0),
        ("tree1", 1),
        ("tree1", 2),
    ] {
        let outcome = decide_stop(
            &event(Some("s1")),
            &state,
            &mut MemoryWorld::default().message("hm").tree(tree),
        );
        state = outcome.write.unwrap();
        assert_eq!(state.no_progress_count, count, "{tree}");
        assert!(state.is_active());
    }
    let outcome = decide_stop(
        &event(Some("s1")),
        &state,
        &mut MemoryWorld::default().message("hm").tree("tree1"),
    );
    let state = outcome.write.unwrap();
    assert_eq!(state.status, Status::GaveUp);
    assert!(
        state
            .end_reason
            .unwrap()
            .starts_with("3 turns in a row changed no file")
    );
}

#[test]
fn a_no_progress_limit_of_zero_never_gives_up_on_an_unchanged_tree() {
    let mut state = ralph(25);
    state.no_progress_limit = 0;
    for _ in 0..10 {
        let outcome = decide_stop(
            &event(Some("s1")),
            &state,
            &mut MemoryWorld::default().message("hm").tree("tree0"),
        );
        state = outcome.write.unwrap();
        assert!(state.is_active(), "{:?}", state.end_reason);
    }
    assert_eq!(state.iterations, [11]);
}

#[test]
fn a_failed_check_feeds_back_its_output_tail() {
    let mut state = pipeline();
    state.stages[0].exit_when =
        crate::Condition::from_json(&json!({"command": ["cargo", "test"]}), "x").unwrap();
    let tail = format!(
        "{}\ntest result: FAILED. 1 passed; 2 failed",
        "noise line\n".repeat(2_000)
    );
    let mut world = MemoryWorld::default().check(
        "cargo test",
        CheckOutcome::Failed {
            code: Some(101),
            tail,
        },
    );
    let outcome = decide_stop(&event(Some("s1")), &state, &mut world);
    let reason = block_reason(&outcome.decision);
    assert!(reason.contains("- `cargo test` exited with code 101"));
    assert!(
        reason.contains("test result: FAILED. 1 passed; 2 failed\n```"),
        "{reason}"
    );
    assert!(reason.chars().count() < 5_000);
}

/// Issue 10: a loop completed while the check of an edited file still failed.
#[test]
fn a_failing_check_of_an_edited_file_holds_completion_and_advance_back() {
    let failed = crate::FailedCheck {
        checks: "python3 -m py_compile".into(),
        output: "SyntaxError: invalid syntax (routes.py, line 3)".into(),
    };
    let mut state = ralph(5);
    state
        .failing_checks
        .insert("src/routes.py".into(), failed.clone());
    let promise = "All done.\n<promise>DONE</promise>";
    let world = || {
        MemoryWorld::default()
            .message(promise)
            .file("src/routes.py", 3)
            .tree("t")
    };
    let outcome = decide_stop(&event(Some("s1")), &state, &mut world());
    let reason = block_reason(&outcome.decision);
    assert!(
        reason.contains("- the latest check of src/routes.py failed (python3 -m py_compile)"),
        "{reason}"
    );
    assert!(
        reason.contains("SyntaxError: invalid syntax (routes.py, line 3)"),
        "{reason}"
    );
    assert!(!reason.contains("did not make the promise"), "{reason}");
    // The file fixed (the hook forgets it) or deleted: the promise completes the loop.
    let mut fixed = state.clone();
    fixed.failing_checks.clear();
    let outcome = decide_stop(&event(Some("s1")), &fixed, &mut world());
    assert!(matches!(outcome.decision, Decision::Notify(ref m) if m.contains("complete")));
    let outcome = decide_stop(
        &event(Some("s1")),
        &state,
        &mut MemoryWorld::default().message(promise),
    );
    assert!(matches!(outcome.decision, Decision::Notify(ref m) if m.contains("complete")));
    // A stage does not advance either; the gate can be turned off per workflow.
    let mut pipeline = pipeline();
    pipeline
        .failing_checks
        .insert("src/routes.py".into(), failed);
    let world = || {
        MemoryWorld::default()
            .file("architecture.md", 60)
            .file("src/routes.py", 3)
            .tree("t")
    };
    let outcome = decide_stop(&event(Some("s1")), &pipeline, &mut world());
    assert_eq!(outcome.log.unwrap().action, Action::Block);
    pipeline.backpressure = Some(crate::backpressure::BackpressureConfig {
        gate: false,
        ..Default::default()
    });
    let outcome = decide_stop(&event(Some("s1")), &pipeline, &mut world());
    assert_eq!(outcome.log.unwrap().action, Action::Advance);
}

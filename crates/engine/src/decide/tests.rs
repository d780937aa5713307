//! Table tests of the loop policy over an in-memory world.

use serde_json::json;

use super::*;
use crate::testing::MemoryWorld;
use crate::{CheckOutcome, REASON_CAP, SetupOptions, Workflow};

const NOW: Timestamp = Timestamp(1_000);

fn event(session: Option<&str>) -> StopEvent<'_> {
    StopEvent {
        session_id: session,
        seal_valid: true,
        unsealed_warned: false,
        now: NOW,
    }
}

fn ralph(max_iterations: u32) -> State {
    let options = SetupOptions {
        max_iterations: Some(max_iterations),
        session_id: Some("s1".into()),
        ..SetupOptions::default()
    };
    State::new_ralph(
        "Fix it's \"parser\"; $(rm -rf x)".into(),
        "DONE".into(),
        options,
        Some("tree0".into()),
        Timestamp(0),
    )
}

fn pipeline() -> State {
    let value = json!({
        "name": "prd-to-code",
        "stages": [
            {"name": "architect", "prompt": "write architecture.md", "exit_when": {"file_exists": "architecture.md", "min_lines": 50}},
            {"name": "qa", "prompt": "write test-plan.md", "exit_when": {"file_exists": "test-plan.md", "min_lines": 30}},
            {"name": "security", "prompt": "write security-assessment.md", "exit_when": {"file_exists": "security-assessment.md", "min_lines": 20}},
            {"name": "implementer", "prompt": "write src/", "exit_when": {"directory_exists": "src", "min_files": 3}},
            {"name": "verifier", "prompt": "verify", "exit_when": {"promise_in_output": "DONE"}}
        ]
    });
    let workflow = Workflow::from_json(&value, "x").unwrap();
    let prompts = workflow.stages.iter().map(|s| match &s.prompt {
        crate::workflow::PromptSource::Inline(text) => text.clone(),
        crate::workflow::PromptSource::File(_) => unreachable!(),
    });
    State::new_pipeline(
        &workflow,
        prompts.collect(),
        SetupOptions::default(),
        None,
        Timestamp(0),
    )
}

fn block_reason(outcome: &Outcome) -> &str {
    match &outcome.decision {
        Decision::Block { reason, .. } => reason,
        other => panic!("expected a block, got {other:?}"),
    }
}

#[test]
fn finished_and_loop_driven_states_allow_silently() {
    for status in [Status::Complete, Status::Cancelled, Status::GaveUp] {
        let mut state = ralph(5);
        state.status = status;
        let outcome = decide_stop(&event(Some("s1")), &state, &mut MemoryWorld::default());
        assert_eq!(outcome, Outcome::silent(), "{status:?}");
    }
    let mut state = ralph(5);
    state.driver = crate::Driver::Loop;
    assert_eq!(
        decide_stop(&event(Some("s1")), &state, &mut MemoryWorld::default()),
        Outcome::silent()
    );
}

#[test]
fn another_session_is_never_blocked_or_written() {
    let state = ralph(5);
    for session in [Some("s2"), None] {
        let mut world = MemoryWorld::default().message("no promise");
        let outcome = decide_stop(&event(session), &state, &mut world);
        assert_eq!(outcome.decision, Decision::Allow);
        assert_eq!(outcome.write, None);
        assert_eq!(outcome.log.unwrap().action, "other_session");
    }
}

#[test]
fn an_unclaimed_state_is_claimed_by_the_first_session_that_stops() {
    let mut state = ralph(5);
    state.session_id = None;
    let outcome = decide_stop(
        &event(Some("s9")),
        &state,
        &mut MemoryWorld::default().message("working"),
    );
    let claimed = outcome.write.unwrap();
    assert_eq!(claimed.session_id.as_deref(), Some("s9"));
    let later = decide_stop(&event(Some("s1")), &claimed, &mut MemoryWorld::default());
    assert_eq!(later.decision, Decision::Allow);
}

/// A stop that names no session (a hook input of `{}`) neither claims an unclaimed loop
/// nor is blocked by it; the loop stays free for the first named session.
#[test]
fn a_stop_without_a_session_never_claims_or_blocks() {
    for state in [ralph(5), pipeline()] {
        let mut state = state;
        state.session_id = None;
        for seal_valid in [true, false] {
            let nameless = StopEvent {
                seal_valid,
                ..event(None)
            };
            let mut world = MemoryWorld::default().message("working");
            let outcome = decide_stop(&nameless, &state, &mut world);
            assert_eq!(outcome.decision, Decision::Allow, "{:?}", state.kind);
            assert_eq!(outcome.write, None);
            assert_eq!(outcome.log.unwrap().action, "other_session");
            assert!(world.checks_run.is_empty());
        }
        let named = decide_stop(
            &event(Some("s9")),
            &state,
            &mut MemoryWorld::default().message("working"),
        );
        block_reason(&named);
    }
}

#[test]
fn an_unsealed_state_never_runs_a_command_never_blocks_and_warns_once() {
    let mut state = ralph(5);
    state.stages[0].exit_when = crate::Condition::Command(crate::Check {
        shape: crate::CheckShape::Shell("touch pwned".into()),
        timeout_secs: 5,
    });
    let mut world = MemoryWorld::default();
    let first = StopEvent {
        seal_valid: false,
        ..event(Some("s1"))
    };
    let outcome = decide_stop(&first, &state, &mut world);
    assert!(matches!(&outcome.decision, Decision::Notify(m) if m.contains("not set up by you")));
    assert_eq!(outcome.write, None);
    let again = StopEvent {
        unsealed_warned: true,
        ..first
    };
    assert_eq!(
        decide_stop(&again, &state, &mut world).decision,
        Decision::Allow
    );
    assert!(world.checks_run.is_empty());
}

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
    let reason = block_reason(&outcome);
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
    assert!(block_reason(&outcome).contains("did not make the promise"));
}

#[test]
fn the_pipeline_advances_stage_by_stage_and_completes() {
    let mut state = pipeline();
    let mut world = MemoryWorld::default().tree("a");
    let outcome = decide_stop(&event(Some("s1")), &state, &mut world);
    let reason = block_reason(&outcome);
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
            "block",
            "architecture.md has 12 of the 50 non-blank lines it needs",
        ),
        (
            MemoryWorld::default().file("architecture.md", 60).tree("c"),
            "advance",
            "stage 2 of 5: qa · iteration 1 of 25",
        ),
        (
            MemoryWorld::default().file("test-plan.md", 30).tree("d"),
            "advance",
            "stage 3 of 5: security",
        ),
        (
            MemoryWorld::default()
                .file("security-assessment.md", 25)
                .tree("e"),
            "advance",
            "stage 4 of 5: implementer",
        ),
        (
            MemoryWorld::default().dir("src", 2).tree("f"),
            "block",
            "src/ has 2 of the 3 files it needs",
        ),
        (
            MemoryWorld::default().dir("src", 3).tree("g"),
            "advance",
            "stage 5 of 5: verifier",
        ),
        (
            MemoryWorld::default().message("checked").tree("h"),
            "block",
            "has no line <promise>DONE</promise> of its own",
        ),
    ];
    for (mut world, action, expected) in steps {
        let outcome = decide_stop(&event(Some("s1")), &state, &mut world);
        assert_eq!(outcome.log.as_ref().unwrap().action, action, "{expected}");
        assert!(
            block_reason(&outcome).contains(expected),
            "{expected} not in {}",
            block_reason(&outcome)
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
    assert!(block_reason(&outcome).contains("stage 2 of 2: qa"));
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
    let reason = block_reason(&outcome);
    assert!(reason.contains("- `cargo test` exited with code 101"));
    assert!(
        reason.contains("test result: FAILED. 1 passed; 2 failed\n```"),
        "{reason}"
    );
    assert!(reason.chars().count() < 5_000);
}

#[test]
fn reasons_stay_under_the_client_cap() {
    let mut state = ralph(5);
    state.stages[0].prompt = "x".repeat(50_000);
    state.full_prompt_due = true;
    let outcome = decide_stop(
        &event(Some("s1")),
        &state,
        &mut MemoryWorld::default().message("no"),
    );
    let reason = block_reason(&outcome);
    assert!(
        reason.chars().count() <= REASON_CAP,
        "{}",
        reason.chars().count()
    );
    assert!(reason.contains("prompt cut to fit"));
}

#[test]
fn stories_advance_one_per_iteration_and_the_prompt_names_the_next_one() {
    let value = json!({"stages": [{"name": "stories", "prompt": "Implement this story:\n{{story}}", "exit_when": {"stories_pass": "prd.json"}}]});
    let workflow = Workflow::from_json(&value, "stories").unwrap();
    let state = State::new_pipeline(
        &workflow,
        vec!["Implement this story:\n{{story}}".into()],
        SetupOptions::default(),
        None,
        Timestamp(0),
    );
    let prd = |passing: &[bool]| {
        let stories: Vec<_> = passing
            .iter()
            .enumerate()
            .map(|(i, p)| json!({"id": format!("US-{i}"), "title": format!("Story {i}"), "priority": i, "passes": p}))
            .collect();
        json!({"userStories": stories}).to_string()
    };
    let mut world = MemoryWorld::default()
        .text("prd.json", &prd(&[true, false, false]))
        .tree("a");
    let outcome = decide_iteration(&state, &mut world, NOW);
    let reason = block_reason(&outcome);
    assert!(
        reason.contains("- 1 of 3 stories in prd.json pass; next: US-1: Story 1"),
        "{reason}"
    );
    assert!(
        reason.ends_with("Implement this story:\nUS-1: Story 1 (priority 1)"),
        "{reason}"
    );
    let state = outcome.write.unwrap();
    let mut world = MemoryWorld::default()
        .text("prd.json", &prd(&[true, true, true]))
        .tree("b");
    let outcome = decide_iteration(&state, &mut world, NOW);
    assert_eq!(outcome.write.unwrap().status, Status::Complete);
}

/// Every text of an outcome besides the reason is built from names a workflow or a hook
/// input chose; each fits `MESSAGE_CAP` whatever their size (a 130 KB `systemMessage`
/// was seen), and so does what the state keeps (`last_feedback`, `end_reason`).
#[test]
fn messages_feedback_and_log_details_are_capped() {
    use crate::render::MESSAGE_CAP;
    let huge = "n".repeat(130_000);
    let with_promise = |max: u32| {
        let mut state = ralph(max);
        state.stages[0].exit_when = crate::Condition::Promise(huge.clone());
        state
    };
    let mut named = pipeline();
    named.session_id = Some("s1".into());
    named.workflow = huge.clone();
    named.stages[0].name = huge.clone();
    named.stages[1].name = huge.clone();
    let mut last_stage = named.clone();
    last_stage.stage = 4;
    last_stage.stages[4].name = huge.clone();
    let mut no_progress = with_promise(25);
    no_progress.no_progress_count = 2;
    let cases: Vec<(&str, State, StopEvent<'_>, MemoryWorld)> = vec![
        (
            "block",
            with_promise(25),
            event(Some("s1")),
            MemoryWorld::default().message("no"),
        ),
        (
            "gave up",
            with_promise(1),
            event(Some("s1")),
            MemoryWorld::default().message("no"),
        ),
        (
            "no progress",
            no_progress,
            event(Some("s1")),
            MemoryWorld::default().message("no").tree("tree0"),
        ),
        (
            "advance",
            named.clone(),
            event(Some("s1")),
            MemoryWorld::default().file("architecture.md", 50),
        ),
        (
            "complete",
            last_stage,
            event(Some("s1")),
            MemoryWorld::default().message("<promise>DONE</promise>"),
        ),
        (
            "other session",
            ralph(5),
            event(Some(&huge)),
            MemoryWorld::default(),
        ),
    ];
    for (name, state, event, mut world) in cases {
        let outcome = decide_stop(&event, &state, &mut world);
        let mut texts: Vec<&str> = Vec::new();
        match &outcome.decision {
            Decision::Allow => {}
            Decision::Notify(message) => texts.push(message),
            Decision::Block { reason, message } => {
                assert!(reason.chars().count() <= REASON_CAP, "{name}: reason");
                texts.push(message);
            }
        }
        if let Some(next) = &outcome.write {
            texts.extend(next.last_feedback.as_deref());
            texts.extend(next.end_reason.as_deref());
        }
        let log = outcome.log.as_ref().unwrap();
        texts.push(&log.detail);
        texts.push(&log.stage);
        assert!(
            texts.iter().any(|t| t.ends_with("characters cut ...]")),
            "{name}: nothing was cut"
        );
        for text in texts {
            assert!(
                text.chars().count() <= MESSAGE_CAP,
                "{name}: {} characters: {}...",
                text.chars().count(),
                text.chars().take(80).collect::<String>()
            );
        }
    }
}

#[test]
fn after_a_compaction_the_re_prompt_carries_the_full_prompt_once() {
    let mut state = pipeline();
    state.session_id = Some("s1".into());
    state.full_prompt_due = true;
    let outcome = decide_stop(
        &event(Some("s1")),
        &state,
        &mut MemoryWorld::default().tree("a"),
    );
    let reason = block_reason(&outcome);
    assert!(
        reason.ends_with("The stage's instructions, again:\n\nwrite architecture.md"),
        "{reason}"
    );
    let next = outcome.write.unwrap();
    assert!(!next.full_prompt_due);
    let outcome = decide_stop(
        &event(Some("s1")),
        &next,
        &mut MemoryWorld::default().tree("b"),
    );
    assert!(!block_reason(&outcome).contains("write architecture.md"));
}

#[test]
fn a_long_ralph_task_is_not_repeated_but_a_short_one_is() {
    let short = decide_stop(
        &event(Some("s1")),
        &ralph(5),
        &mut MemoryWorld::default().tree("a"),
    );
    assert!(block_reason(&short).ends_with("The task:\n\nFix it's \"parser\"; $(rm -rf x)"));
    let mut long = ralph(5);
    long.stages[0].prompt = "Do this. ".repeat(100);
    let outcome = decide_stop(
        &event(Some("s1")),
        &long,
        &mut MemoryWorld::default().tree("a"),
    );
    let reason = block_reason(&outcome);
    assert!(!reason.contains("Do this."), "{reason}");
    assert!(
        reason.contains("The task did not change since you read it: `pagent prompt` prints it"),
        "{reason}"
    );
}

#[test]
fn pagent_loop_always_gets_the_full_prompt() {
    let mut state = pipeline();
    state.driver = crate::Driver::Loop;
    let outcome = decide_iteration(&state, &mut MemoryWorld::default().tree("a"), NOW);
    assert!(block_reason(&outcome).ends_with("write architecture.md"));
}

#[test]
fn a_paused_loop_allows_its_stops_says_so_once_and_counts_nothing() {
    let state = ralph(5);
    let paused = crate::pause::decide_prompt(&state, Some("s1"), "What is 2+2?", NOW).unwrap();
    let outcome = decide_stop(
        &event(Some("s1")),
        &paused,
        &mut MemoryWorld::default().tree("a"),
    );
    let Decision::Notify(message) = &outcome.decision else {
        panic!("{outcome:?}")
    };
    assert!(
        message.contains("paused the Ralph loop because you wrote a message"),
        "{message}"
    );
    let told = outcome.write.unwrap();
    assert_eq!(told.iterations, paused.iterations);
    assert_eq!(outcome.log.unwrap().action, "paused");
    let outcome = decide_stop(
        &event(Some("s1")),
        &told,
        &mut MemoryWorld::default().tree("b"),
    );
    assert_eq!(outcome, Outcome::silent());
    // Resumed, it re-prompts and counts again.
    let resumed = crate::pause::resume(&told, NOW);
    let outcome = decide_stop(
        &event(Some("s1")),
        &resumed,
        &mut MemoryWorld::default().tree("c"),
    );
    assert_eq!(outcome.write.unwrap().iterations, [2]);
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
    let reason = block_reason(&outcome);
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
    assert_eq!(outcome.log.unwrap().action, "block");
    pipeline.backpressure = Some(crate::backpressure::BackpressureConfig {
        gate: false,
        ..Default::default()
    });
    let outcome = decide_stop(&event(Some("s1")), &pipeline, &mut world());
    assert_eq!(outcome.log.unwrap().action, "advance");
}

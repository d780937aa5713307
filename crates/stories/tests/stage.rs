//! The stories stage in the loop, with this crate's readers: `{{story}}` in a prompt, the
//! claim that ticks a story only when the rest of the condition holds, the `stories_pass`
//! finding and the progress mark, decided by the engine over its in-memory world given
//! [`Reader`] (the engine reads no plan format itself, so these tests live here).

#![forbid(unsafe_code)]
// Helpers panic on a broken fixture, like the tests they feed.
#![allow(clippy::unwrap_used, clippy::panic)]

use serde_json::{Value, json};

use pagent_engine::stories::{render_stage_prompt, story_in_prompt};
use pagent_engine::testing::MemoryWorld;
use pagent_engine::{
    CheckOutcome, Condition, Decision, Evaluation, Probe, SetupOptions, State, Status, Timestamp,
    Workflow, decide_iteration, progress,
};
use pagent_stories::Reader;

const SPECKIT: &str = include_str!("../../../tests/fixtures/plans/speckit-tasks.md");

/// The engine's in-memory world, reading plans with this crate.
fn reading_plans() -> MemoryWorld {
    MemoryWorld::default().plans(&Reader)
}

const NOW: Timestamp = Timestamp(1_000);
const CLAIM: &str = "Implemented it.\n<promise>STORY DONE</promise>";

fn stories_state(prompt: &str, exit_when: Value, world: &mut MemoryWorld) -> State {
    let workflow = Workflow::from_json(
        &json!({"stages": [{"name": "stories", "prompt": prompt, "exit_when": exit_when}]}),
        "stories",
    )
    .unwrap();
    let mut state = State::new_pipeline(
        &workflow,
        vec![prompt.to_owned()],
        SetupOptions::default(),
        None,
        Timestamp(0),
    );
    state.story = story_in_prompt(&state, world);
    state
}

fn with_checks() -> Value {
    json!({"all": [{"stories_pass": "tasks.md"}, {"custom": "sh checks.sh"}]})
}

fn reason(decision: &Decision) -> &str {
    match decision {
        Decision::Block { reason, .. } => reason,
        other => panic!("expected a block, got {other:?}"),
    }
}

#[test]
fn a_claim_with_the_checks_passing_ticks_the_story_and_names_the_next() {
    let mut world = reading_plans()
        .text("tasks.md", SPECKIT)
        .message(CLAIM)
        .check("sh checks.sh", CheckOutcome::Passed)
        .tree("a");
    let state = stories_state("Do:\n{{story}}", with_checks(), &mut world);
    assert_eq!(state.story.as_deref(), Some("T001"));
    let step = decide_iteration(&state, &mut world, NOW);
    let text = world.text_of("tasks.md").unwrap();
    assert_eq!(text, SPECKIT.replacen("- [ ] T001", "- [X] T001", 1));
    let reason = reason(&step.decision);
    assert!(
        reason.contains("- 1 of 3 stories in tasks.md are done; next: T002: Implement"),
        "{reason}"
    );
    assert!(
        reason.contains("\nDo:\nT002: Implement `box.sh save NAME`"),
        "{reason}"
    );
    assert_eq!(step.write.story.as_deref(), Some("T002"));
}

#[test]
fn a_claim_with_a_failing_check_ticks_nothing_and_says_why() {
    let failed = CheckOutcome::Failed {
        code: Some(1),
        tail: "save: not implemented".into(),
    };
    let mut world = reading_plans()
        .text("tasks.md", SPECKIT)
        .message(CLAIM)
        .check("sh checks.sh", failed)
        .tree("a");
    let state = stories_state("Do:\n{{story}}", with_checks(), &mut world);
    let step = decide_iteration(&state, &mut world, NOW);
    assert_eq!(world.text_of("tasks.md"), Some(SPECKIT));
    let reason = reason(&step.decision);
    assert!(
        reason.contains("- you said story T001 is done, but it stays open until the checks hold (see below)\n- `sh checks.sh` exited with code 1"),
        "{reason}"
    );
    assert!(reason.contains("save: not implemented"), "{reason}");
    assert_eq!(step.write.story.as_deref(), Some("T001"));
}

#[test]
fn without_the_promise_or_with_another_text_nothing_is_ticked() {
    for message in [
        "Implemented it.",
        "<promise>DONE</promise>",
        "Say `<promise>STORY DONE</promise>` when done",
    ] {
        let mut world = reading_plans()
            .text("tasks.md", SPECKIT)
            .message(message)
            .check("sh checks.sh", CheckOutcome::Passed);
        let state = stories_state("{{story}}", with_checks(), &mut world);
        decide_iteration(&state, &mut world, NOW);
        assert_eq!(world.text_of("tasks.md"), Some(SPECKIT), "{message}");
    }
}

#[test]
fn a_claim_never_ticks_another_story_than_the_one_given() {
    // The agent ticked T001 itself, then claimed: T002 is not ticked with it.
    let mut world = reading_plans()
        .text("tasks.md", SPECKIT)
        .message(CLAIM)
        .check("sh checks.sh", CheckOutcome::Passed);
    let state = stories_state("{{story}}", with_checks(), &mut world);
    let ticked = SPECKIT.replacen("- [ ] T001", "- [x] T001", 1);
    let mut world = world.text("tasks.md", &ticked);
    let step = decide_iteration(&state, &mut world, NOW);
    assert_eq!(world.text_of("tasks.md"), Some(ticked.as_str()));
    assert_eq!(step.write.story.as_deref(), Some("T002"));
}

#[test]
fn the_last_claim_completes_the_loop_only_when_the_checks_hold() {
    let all_but_last =
        SPECKIT
            .replacen("- [ ] T001", "- [X] T001", 1)
            .replacen("- [ ] T002", "- [X] T002", 1);
    for (outcome, completes) in [
        (CheckOutcome::Passed, true),
        (
            CheckOutcome::Failed {
                code: Some(2),
                tail: String::new(),
            },
            false,
        ),
    ] {
        let mut world = reading_plans()
            .text("tasks.md", &all_but_last)
            .message(CLAIM)
            .check("sh checks.sh", outcome);
        let state = stories_state("{{story}}", with_checks(), &mut world);
        assert_eq!(state.story.as_deref(), Some("T003"));
        let step = decide_iteration(&state, &mut world, NOW);
        assert_eq!(step.write.status == Status::Complete, completes);
        assert_eq!(
            world.text_of("tasks.md").unwrap().contains("- [X] T003"),
            completes
        );
    }
    // Every story ticked by hand, and a failing check: not complete either.
    let all = all_but_last.replacen("- [ ] T003", "- [x] T003", 1);
    let mut world = reading_plans()
        .text("tasks.md", &all)
        .message("done")
        .check(
            "sh checks.sh",
            CheckOutcome::Failed {
                code: Some(1),
                tail: String::new(),
            },
        );
    let state = stories_state("{{story}}", with_checks(), &mut world);
    let step = decide_iteration(&state, &mut world, NOW);
    assert!(reason(&step.decision).contains("(every story in tasks.md is done)"));
}

#[test]
fn a_claim_for_a_story_the_plan_no_longer_has_ticks_nothing() {
    let mut world = reading_plans().text("tasks.md", SPECKIT).message(CLAIM);
    let mut state = stories_state("{{story}}", json!({"stories_pass": "tasks.md"}), &mut world);
    // The user removed the story while the agent worked on it.
    state.story = Some("T404".into());
    let step = decide_iteration(&state, &mut world, NOW);
    assert_eq!(world.text_of("tasks.md"), Some(SPECKIT));
    assert!(reason(&step.decision).contains("- 0 of 3 stories in tasks.md are done; next: T001"));
}

#[test]
fn a_workflow_prompt_names_the_next_story_or_why_it_cannot() {
    let prd = r#"{"userStories": [{"id": "US-2", "title": "List", "priority": 2, "acceptanceCriteria": ["shows all"]}, {"id": "US-1", "title": "Add", "priority": 1, "passes": true}]}"#;
    let exit = json!({"all": [{"file_exists": "x"}, {"stories_pass": "prd.json"}]});
    let render = |world: MemoryWorld| {
        let mut world = world;
        let state = stories_state("Do {{story}} now.", exit.clone(), &mut world);
        render_stage_prompt(&state, 0, &mut world)
    };
    let with = |text: &str| reading_plans().text("prd.json", text);
    assert_eq!(
        render(with(prd)),
        "Do US-2: List (priority 2)\nAcceptance criteria:\n- shows all now."
    );
    assert_eq!(
        render(with(r#"{"userStories": [{"id": "A", "passes": true}]}"#)),
        "Do (every story in prd.json passes) now."
    );
    assert_eq!(
        render(with("{}")),
        "Do (prd.json is not a valid PRD: it has no stories (no \"userStories\"); fix it first) now."
    );
    assert_eq!(
        render(reading_plans()),
        "Do (prd.json cannot be read; create it first) now."
    );
    let mut world = reading_plans();
    let without = stories_state("Do {{story}} now.", json!({"file_exists": "x"}), &mut world);
    assert_eq!(
        render_stage_prompt(&without, 0, &mut world),
        "Do (this stage has no stories_pass condition, so there is no story to name) now."
    );
    let mut world = with(prd);
    let plain = stories_state("No placeholder.", exit.clone(), &mut world);
    assert_eq!(
        render_stage_prompt(&plain, 0, &mut world),
        "No placeholder."
    );
    assert_eq!(plain.story, None);
}

#[test]
fn a_ralph_task_keeps_its_placeholders() {
    let state = State::new_ralph(
        "Fill in {{story}} and {{prd_path}}".into(),
        "DONE".into(),
        SetupOptions::default(),
        None,
        Timestamp(0),
    );
    let mut world = reading_plans();
    assert_eq!(
        render_stage_prompt(&state, 0, &mut world),
        "Fill in {{story}} and {{prd_path}}"
    );
    assert_eq!(story_in_prompt(&state, &mut world), None);
}

// Moved from the engine's own tests (`decide/tests/iteration.rs`,
// `condition/tests/evaluation.rs`, `progress.rs`) when the readers left it: each reads a
// real plan format, which only this crate can.

fn block_reason(decision: &Decision) -> &str {
    reason(decision)
}

fn evaluate(condition: Value, world: MemoryWorld) -> Evaluation {
    let mut world = world;
    Condition::from_json(&condition, "exit_when")
        .unwrap()
        .evaluate(&mut world)
}

/// (met, detail, short) of the only finding.
fn one(evaluation: &Evaluation) -> (bool, &str, &str) {
    assert_eq!(evaluation.findings.len(), 1, "{evaluation:?}");
    let f = &evaluation.findings[0];
    assert_eq!(f.met, evaluation.met);
    (f.met, f.detail.as_str(), f.short.as_str())
}

const PLAN_PATH: &str = ".claude/pagent/issues.md";
const PLAN: &str = "# Plan\n\n### Task 1: one\n- [ ] a\n\n### Task 2: two\n- [ ] b\n";

fn stories() -> State {
    let workflow = Workflow::from_json(
        &json!({"stages": [{"name": "s", "prompt": "p", "exit_when": {"stories_pass": PLAN_PATH, "format": "ralphex"}}]}),
        "x",
    )
    .unwrap();
    State::new_pipeline(
        &workflow,
        vec!["p".into()],
        SetupOptions::default(),
        None,
        Timestamp(0),
    )
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
    let mut world = reading_plans()
        .text("prd.json", &prd(&[true, false, false]))
        .tree("a");
    let outcome = decide_iteration(&state, &mut world, NOW);
    let reason = block_reason(&outcome.decision);
    assert!(
        reason.contains("- 1 of 3 stories in prd.json pass; next: US-1: Story 1"),
        "{reason}"
    );
    assert!(
        reason.ends_with("Implement this story:\nUS-1: Story 1 (priority 1)"),
        "{reason}"
    );
    let state = outcome.write;
    let mut world = reading_plans()
        .text("prd.json", &prd(&[true, true, true]))
        .tree("b");
    let outcome = decide_iteration(&state, &mut world, NOW);
    assert_eq!(outcome.write.status, Status::Complete);
}

#[test]
fn stories_pass_names_the_next_story_or_why_the_prd_cannot_be_read() {
    let prd = |passes: [bool; 2]| {
        json!({"userStories": [
            {"id": "US-1", "title": "Add", "priority": 1, "passes": passes[0]},
            {"id": "US-2", "title": "Remove", "priority": 2, "passes": passes[1]}
        ]})
        .to_string()
    };
    let condition = json!({"stories_pass": "prd.json"});
    let with = |text: &str| reading_plans().text("prd.json", text);
    assert_eq!(
        one(&evaluate(condition.clone(), with(&prd([true, true])))),
        (true, "all 2 stories in prd.json pass", "stories 2/2")
    );
    assert_eq!(
        one(&evaluate(condition.clone(), with(&prd([true, false])))),
        (
            false,
            "1 of 2 stories in prd.json pass; next: US-2: Remove",
            "stories 1/2"
        )
    );
    let invalid = evaluate(condition.clone(), with("{\"userStories\": []}"));
    let (met, detail, short) = one(&invalid);
    assert!(!met);
    assert!(
        detail.starts_with("prd.json is not a valid PRD: "),
        "{detail}"
    );
    assert_eq!(short, "prd.json invalid");
    assert_eq!(
        one(&evaluate(condition.clone(), reading_plans())),
        (false, "prd.json does not exist", "prd.json missing")
    );
    assert_eq!(
        one(&evaluate(
            condition,
            reading_plans().probe("prd.json", Probe::Outside)
        )),
        (false, "prd.json cannot be read", "prd.json unreadable")
    );
}

#[test]
fn a_story_done_in_a_plan_the_tree_does_not_see_is_progress() {
    let state = stories();
    let mut world = reading_plans().tree("T1").text(PLAN_PATH, PLAN);
    let before = progress::mark(&state, &mut world);
    assert_eq!(progress::mark(&state, &mut world), before, "stable");
    assert!(!progress::changed(before.as_deref(), before.as_deref()));
    let ticked = PLAN.replacen("- [ ] a", "- [x] a", 1);
    let mut world = reading_plans().tree("T1").text(PLAN_PATH, &ticked);
    let after = progress::mark(&state, &mut world);
    assert!(progress::changed(before.as_deref(), after.as_deref()));
    assert!(after.unwrap().starts_with("T1+stories:"));
}

//! The stories stage in the loop: `{{story}}` in a prompt, and the claim that ticks a
//! story only when the rest of the condition holds, decided over an in-memory world.

use serde_json::{Value, json};

use super::super::*;
use super::SPECKIT;
use crate::testing::MemoryWorld;
use crate::{
    CheckOutcome, Decision, SetupOptions, State, Status, Timestamp, Workflow, decide_iteration,
};

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
    let mut world = MemoryWorld::default()
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
    let mut world = MemoryWorld::default()
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
        let mut world = MemoryWorld::default()
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
    let mut world = MemoryWorld::default()
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
        let mut world = MemoryWorld::default()
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
    let mut world = MemoryWorld::default()
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
    let mut world = MemoryWorld::default()
        .text("tasks.md", SPECKIT)
        .message(CLAIM);
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
    let with = |text: &str| MemoryWorld::default().text("prd.json", text);
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
        render(MemoryWorld::default()),
        "Do (prd.json cannot be read; create it first) now."
    );
    let mut world = MemoryWorld::default();
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
    let mut world = MemoryWorld::default();
    assert_eq!(
        render_stage_prompt(&state, 0, &mut world),
        "Fill in {{story}} and {{prd_path}}"
    );
    assert_eq!(story_in_prompt(&state, &mut world), None);
}

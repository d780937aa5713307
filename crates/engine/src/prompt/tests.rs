//! What the model reads: full or quiet re-prompts, and the caps.

use crate::decide::tests::{NOW, block_reason, event, pipeline, ralph};
use crate::testing::MemoryWorld;
use crate::{REASON_CAP, decide_iteration, decide_stop};

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
    let reason = block_reason(&outcome.decision);
    assert!(
        reason.chars().count() <= REASON_CAP,
        "{}",
        reason.chars().count()
    );
    assert!(reason.contains("prompt cut to fit"));
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
    let reason = block_reason(&outcome.decision);
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
    assert!(!block_reason(&outcome.decision).contains("write architecture.md"));
}

#[test]
fn a_long_ralph_task_is_not_repeated_but_a_short_one_is() {
    let short = decide_stop(
        &event(Some("s1")),
        &ralph(5),
        &mut MemoryWorld::default().tree("a"),
    );
    assert!(
        block_reason(&short.decision).ends_with("The task:\n\nFix it's \"parser\"; $(rm -rf x)")
    );
    let mut long = ralph(5);
    long.stages[0].prompt = "Do this. ".repeat(100);
    let outcome = decide_stop(
        &event(Some("s1")),
        &long,
        &mut MemoryWorld::default().tree("a"),
    );
    let reason = block_reason(&outcome.decision);
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
    assert!(block_reason(&outcome.decision).ends_with("write architecture.md"));
}

/// The header the loop's first prompt, set-up's output and `pagent prompt` show is the
/// one every block reason starts with.
#[test]
fn one_header_for_every_prompt() {
    let mut state = pipeline();
    state.stage = 1;
    state.iterations[1] = 3;
    assert_eq!(
        super::current_header(&state),
        "pagent · stage 2 of 5: qa · iteration 3 of 25"
    );
    assert_eq!(
        super::current_header(&ralph(7)),
        "pagent · ralph loop · iteration 1 of 7"
    );
    let first = super::first_prompt(&state, &mut MemoryWorld::default());
    assert_eq!(
        first,
        "pagent · stage 2 of 5: qa · iteration 3 of 25\n\nwrite test-plan.md"
    );
}

/// Issue 12: `pagent loop`'s first prompt skipped the cap every block reason has, so a
/// 50,000-character task went to the agent whole.
#[test]
fn the_loops_first_prompt_fits_the_cap_too() {
    let mut state = ralph(5);
    state.stages[0].prompt = "x".repeat(50_000);
    let first = super::first_prompt(&state, &mut MemoryWorld::default());
    assert!(
        first.chars().count() <= REASON_CAP,
        "{}",
        first.chars().count()
    );
    assert!(first.starts_with("pagent · ralph loop · iteration 1 of 5\n\nxxx"));
    assert!(first.contains("prompt cut to fit"));
}

/// The header keeps at most half the cap, whatever a stage's name, and the prompt the
/// rest: both are cut, neither is lost.
#[test]
fn compose_cuts_the_header_to_half_and_the_prompt_to_the_rest() {
    let composed = super::compose(&"h".repeat(20_000), &"p".repeat(20_000));
    assert!(composed.chars().count() <= REASON_CAP);
    let (header, prompt) = composed.split_once("\n\n").unwrap();
    assert!(
        header.chars().count() <= REASON_CAP / 2 + 40,
        "{}",
        header.len()
    );
    assert!(header.starts_with(&"h".repeat(REASON_CAP / 2)));
    assert!(prompt.starts_with("ppp"));
    assert!(prompt.chars().count() > REASON_CAP / 2 - 200);
    assert_eq!(super::compose("h", "p"), "h\n\np");
}

fn block_message(decision: &crate::Decision) -> &str {
    match decision {
        crate::Decision::Block { message, .. } => message,
        other => panic!("expected a block, got {other:?}"),
    }
}

/// A pipeline's re-prompt lists what is missing under its header; a Ralph loop's says
/// the promise was not made. The user's one line says the same in short.
#[test]
fn a_re_prompt_says_what_is_missing_to_the_model_and_the_user() {
    let mut state = pipeline();
    state.session_id = Some("s1".into());
    let world = MemoryWorld::default().file("architecture.md", 12).tree("a");
    let outcome = decide_stop(&event(Some("s1")), &state, &mut world.clone());
    assert_eq!(
        block_reason(&outcome.decision),
        "pagent · stage 1 of 5: architect · iteration 2 of 25\n\
         The stage's exit condition does not hold yet. Still missing:\n\
         - architecture.md has 12 of the 50 non-blank lines it needs\n\n\
         The stage's instructions did not change since you read them: `pagent prompt` prints them, \
         and they are in .claude/pagent/prompt.md."
    );
    assert_eq!(
        block_message(&outcome.decision),
        "pagent: stage architect not done, iteration 2 of 25: architecture.md has 12 of the 50 non-blank lines it needs"
    );

    let outcome = decide_stop(
        &event(Some("s1")),
        &ralph(5),
        &mut MemoryWorld::default().message("not yet").tree("a"),
    );
    let reason = block_reason(&outcome.decision);
    assert!(
        reason.starts_with(
            "pagent · ralph loop · iteration 2 of 5\nYour last message did not make the promise."
        ),
        "{reason}"
    );
    assert!(!reason.contains("exit condition does not hold"), "{reason}");
    assert_eq!(
        block_message(&outcome.decision),
        "pagent: Ralph loop, iteration 2 of 5: your last message has no line <promise>DONE</promise> of its own"
    );
}

#[test]
fn issue_22_the_notes_of_a_stopped_run_read_whole() {
    use crate::prompt::{StoppedRun, after_stopped, stopped_note};
    let timed_out = stopped_note(StoppedRun::TimedOut { limit_secs: 1800 });
    let stalled = stopped_note(StoppedRun::Stalled { limit_secs: 600 });
    insta::assert_snapshot!(format!(
        "{timed_out}\n---\n{stalled}\n---\n{}",
        after_stopped(
            &stalled,
            "pagent · ralph loop · iteration 2 of 10\n\nFix the tests."
        )
    ));
}

/// A ralph loop whose condition is the promise and a check: the re-prompt says which of
/// the two still holds it back, in three different sentences (mutation testing found them
/// unpinned). The fourth case (the promise made and nothing else missing) cannot reach a
/// re-prompt: the loop completes.
#[test]
fn issue_22_a_ralph_reprompt_says_whether_the_promise_or_the_rest_is_missing() {
    use crate::CheckOutcome;
    use crate::condition::Condition;
    let mut state = ralph(5);
    state.stages[0].exit_when = Condition::from_json(
        &serde_json::json!({"all": [{"promise_in_output": "DONE"}, {"command": ["make", "check"]}]}),
        "exit_when",
    )
    .unwrap();
    let failed = || CheckOutcome::Failed {
        code: Some(2),
        tail: String::new(),
    };
    let reason = |message: &str, check: CheckOutcome| {
        let mut world = MemoryWorld::default()
            .message(message)
            .check("make check", check);
        let outcome = decide_stop(&event(Some("s1")), &state, &mut world);
        let reason = block_reason(&outcome.decision).to_owned();
        reason.split("\n\n").next().unwrap_or_default().to_owned()
    };
    insta::assert_snapshot!(format!(
        "{}\n---\n{}\n---\n{}",
        reason("Not yet.", failed()),
        reason("Not yet.", CheckOutcome::Passed),
        reason("Done.\n<promise>DONE</promise>", failed()),
    ));
}

/// `pagent parallel --merge`'s resolution prompt, whole: with conflicts and a check, and
/// with neither (a task whose text holds a placeholder keeps it as text).
#[test]
fn issue_22_the_merge_resolution_prompt_reads_whole() {
    use crate::prompt::merge::{MergeFill, prompt};
    let conflicted = ["src/app.rs".to_owned(), "README.md".to_owned()];
    let with = prompt(&MergeFill {
        branch: "pagent/add-login",
        target: "main",
        target_commit: "0123456789abcdef0123",
        conflicted: &conflicted,
        check: Some("cargo test"),
        task: "Add a login page",
    });
    let without = prompt(&MergeFill {
        branch: "pagent/fix-{{branch}}",
        target: "main",
        target_commit: "abc",
        conflicted: &[],
        check: None,
        task: "Fix {{story}} and {{target}}",
    });
    insta::assert_snapshot!(format!(
        "=== conflicts and a check\n{with}\n=== nothing left in the index, no check\n{without}"
    ));
}

//! Property tests of the loop policy: whatever the world does, the safety rules hold.
//!
//! Each case builds a random pipeline (stages, budgets, no-progress limit) and feeds the
//! engine a random sequence of stops (which session, what the model said, which files
//! exist, whether checks pass, whether the tree changed). The properties are the ones
//! DESIGN.md promises: a loop ends within its bounds; a finished state never blocks;
//! another session is never blocked; an unsealed state never runs a command; every state
//! round-trips through JSON; every reason fits the client's limit. And the one the others
//! rest on: a stage advances exactly when its condition holds in the world, judged by a
//! small oracle written here. The world answers differently per path, so a condition
//! over several files cannot pass by looking at one.

#![forbid(unsafe_code)]
// Generators panic on a broken fixture, like the tests they feed.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::cell::Cell;

use pagent_engine::{
    Check, CheckOutcome, Condition, Decision, Probe, REASON_CAP, RelPath, ReviewOutcome,
    ReviewRequest, SetupOptions, State, Status, StopEvent, Timestamp, Workflow, World, decide_stop,
};
use proptest::prelude::*;
use serde_json::json;

/// One stop's world, drawn at random.
#[derive(Debug, Clone)]
struct Step {
    other_session: bool,
    says_promise: bool,
    /// Non-blank lines of `a.md` and `b.md`; any other file is missing.
    lines: [u64; 2],
    /// Files under `src`; any other folder is missing.
    files: u64,
    check_passes: bool,
    tree: u8,
}

struct StepWorld<'a> {
    step: &'a Step,
    checks_run: &'a Cell<u32>,
}

impl World for StepWorld<'_> {
    fn count_lines(&mut self, path: &RelPath, enough: u64) -> Probe {
        match lines_of(self.step, path) {
            Some(n) => Probe::Count(n.min(enough)),
            None => Probe::Missing,
        }
    }
    fn count_files(&mut self, path: &RelPath, _: u64) -> Probe {
        match path.as_str() {
            "src" => Probe::Count(self.step.files),
            _ => Probe::Missing,
        }
    }
    fn plans(&self) -> &dyn pagent_engine::stories::PlanReader {
        &pagent_engine::stories::NoPlans
    }
    fn read_text(&mut self, _: &RelPath) -> Result<String, Probe> {
        Err(Probe::Missing)
    }
    fn replace_text(&mut self, _: &RelPath, _: &str, _: &str) -> Result<(), String> {
        Err("no files in this world".into())
    }
    fn last_assistant_message(&mut self) -> Option<String> {
        Some(if self.step.says_promise {
            "<promise>DONE</promise>".into()
        } else {
            "working".into()
        })
    }
    fn run_check(&mut self, _: &Check) -> CheckOutcome {
        self.checks_run.set(self.checks_run.get() + 1);
        if self.step.check_passes {
            CheckOutcome::Passed
        } else {
            CheckOutcome::Failed {
                code: Some(1),
                tail: "x".repeat(20_000),
            }
        }
    }
    fn run_review(&mut self, _: &ReviewRequest) -> ReviewOutcome {
        // A reviewer is a process too: counted with the checks.
        self.checks_run.set(self.checks_run.get() + 1);
        ReviewOutcome::Answered(format!("{{\"met\": {}, \"missing\": [\"x\"]}}", false))
    }
    fn fingerprint(&mut self) -> Option<String> {
        Some(format!("tree-{}", self.step.tree))
    }
}

fn lines_of(step: &Step, path: &RelPath) -> Option<u64> {
    match path.as_str() {
        "a.md" => Some(step.lines[0]),
        "b.md" => Some(step.lines[1]),
        _ => None,
    }
}

/// Whether `condition` holds in `step`'s world, worked out independently of the engine.
fn holds(condition: &Condition, step: &Step) -> bool {
    let enough = |path: &RelPath, min: u64| lines_of(step, path).is_some_and(|n| n >= min);
    match condition {
        Condition::FileExists { path, min_lines } => enough(path, *min_lines),
        Condition::AllFilesExist { paths, min_lines } => {
            paths.iter().all(|path| enough(path, *min_lines))
        }
        Condition::DirectoryExists { path, min_files } => {
            path.as_str() == "src" && step.files >= *min_files
        }
        Condition::Promise(_) => step.says_promise,
        Condition::Command(_) => step.check_passes,
        Condition::All(items) => items.iter().all(|c| holds(c, step)),
        Condition::Any(items) => items.iter().any(|c| holds(c, step)),
        // The property world's reviewer always answers "not met".
        Condition::StoriesPass { .. } | Condition::Review(_) | Condition::MergeCommitted(_) => {
            false
        }
    }
}

fn step() -> impl Strategy<Value = Step> {
    (
        any::<bool>(),
        prop::bool::weighted(0.2),
        [0u64..80, 0u64..80],
        0u64..6,
        prop::bool::weighted(0.3),
        0u8..3,
    )
        .prop_map(
            |(other_session, says_promise, lines, files, check_passes, tree)| Step {
                other_session,
                says_promise,
                lines,
                files,
                check_passes,
                tree,
            },
        )
}

/// A pipeline of 1-4 stages mixing every kind of condition, with random budgets.
fn pipeline() -> impl Strategy<Value = State> {
    (prop::collection::vec((0usize..6, 1u32..6), 1..5), 0u32..4, 1u32..8, prop::string::string_regex("[a-zA-Z0-9 '\"$();`\\\\\n]{0,40}").unwrap()).prop_map(
        |(stages, no_progress, default_max, prompt)| {
            let stages: Vec<serde_json::Value> = stages
                .iter()
                .enumerate()
                .map(|(i, (kind, max))| {
                    let exit_when = match kind {
                        0 => json!({"file_exists": "a.md", "min_lines": 40}),
                        1 => json!({"directory_exists": "src", "min_files": 3}),
                        2 => json!({"promise_in_output": "DONE"}),
                        3 => json!({"all": [{"command": ["cargo", "test"]}, {"file_exists": "b.md", "min_lines": 10}]}),
                        4 => json!({"all_files_exist": ["a.md", "b.md"], "min_lines": 20}),
                        _ => json!({"any": [{"file_exists": "c.md"}, {"file_exists": "b.md", "min_lines": 30}]}),
                    };
                    json!({"name": format!("s{i}"), "prompt": "p", "exit_when": exit_when, "max_iterations": max})
                })
                .collect();
            let workflow = Workflow::from_json(&json!({"stages": stages, "no_progress_limit": no_progress}), "w").unwrap();
            let prompts = vec![prompt; workflow.stages.len()];
            let options = SetupOptions { max_iterations: Some(default_max), session_id: Some("owner".into()), ..SetupOptions::default() };
            State::new_pipeline(&workflow, prompts, options, Some("tree-0".into()), Timestamp(0))
        },
    )
}

fn stop(
    state: &State,
    step: &Step,
    seal_valid: bool,
    checks_run: &Cell<u32>,
) -> pagent_engine::Outcome {
    let session = if step.other_session {
        "intruder"
    } else {
        "owner"
    };
    let event = StopEvent {
        session_id: Some(session),
        seal_valid,
        unsealed_warned: false,
        now: Timestamp(10),
        turn: Default::default(),
        block_cap: Default::default(),
    };
    decide_stop(&event, state, &mut StepWorld { step, checks_run })
}

/// The most stops of the owner a loop can take: per stage, its budget of unmet stops
/// plus the one that meets it.
fn bound(state: &State) -> usize {
    (0..state.max_stages)
        .map(|i| state.stage_limit(i) as usize + 1)
        .sum()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 400, ..ProptestConfig::default() })]

    #[test]
    fn a_loop_ends_within_its_bounds_and_every_state_round_trips(initial in pipeline(), steps in prop::collection::vec(step(), 60)) {
        let checks = Cell::new(0);
        let limit = bound(&initial);
        let mut state = initial;
        let mut owner_stops = 0;
        for step in &steps {
            if !state.is_active() {
                break;
            }
            let outcome = stop(&state, step, true, &checks);
            if let Decision::Block { reason, .. } = &outcome.decision {
                prop_assert!(reason.chars().count() <= REASON_CAP);
                prop_assert!(!step.other_session, "blocked another session");
            }
            if step.other_session {
                prop_assert!(outcome.write.is_none(), "another session's stop wrote the state");
                continue;
            }
            owner_stops += 1;
            let next = outcome.write.expect("the owner's stop always writes");
            let reread = State::from_json(next.to_json_pretty().as_bytes()).expect("a written state parses");
            prop_assert_eq!(&reread, &next);
            prop_assert!(next.iterations.iter().zip(0..).all(|(n, i)| *n <= next.stage_limit(i)));
            state = next;
        }
        prop_assert!(owner_stops <= limit, "{owner_stops} stops for a bound of {limit}");
        let owner_steps = steps.iter().filter(|s| !s.other_session).count();
        if owner_steps >= limit {
            prop_assert!(!state.is_active(), "still active after {owner_stops} owner stops (bound {limit})");
        }
    }

    #[test]
    fn a_stage_advances_exactly_when_its_condition_holds(initial in pipeline(), steps in prop::collection::vec(step(), 30)) {
        let checks = Cell::new(0);
        let mut state = initial;
        for step in steps.iter().filter(|s| !s.other_session) {
            if !state.is_active() {
                break;
            }
            let expected = holds(&state.current().exit_when, step);
            let next = stop(&state, step, true, &checks).write.expect("the owner's stop always writes");
            let advanced = next.stage > state.stage || next.status == Status::Complete;
            prop_assert_eq!(advanced, expected, "stage {} ({:?}) in {:?}", state.stage, state.current().exit_when, step);
            if !expected {
                prop_assert_eq!(next.stage, state.stage);
            }
            state = next;
        }
    }

    #[test]
    fn a_finished_state_never_blocks_or_writes(initial in pipeline(), step in step(), status in 0..3) {
        let mut state = initial;
        state.finish([Status::Complete, Status::Cancelled, Status::GaveUp][status as usize], "ended".into(), Timestamp(5));
        let checks = Cell::new(0);
        let outcome = stop(&state, &step, true, &checks);
        prop_assert_eq!(outcome.decision, Decision::Allow);
        prop_assert!(outcome.write.is_none());
        prop_assert_eq!(checks.get(), 0);
    }

    #[test]
    fn an_unsealed_state_never_runs_a_command_or_blocks(initial in pipeline(), steps in prop::collection::vec(step(), 10)) {
        let checks = Cell::new(0);
        for step in &steps {
            let outcome = stop(&initial, step, false, &checks);
            let blocked = matches!(outcome.decision, Decision::Block { .. });
            prop_assert!(!blocked, "an unsealed state blocked");
            prop_assert!(outcome.write.is_none());
        }
        prop_assert_eq!(checks.get(), 0);
    }

    #[test]
    fn conditions_round_trip_through_json(kind in 0usize..6, n in 0u64..100, text in "[A-Z]{1,8}") {
        let value = match kind {
            0 => json!({"file_exists": "x/y.md", "min_lines": n}),
            1 => json!({"directory_exists": "src", "min_files": n}),
            2 => json!({"all_files_exist": ["a", "b/c"], "min_lines": n}),
            3 => json!({"promise_in_output": text}),
            4 => json!({"command": ["sh", "-c", text], "timeout": n + 1}),
            _ => json!({"any": [{"promise_in_output": text}, {"custom": "true", "timeout": n + 1}]}),
        };
        let condition = Condition::from_json(&value, "exit_when").unwrap();
        prop_assert_eq!(condition.to_json(), value);
    }

    /// A path is stored in its normalised form, under the seal: reading that form back
    /// must give the same path, or the user's own state stops verifying.
    #[test]
    fn a_normalised_path_reads_back_unchanged(text in r"[ a./\\\t~:\u{a0}]{0,12}") {
        if let Ok(path) = RelPath::new(&text) {
            prop_assert_eq!(RelPath::new(path.as_str()), Ok(path.clone()), "{:?}", text);
        }
    }
}

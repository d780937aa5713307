//! Table tests of budgets: how they are written, when one is reached, and what the loop
//! does then.

use super::*;
use crate::testing::MemoryWorld;
use crate::usage::{Report, Tokens};
use crate::{Prices, SetupOptions, decide_iteration};

fn ralph(budget: Budget) -> State {
    let options = SetupOptions {
        max_iterations: Some(10),
        session_id: Some("s1".into()),
        budget,
        ..SetupOptions::default()
    };
    State::new_ralph(
        "task".into(),
        "DONE".into(),
        options,
        None,
        Timestamp(1_000),
    )
}

fn tokens(n: u64) -> Report {
    Report {
        model: Some("claude-sonnet-4-5".into()),
        tokens: Tokens {
            input: n,
            ..Tokens::default()
        },
        cost_microusd: None,
    }
}

#[test]
fn budgets_are_written_as_people_write_them() {
    for (text, secs) in [
        ("45s", 45),
        ("90m", 5_400),
        ("2h", 7_200),
        ("1h30m", 5_400),
        ("3600", 3_600),
        (" 1d ", 86_400),
    ] {
        assert_eq!(parse_duration(text), Ok(secs), "{text}");
    }
    for (text, n) in [
        ("500000", 500_000),
        ("500k", 500_000),
        ("2M", 2_000_000),
        ("1.5M", 1_500_000),
        ("1_000_000", 1_000_000),
        ("0.5k", 500),
    ] {
        assert_eq!(parse_tokens(text), Ok(n), "{text}");
    }
    for (text, micros) in [
        ("5", 5_000_000),
        ("$5", 5_000_000),
        ("0.25", 250_000),
        ("12.345678", 12_345_678),
        (".5", 500_000),
    ] {
        assert_eq!(parse_cost(text), Ok(micros), "{text}");
    }
}

#[test]
fn zero_negative_and_absurd_budgets_are_refused_with_a_reason() {
    for text in [
        "0",
        "0s",
        "-5m",
        "",
        "5x",
        "1h30",
        "m",
        "99999999999999999999999h",
    ] {
        assert!(parse_duration(text).is_err(), "duration {text:?}");
    }
    assert!(parse_duration("31d").unwrap_err().contains("at most"));
    for text in [
        "0", "-1", "1e6", "1.2.3", "k", "nan", "inf", "2T", "0.0001k",
    ] {
        assert!(parse_tokens(text).is_err(), "tokens {text:?}");
    }
    assert!(parse_tokens("2000G").unwrap_err().contains("at most"));
    for text in ["0", "-5", "$-5", "1e3", "five", "0.0000001", "NaN", "$"] {
        assert!(parse_cost(text).is_err(), "cost {text:?}");
    }
    assert!(parse_cost("1000000").unwrap_err().contains("at most"));
    assert_eq!(
        parse_tokens("0").unwrap_err(),
        "a token budget must be more than 0"
    );
}

#[test]
fn a_state_file_with_an_impossible_budget_is_refused() {
    for budget in [
        Budget {
            max_tokens: Some(0),
            ..Budget::default()
        },
        Budget {
            max_duration_secs: Some(MAX_DURATION_SECS + 1),
            ..Budget::default()
        },
        Budget {
            max_cost_microusd: Some(u64::MAX),
            ..Budget::default()
        },
    ] {
        let state = ralph(budget);
        assert!(State::from_json(state.to_json_pretty().as_bytes()).is_err());
    }
    let state = ralph(Budget {
        max_tokens: Some(5),
        ..Budget::default()
    });
    assert_eq!(
        State::from_json(state.to_json_pretty().as_bytes()).unwrap(),
        state
    );
}

/// (budget, usage added, seconds since start) -> which budget is reached.
#[test]
fn which_budget_is_reached() {
    let prices = Prices::built_in();
    let hour = Budget {
        max_duration_secs: Some(3_600),
        ..Budget::default()
    };
    let thousand = Budget {
        max_tokens: Some(1_000),
        ..Budget::default()
    };
    let dollar = Budget {
        max_cost_microusd: Some(1_000_000),
        ..Budget::default()
    };
    let all = Budget {
        max_duration_secs: Some(3_600),
        max_tokens: Some(1_000),
        max_cost_microusd: Some(1_000_000),
    };
    let cases: Vec<(Budget, Vec<Report>, u64, Option<&str>)> = vec![
        (Budget::default(), vec![tokens(u64::MAX)], 10_000_000, None),
        (hour, vec![], 3_599, None),
        (hour, vec![], 3_600, Some("time")),
        (thousand, vec![tokens(999)], 0, None),
        (thousand, vec![tokens(600), tokens(400)], 0, Some("token")),
        // No usage reported: a token budget cannot be judged.
        (thousand, vec![], 100_000, None),
        // $3/Mtok input: 333,334 tokens cost a dollar.
        (dollar, vec![tokens(333_000)], 0, None),
        (dollar, vec![tokens(334_000)], 0, Some("cost")),
        // A model with no price: tokens counted, cost unknown, cost budget not judged.
        (
            dollar,
            vec![Report {
                model: Some("mystery-1".into()),
                tokens: Tokens {
                    output: 50_000_000,
                    ..Tokens::default()
                },
                cost_microusd: None,
            }],
            0,
            None,
        ),
        // Time is judged first.
        (all, vec![tokens(5_000)], 4_000, Some("time")),
        (all, vec![tokens(5_000)], 0, Some("token")),
    ];
    for (budget, reports, secs, expected) in cases {
        let mut state = ralph(budget);
        for report in &reports {
            state.usage.add(report, &prices);
        }
        let got = reached(&state, Timestamp(1_000 + secs)).map(|r| r.describe());
        match (expected, &got) {
            (None, None) => {}
            (Some(word), Some(text)) => assert!(
                text.starts_with(&format!("the {word} budget")),
                "{budget:?} {secs}: {text}"
            ),
            _ => panic!("{budget:?} {reports:?} {secs}: expected {expected:?}, got {got:?}"),
        }
    }
}

#[test]
fn a_reached_budget_gives_up_with_which_budget_and_the_figures() {
    let mut state = ralph(Budget {
        max_tokens: Some(1_000),
        ..Budget::default()
    });
    state.usage.add(&tokens(1_234), &Prices::built_in());
    let mut world = MemoryWorld::default().message("still working");
    let outcome = decide_iteration(&state, &mut world, Timestamp(1_060));
    let next = outcome.write;
    assert_eq!(next.status, Status::GaveUp);
    let reason = next.end_reason.unwrap();
    assert_eq!(
        reason,
        "reached the token budget (1.2k tokens used of 1.0k; 1234 of 1000) at stage ralph, iteration 1"
    );
    assert_eq!(
        outcome.decision,
        Decision::Notify(format!(
            "pagent: gave up: {reason}. /pagent:status shows where it stopped."
        ))
    );
    assert_eq!(outcome.log.action, crate::Action::GaveUp);
    assert_eq!(next.usage.elapsed_secs, 60);
}

#[test]
fn work_that_completes_the_loop_completes_it_over_budget() {
    let mut state = ralph(Budget {
        max_tokens: Some(1_000),
        ..Budget::default()
    });
    state.usage.add(&tokens(5_000), &Prices::built_in());
    let mut world = MemoryWorld::default().message("done\n<promise>DONE</promise>");
    let outcome = decide_iteration(&state, &mut world, Timestamp(1_060));
    assert_eq!(outcome.write.status, Status::Complete);
}

#[test]
fn a_budget_is_not_reached_while_figures_stay_under_it() {
    let state = ralph(Budget {
        max_tokens: Some(1_000),
        max_duration_secs: Some(600),
        max_cost_microusd: Some(5_000_000),
    });
    let mut world = MemoryWorld::default().message("working");
    let outcome = decide_iteration(&state, &mut world, Timestamp(1_500));
    assert!(matches!(outcome.decision, Decision::Block { .. }));
    assert_eq!(outcome.write.usage.elapsed_secs, 500);
}

/// A clock set back twenty minutes, then going on: elapsed time never shrinks, and counts only
/// the forward steps.
#[test]
fn a_clock_going_backwards_never_shrinks_elapsed_time() {
    let mut state = ralph(Budget {
        max_duration_secs: Some(600),
        ..Budget::default()
    });
    tick(&mut state, Timestamp(1_300));
    assert_eq!(state.usage.elapsed_secs, 300);
    tick(&mut state, Timestamp(100));
    assert_eq!(state.usage.elapsed_secs, 300);
    assert_eq!(reached(&state, Timestamp(100 + 299)), None);
    tick(&mut state, Timestamp(100 + 300));
    assert_eq!(state.usage.elapsed_secs, 600);
    assert!(reached(&state, state.updated_at).is_some());
}

#[test]
fn flags_win_over_the_workflow_and_describe_reads_well() {
    let flags = Budget {
        max_tokens: Some(2_000_000),
        ..Budget::default()
    };
    let workflow = Budget {
        max_tokens: Some(1),
        max_duration_secs: Some(7_200),
        max_cost_microusd: Some(5_000_000),
    };
    let merged = flags.over(workflow);
    assert_eq!(merged.max_tokens, Some(2_000_000));
    assert_eq!(merged.describe(), "2h00m, 2.00M tokens, $5.00");
}

#[test]
fn a_workflow_sets_budgets_in_either_form_and_rejects_bad_ones() {
    let value = serde_json::json!({"stages": [{"name": "a", "prompt": "p",
        "exit_when": {"promise_in_output": "DONE"}}],
        "max_duration": "2h", "max_tokens": 500000, "max_cost": 2.5});
    let workflow = crate::Workflow::from_json(&value, "w").unwrap();
    assert_eq!(
        workflow.budget,
        Budget {
            max_duration_secs: Some(7_200),
            max_tokens: Some(500_000),
            max_cost_microusd: Some(2_500_000),
        }
    );
    for (key, bad) in [
        ("max_tokens", serde_json::json!(-5)),
        ("max_cost", serde_json::json!("free")),
        ("max_duration", serde_json::json!(true)),
        ("max_duration", serde_json::json!(0)),
    ] {
        let mut value = value.clone();
        value[key] = bad;
        let err = crate::Workflow::from_json(&value, "w").unwrap_err();
        assert_eq!(err.field, key);
    }
}

/// A loop whose promise a reviewer must approve, over its token budget: the reviewer (the
/// dearest check) runs only when its verdict can still complete the loop.
fn reviewed_over_budget(stages: usize) -> State {
    use crate::review::{Review, Reviewer};
    let promise = crate::Condition::Promise("DONE".into());
    let review = crate::Condition::Review(Review {
        criteria: "every input has a test".into(),
        reviewer: Reviewer::Claude,
        timeout_secs: 60,
    });
    let stage = |name: &str| serde_json::json!({"name": name, "prompt": "p", "exit_when": {"promise_in_output": "DONE"}});
    let names: Vec<String> = (0..stages).map(|i| format!("s{i}")).collect();
    let workflow = crate::Workflow::from_json(
        &serde_json::json!({"stages": names.iter().map(|n| stage(n)).collect::<Vec<_>>()}),
        "w",
    )
    .unwrap();
    let mut state = State::new_pipeline(
        &workflow,
        vec!["p".into(); stages],
        SetupOptions {
            session_id: Some("s1".into()),
            budget: Budget {
                max_tokens: Some(100),
                ..Budget::default()
            },
            ..SetupOptions::default()
        },
        None,
        Timestamp(1_000),
    );
    state.stages[0].exit_when = crate::Condition::All(vec![promise, review]);
    state.usage.add(&tokens(500), &Prices::built_in());
    state
}

#[test]
fn over_budget_the_reviewer_runs_only_when_it_can_complete_the_loop() {
    const MET: &str = "Fine.\n{\"met\": true, \"missing\": []}";
    const NOT_MET: &str = "{\"met\": false, \"missing\": [\"no test\"]}";
    // (stages, the model's message, the reviewer's answer) -> (reviews run, status)
    let cases = [
        // The last stage, the promise made: the verdict decides.
        (1, "done\n<promise>DONE</promise>", MET, 1, Status::Complete),
        (
            1,
            "done\n<promise>DONE</promise>",
            NOT_MET,
            1,
            Status::GaveUp,
        ),
        // No promise: no review, the budget ends the loop.
        (1, "working", MET, 0, Status::GaveUp),
        // Not the last stage: met would only advance into a loop over budget.
        (2, "done\n<promise>DONE</promise>", MET, 0, Status::GaveUp),
    ];
    for (stages, message, answer, reviews, status) in cases {
        let state = reviewed_over_budget(stages);
        let mut world = MemoryWorld::default().message(message).review_says(answer);
        let step = decide_iteration(&state, &mut world, Timestamp(1_010));
        assert_eq!(
            (world.reviews_run.len(), step.write.status),
            (reviews, status),
            "{stages} stages, {message:?}, {answer:?}"
        );
        if status == Status::GaveUp {
            assert!(
                step.write
                    .end_reason
                    .unwrap()
                    .starts_with("reached the token budget"),
            );
        }
    }
}

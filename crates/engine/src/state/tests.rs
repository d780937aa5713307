//! State file round trips and the invariants `State::from_json` enforces.

use super::*;

fn ralph() -> State {
    State::new_ralph(
        "Fix it".into(),
        "DONE".into(),
        SetupOptions::default(),
        None,
        Timestamp(100),
    )
}

#[test]
fn ralph_state_round_trips_through_json() {
    let state = ralph();
    let text = state.to_json_pretty();
    assert_eq!(State::from_json(text.as_bytes()).unwrap(), state);
    assert_eq!(state.iterations, [1]);
    assert_eq!(state.max_iterations, DEFAULT_MAX_ITERATIONS);
    assert_eq!(state.no_progress_limit, DEFAULT_NO_PROGRESS_LIMIT);
}

#[test]
fn inconsistent_files_are_rejected() {
    let mut state = ralph();
    state.stage = 3;
    assert!(matches!(
        State::from_json(state.to_json_pretty().as_bytes()),
        Err(StateError::Inconsistent(_))
    ));
    let mut state = ralph();
    state.iterations.push(0);
    assert!(matches!(
        State::from_json(state.to_json_pretty().as_bytes()),
        Err(StateError::Inconsistent(_))
    ));
    let mut state = ralph();
    state.version = 9;
    assert!(matches!(
        State::from_json(state.to_json_pretty().as_bytes()),
        Err(StateError::Version(9))
    ));
    assert!(matches!(
        State::from_json(b"{\"version\": 1"),
        Err(StateError::Parse(_))
    ));
    // The loop's bounds: no zero iterations, no zero stages, no more stages than exist.
    for edit in [
        (|s: &mut State| s.max_iterations = 0) as fn(&mut State),
        |s| s.max_stages = 0,
        |s| s.max_stages = s.stages.len() + 1,
    ] {
        let mut state = ralph();
        edit(&mut state);
        assert!(
            matches!(
                State::from_json(state.to_json_pretty().as_bytes()),
                Err(StateError::Inconsistent(_))
            ),
            "{state:?}"
        );
    }
    let mut state = ralph();
    state.max_stages = state.stages.len();
    assert!(State::from_json(state.to_json_pretty().as_bytes()).is_ok());
}

/// `pagent status` and the event log print `as_str`; the state file holds serde's name.
/// They must agree, or a script reading both sees two names for one status.
#[test]
fn a_status_prints_as_the_state_file_names_it() {
    for status in [
        Status::Active,
        Status::Complete,
        Status::Cancelled,
        Status::GaveUp,
    ] {
        assert_eq!(
            serde_json::to_value(status).unwrap(),
            serde_json::Value::from(status.as_str())
        );
    }
}

/// A status as a person reads it, and as the state file spells it: every variant, so a
/// word changed in one of them is a failing test (found by `scripts/mutants.sh`: nothing
/// pinned `as_words`).
#[test]
fn a_status_reads_in_words_and_is_stored_in_snake_case() {
    let all = [
        Status::Active,
        Status::Complete,
        Status::Cancelled,
        Status::GaveUp,
    ];
    let words: Vec<_> = all.iter().map(|s| (s.as_str(), s.as_words())).collect();
    assert_eq!(
        words,
        [
            ("active", "active"),
            ("complete", "complete"),
            ("cancelled", "cancelled"),
            ("gave_up", "gave up"),
        ]
    );
}

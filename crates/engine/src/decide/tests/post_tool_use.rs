//! [`decide_post_tool_use`] and [`record_check`]: who gets an edit checked, under which
//! settings, and what the loop remembers.

use super::*;
use crate::backpressure::{BackpressureConfig, CheckResult, ExtensionChecks};
use crate::{Driver, FailedCheck, State, Status};

fn edit(session: Option<&str>, seal_valid: bool) -> EditEvent<'_> {
    EditEvent {
        session_id: session,
        seal_valid,
    }
}

fn user(always: bool) -> BackpressureConfig {
    BackpressureConfig {
        always,
        ..BackpressureConfig::default()
    }
}

/// (state, editing session, seal valid, user's `always`) and the plan's stage, if any.
type Case<'a> = (
    Option<&'a State>,
    Option<&'a str>,
    bool,
    bool,
    Option<Option<&'a str>>,
);

/// Who gets checks: the user's own active loop's session, an unclaimed loop, any agent of
/// `pagent loop`; never another session, a stranger's state or a finished loop, unless
/// the user's config checks everywhere (and then nothing is written: no stage).
#[test]
fn checks_run_for_the_loops_own_edits_or_where_the_user_always_wants_them() {
    let claimed = ralph(5);
    let mut unclaimed = ralph(5);
    unclaimed.session_id = None;
    let mut driven = ralph(5);
    driven.driver = Driver::Loop;
    let mut done = ralph(5);
    done.status = Status::Complete;
    let owned = Some("ralph");
    let cases: [Case<'_>; 12] = [
        (Some(&claimed), Some("s1"), true, false, Some(owned)),
        (Some(&claimed), Some("s2"), true, false, None),
        (Some(&claimed), None, true, false, None),
        (Some(&claimed), Some("s2"), true, true, Some(None)),
        (Some(&claimed), Some("s1"), false, false, None),
        (Some(&claimed), Some("s1"), false, true, Some(None)),
        (Some(&unclaimed), Some("s7"), true, false, Some(owned)),
        (Some(&unclaimed), None, true, false, Some(owned)),
        (Some(&driven), Some("agent-3"), true, false, Some(owned)),
        (Some(&done), Some("s1"), true, false, None),
        (None, Some("s1"), true, false, None),
        (None, Some("s1"), true, true, Some(None)),
    ];
    for (index, (state, session, seal_valid, always, expected)) in cases.into_iter().enumerate() {
        let plan = decide_post_tool_use(&edit(session, seal_valid), state, &user(always));
        assert_eq!(
            plan.as_ref().map(|p| p.stage.as_deref()),
            expected,
            "case {index}"
        );
    }
}

/// The loop's sealed settings apply over the user's; outside a loop only the user's do.
#[test]
fn the_loops_settings_overlay_the_users() {
    let mut state = ralph(5);
    let mut sealed = BackpressureConfig::default();
    sealed
        .checks
        .insert("py".into(), ExtensionChecks::Switch(false));
    state.backpressure = Some(sealed);
    let mut mine = user(true);
    mine.checks
        .insert("rs".into(), ExtensionChecks::Switch(false));
    let plan = decide_post_tool_use(&edit(Some("s1"), true), Some(&state), &mine).unwrap();
    assert!(plan.config.checks_for("py").is_empty());
    assert!(plan.config.checks_for("rs").is_empty());
    assert!(!plan.config.checks_for("json").is_empty());
    let plan = decide_post_tool_use(&edit(Some("s2"), true), Some(&state), &mine).unwrap();
    assert!(!plan.config.checks_for("py").is_empty());
    assert!(plan.config.checks_for("rs").is_empty());
}

#[test]
fn a_failure_is_remembered_a_pass_forgets_it_and_the_runners_loop_is_left_alone() {
    let failed = vec![
        ("json".to_owned(), CheckResult::Failed("line 1: bad".into())),
        ("python3 -m py_compile".to_owned(), CheckResult::Passed),
    ];
    let state = ralph(5);
    let next = record_check(&state, Some("s1"), "a.json", &failed).unwrap();
    assert_eq!(
        next.failing_checks.get("a.json"),
        Some(&FailedCheck {
            checks: "json".into(),
            output: "line 1: bad".into(),
        })
    );
    // The same failure again writes nothing; a pass forgets it.
    assert_eq!(record_check(&next, Some("s1"), "a.json", &failed), None);
    let passed = vec![("json".to_owned(), CheckResult::Passed)];
    let fixed = record_check(&next, Some("s1"), "a.json", &passed).unwrap();
    assert!(fixed.failing_checks.is_empty());
    assert_eq!(record_check(&state, Some("s1"), "a.json", &passed), None);
    // Another session's loop and the runner's are not this hook's to write.
    assert_eq!(record_check(&state, Some("s2"), "a.json", &failed), None);
    let mut driven = state.clone();
    driven.driver = Driver::Loop;
    assert_eq!(
        record_check(&driven, Some("agent"), "a.json", &failed),
        None
    );
    let mut unclaimed = state;
    unclaimed.session_id = None;
    assert!(record_check(&unclaimed, None, "a.json", &failed).is_some());
}

#[test]
fn the_log_says_how_each_check_ended() {
    for (result, said) in [
        (CheckResult::Passed, "json a.json: passed"),
        (CheckResult::Failed("x".into()), "json a.json: failed"),
        (
            CheckResult::TimedOut {
                after_secs: 30,
                output: String::new(),
            },
            "json a.json: timed out after 30 s",
        ),
        (
            CheckResult::Skipped("not installed".into()),
            "json a.json: skipped: not installed",
        ),
    ] {
        assert_eq!(record_check_log("json", "a.json", &result), said);
    }
}

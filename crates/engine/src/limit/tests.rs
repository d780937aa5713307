//! The usage-limit policy as tables: what to wait for and how long, what ends a loop,
//! what a StopFailure writes, and how waiting stays out of the time worked.

use super::*;
use crate::decide::tests::{NOW, ralph};
use crate::testing::MemoryWorld;
use crate::{Decision, decide_iteration};

fn seen(kind: LimitKind, resets_at: Option<u64>) -> LimitSeen {
    LimitSeen {
        kind,
        message: "You've hit your 5-hour limit · resets 3am (Europe/Paris)".into(),
        resets_at: resets_at.map(Timestamp),
    }
}

#[test]
fn issue_21_what_each_limit_waits_for() {
    let now = Timestamp(10_000);
    let wait = |until: u64, known: bool| LimitPlan::Wait {
        until: Timestamp(until),
        reset_known: known,
    };
    let cases = [
        (
            "a window with a reset ahead",
            seen(LimitKind::Window, Some(13_600)),
            wait(13_660, true),
        ),
        (
            "a window with no reset",
            seen(LimitKind::Window, None),
            wait(11_800, false),
        ),
        (
            "a reset already passed",
            seen(LimitKind::Window, Some(9_000)),
            wait(11_800, false),
        ),
        (
            "a weekly window days ahead",
            seen(LimitKind::Window, Some(10_000 + 5 * 86_400)),
            wait(10_000 + 5 * 86_400 + 60, true),
        ),
        (
            "a reset beyond any window",
            seen(LimitKind::Window, Some(10_000 + 30 * 86_400)),
            wait(10_000 + MAX_WAIT_SECS, true),
        ),
        (
            "credits that reset tonight",
            seen(LimitKind::Credit, Some(13_600)),
            wait(13_660, true),
        ),
    ];
    for (what, seen, expected) in cases {
        let options = WaitOptions {
            margin_secs: 60,
            fallback_secs: 1_800,
        };
        assert_eq!(plan(&seen, now, options), expected, "{what}");
    }
    for (what, seen) in [
        ("credits with no reset", seen(LimitKind::Credit, None)),
        (
            "a monthly cap",
            seen(LimitKind::Credit, Some(10_000 + CREDIT_HORIZON_SECS + 1)),
        ),
    ] {
        let LimitPlan::GiveUp(reason) = plan(&seen, now, WaitOptions::default()) else {
            panic!("{what}: waited");
        };
        assert!(
            reason.starts_with("credit or spend stop: You've hit your 5-hour limit"),
            "{what}: {reason}"
        );
    }
}

#[test]
fn issue_21_a_wait_counts_no_iteration_and_no_work() {
    let mut state = ralph(10);
    state.no_progress_count = 2;
    state.usage.elapsed_secs = 100;
    state.updated_at = Timestamp(900);
    let outcome = begin_wait(
        &state,
        &seen(LimitKind::Window, None),
        Some(Timestamp(4_600)),
        false,
        NOW,
    );
    let waiting = outcome.write.unwrap();
    assert_eq!(waiting.iterations, state.iterations);
    assert_eq!(waiting.no_progress_count, 2);
    assert_eq!(
        waiting.usage.elapsed_secs, 200,
        "the work before the limit counts"
    );
    assert_eq!(outcome.log.unwrap().action, Action::LimitWait);
    // Three hours of waiting: none of it is work, all of it is waiting.
    let later = Timestamp(NOW.0 + 3 * 3600);
    assert_eq!(crate::budget::worked_secs(&waiting, later), 200);
    assert_eq!(crate::budget::waited_secs(&waiting, later), 3 * 3600);
    let after = end_wait(&waiting, later);
    assert_eq!(after.limit_wait, None);
    assert_eq!(after.usage.waited_secs, 3 * 3600);
    assert_eq!(crate::budget::worked_secs(&after, later), 200);
    assert_eq!(
        crate::budget::worked_secs(&after, Timestamp(later.0 + 10)),
        210
    );
}

#[test]
fn issue_21_the_time_budget_is_not_spent_waiting() {
    let mut state = ralph(10);
    state.budget.max_duration_secs = Some(3600);
    state.usage.elapsed_secs = 1800;
    state.updated_at = NOW;
    let waiting = begin_wait(&state, &seen(LimitKind::Window, None), None, false, NOW)
        .write
        .unwrap();
    let morning = Timestamp(NOW.0 + 8 * 3600);
    assert_eq!(crate::budget::reached(&waiting, morning), None);
    // The next decision after the wait: an hour's budget, half of it worked.
    let mut world = MemoryWorld::default().message("working").tree("t1");
    let step = decide_iteration(&waiting, &mut world, morning);
    assert!(matches!(step.decision, Decision::Block { .. }), "{step:?}");
    assert_eq!(step.write.usage.elapsed_secs, 1800);
    assert_eq!(step.write.usage.waited_secs, 8 * 3600);
    assert_eq!(step.write.limit_wait, None);
}

fn failure<'a>(error: &'a str, limit: Option<LimitSeen>) -> StopFailureEvent<'a> {
    StopFailureEvent {
        session_id: Some("s1"),
        seal_valid: true,
        error,
        limit,
        outage: false,
        client: Some("2.1.330"),
        now: NOW,
    }
}

#[test]
fn issue_21_stop_failure_marks_the_loop_waiting_once() {
    let state = ralph(10);
    let event = failure(
        "rate_limit",
        Some(seen(LimitKind::Window, Some(NOW.0 + 3600))),
    );
    let outcome = decide_stop_failure(&event, &state);
    let written = outcome.write.clone().unwrap();
    let wait = written.limit_wait.clone().unwrap();
    assert_eq!(wait.until, Some(Timestamp(NOW.0 + 3660)));
    assert!(wait.reset_known);
    assert_eq!(written.iterations, state.iterations);
    assert_eq!(written.no_progress_count, state.no_progress_count);
    let Decision::Notify(message) = &outcome.decision else {
        panic!("{outcome:?}");
    };
    insta::assert_snapshot!(message);
    // Told once: a second StopFailure while waiting writes nothing.
    assert_eq!(decide_stop_failure(&event, &written), Outcome::silent());
}

#[test]
fn issue_21_no_other_api_error_touches_the_loop() {
    let state = ralph(10);
    let mut other_session = state.clone();
    other_session.session_id = Some("someone-else".into());
    let mut paused = state.clone();
    paused.paused = Some(crate::Pause {
        since: NOW,
        why: "you wrote a message".into(),
        told: false,
    });
    let mut unsealed = failure("rate_limit", None);
    unsealed.seal_valid = false;
    let mut nameless = failure("rate_limit", None);
    nameless.session_id = None;
    let mut driven = state.clone();
    driven.driver = crate::Driver::Loop;
    // Issue 30: a `rate_limit` whose words are the server's own throttle or an API key's
    // rate limit is an outage: the loop is not marked waiting for a usage limit.
    let mut throttled = failure("rate_limit", None);
    throttled.outage = true;
    for (what, event, state) in [
        ("server_error", failure("server_error", None), &state),
        ("overloaded", failure("overloaded", None), &state),
        ("unknown", failure("invalid_request", None), &state),
        (
            "another session's loop",
            failure("rate_limit", None),
            &other_session,
        ),
        ("a paused loop", failure("rate_limit", None), &paused),
        ("an unsealed state", unsealed, &state),
        ("no session named", nameless, &state),
        (
            "a loop pagent loop drives",
            failure("rate_limit", None),
            &driven,
        ),
        ("the server's throttle", throttled, &state),
    ] {
        assert_eq!(
            decide_stop_failure(&event, state),
            Outcome::silent(),
            "{what}"
        );
    }
}

#[test]
fn issue_21_a_limit_without_a_reset_still_waits_in_the_session() {
    let state = ralph(10);
    let outcome = decide_stop_failure(&failure("rate_limit", None), &state);
    let wait = outcome.write.unwrap().limit_wait.unwrap();
    assert_eq!((wait.until, wait.reset_known), (None, false));
    assert_eq!(wait.why, "Claude Code hit a usage limit");
}

#[test]
fn issue_21_a_credit_limit_gives_up_with_the_agents_words() {
    let state = ralph(10);
    let outcome = give_up(&state, "the agent hit a spend limit".into(), NOW);
    let written = outcome.write.unwrap();
    assert_eq!(written.status, Status::GaveUp);
    assert_eq!(
        written.end_reason.as_deref(),
        Some("the agent hit a spend limit")
    );
    assert_eq!(outcome.log.unwrap().action, Action::GaveUp);
}

/// Issue 30, §2: a limit no wait ends, as each kind reads, and the words that say so.
#[test]
fn issue_30_a_limit_that_does_not_reset_ends_with_the_reason_in_words() {
    let now = Timestamp(10_000);
    let cases = [
        (LimitKind::Credit, None, "You're out of usage credits"),
        (
            LimitKind::Credit,
            Some(10_000 + 4 * 86_400),
            "You've hit your org's monthly usage limit · resets Dec 1",
        ),
        (
            LimitKind::Admin,
            Some(10_000 + 3600),
            "Your seat type doesn't include usage credits",
        ),
        (
            LimitKind::Admin,
            None,
            "Your usage allocation has been disabled by your admin.",
        ),
    ];
    let mut said = Vec::new();
    for (kind, resets_at, message) in cases {
        let seen = LimitSeen {
            kind,
            message: message.into(),
            resets_at: resets_at.map(Timestamp),
        };
        let LimitPlan::GiveUp(reason) = plan(&seen, now, WaitOptions::default()) else {
            panic!("{message}: waited");
        };
        said.push(reason);
    }
    insta::assert_snapshot!(said.join("\n"));
}

/// Issue 30, §2 in a session: StopFailure of a limit no wait ends ends the loop at once
/// (never a wait "until the session goes on" that nothing ends).
#[test]
fn issue_30_stop_failure_of_a_stop_ends_the_loop() {
    let state = ralph(10);
    let seat = LimitSeen {
        kind: LimitKind::Admin,
        message: "Your seat type doesn't include usage credits".into(),
        resets_at: Some(Timestamp(NOW.0 + 7 * 86_400)),
    };
    let outcome = decide_stop_failure(&failure("rate_limit", Some(seat)), &state);
    let written = outcome.write.clone().unwrap();
    assert_eq!(written.status, Status::GaveUp);
    assert_eq!(written.limit_wait, None);
    assert_eq!(written.iterations, state.iterations);
    assert_eq!(outcome.log.as_ref().unwrap().action, Action::GaveUp);
    let Decision::Notify(message) = &outcome.decision else {
        panic!("{outcome:?}");
    };
    // Told at the session's next prompt too: Claude Code shows no StopFailure message.
    assert_eq!(written.session_notice.as_ref(), Some(message));
    insta::assert_snapshot!(message);
}

/// Issue 30, §4: what the session's user must do after a limit, by client: 2.1.234 and
/// later go on by themselves, 2.1.197 waits for the user.
#[test]
fn issue_30_the_session_says_what_to_do_on_each_client() {
    assert_eq!(continues_by_itself("2.1.197"), Some(false));
    assert_eq!(continues_by_itself("2.1.233"), Some(false));
    assert_eq!(continues_by_itself("2.1.234"), Some(true));
    assert_eq!(continues_by_itself("2.1.332"), Some(true));
    assert_eq!(continues_by_itself("3.0.0"), Some(true));
    for junk in ["", "2.1", "two", "2.1.x"] {
        assert_eq!(continues_by_itself(junk), None, "{junk:?}");
    }
    let mut said = Vec::new();
    for client in [Some("2.1.197"), Some("2.1.332"), None] {
        let mut event = failure(
            "rate_limit",
            Some(seen(LimitKind::Window, Some(NOW.0 + 3600))),
        );
        event.client = client;
        let outcome = decide_stop_failure(&event, &ralph(10));
        assert_eq!(
            outcome.write.unwrap().limit_wait.unwrap().client.as_deref(),
            client
        );
        let Decision::Notify(message) = outcome.decision else {
            panic!();
        };
        said.push(message);
    }
    insta::assert_snapshot!(said.join("\n"));
}

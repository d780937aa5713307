//! Issue 30, §2: every failed run classified, and what follows each class, as tables.

use super::*;
use crate::limit::{CREDIT_HORIZON_SECS, LimitKind};

const NOW: Timestamp = Timestamp(100_000);

fn options() -> RetryOptions {
    RetryOptions {
        retries: 3,
        first_delay_secs: 5,
        outage_secs: 3600,
        no_limit_wait: false,
    }
}

fn seen(kind: LimitKind, resets_in: Option<u64>, message: &str) -> LimitSeen {
    LimitSeen {
        kind,
        message: message.into(),
        resets_at: resets_in.map(|secs| Timestamp(NOW.0 + secs)),
    }
}

fn wait() -> WaitOptions {
    WaitOptions {
        margin_secs: 60,
        fallback_secs: 1800,
    }
}

#[test]
fn issue_30_every_failed_run_is_classified() {
    let window = seen(
        LimitKind::Window,
        Some(3600),
        "You've hit your 5-hour limit",
    );
    let credit_tonight = seen(
        LimitKind::Credit,
        Some(3600),
        "You're out of usage credits · resets 3am (Europe/Paris)",
    );
    let credit = seen(LimitKind::Credit, None, "You're out of usage credits");
    let monthly = seen(
        LimitKind::Credit,
        Some(CREDIT_HORIZON_SECS + 1),
        "You've hit your org's monthly usage limit",
    );
    let seat = seen(
        LimitKind::Admin,
        Some(3600),
        "Your seat type doesn't include usage credits",
    );
    let cases: [(&str, Failed<'_>, FailureClass); 8] = [
        ("a window", Failed::Limit(&window), FailureClass::UsageLimit),
        (
            "credits that reset tonight",
            Failed::Limit(&credit_tonight),
            FailureClass::UsageLimit,
        ),
        ("out of credits", Failed::Limit(&credit), FailureClass::Stop),
        ("a monthly cap", Failed::Limit(&monthly), FailureClass::Stop),
        (
            "a seat, whatever its reset",
            Failed::Limit(&seat),
            FailureClass::Stop,
        ),
        (
            "a 529",
            Failed::Outage("API Error: 529 Overloaded"),
            FailureClass::Outage,
        ),
        (
            "a bad exit",
            Failed::Crash("the agent exited with code 1"),
            FailureClass::Crash,
        ),
        (
            "a signal",
            Failed::Crash("the agent was killed by a signal"),
            FailureClass::Crash,
        ),
    ];
    for (what, failed, class) in cases {
        let verdict = after_failure(failed, Attempts::default(), NOW, options(), wait());
        assert_eq!(verdict.class, class, "{what}");
        let expected = match class {
            FailureClass::UsageLimit => matches!(verdict.next, AfterFailure::Wait { .. }),
            FailureClass::Stop => matches!(&verdict.next, AfterFailure::End(reason)
                if reason.contains(": waiting will not end this")),
            _ => matches!(verdict.next, AfterFailure::Retry { .. }),
        };
        assert!(expected, "{what}: {verdict:?}");
    }
}

/// A crash is retried `--retries` times with a doubling delay, then the runner stops.
#[test]
fn issue_30_a_crash_is_retried_then_fails() {
    let mut attempts = Attempts::default();
    let mut delays = Vec::new();
    let mut texts = Vec::new();
    loop {
        let verdict = after_failure(
            Failed::Crash("the agent exited with code 1"),
            attempts,
            NOW,
            options(),
            wait(),
        );
        attempts = verdict.attempts;
        match verdict.next {
            AfterFailure::Retry { delay_secs, text } => {
                delays.push(delay_secs);
                texts.push(text);
            }
            AfterFailure::Stop(reason) => {
                texts.push(reason);
                break;
            }
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(delays, [5, 10, 20]);
    insta::assert_snapshot!(texts.join("\n"));
}

/// An outage is retried, with the delay doubling up to five minutes, while it lasts less
/// than `--outage-wait`, however many runs that takes; then the runner stops.
#[test]
fn issue_30_an_outage_is_retried_with_backoff_until_outage_wait() {
    let mut attempts = Attempts::default();
    let mut now = NOW;
    let mut delays = Vec::new();
    let stopped = loop {
        let verdict = after_failure(
            Failed::Outage("API Error: 529 Overloaded"),
            attempts,
            now,
            options(),
            wait(),
        );
        assert_eq!(verdict.class, FailureClass::Outage);
        attempts = verdict.attempts;
        match verdict.next {
            AfterFailure::Retry { delay_secs, .. } => {
                delays.push(delay_secs);
                now = Timestamp(now.0 + delay_secs + 2);
            }
            AfterFailure::Stop(reason) => break reason,
            other => panic!("{other:?}"),
        }
    };
    assert_eq!(attempts.crashes, 0, "an outage spends no crash retry");
    assert_eq!(&delays[..8], [5, 10, 20, 40, 80, 160, 300, 300]);
    assert!(delays.len() > options().retries as usize + 5, "{delays:?}");
    // The last delay ends at the hour, not past it.
    assert_eq!(attempts.outage_since, Some(NOW));
    assert!(
        now.since(NOW) >= 3600 && now.since(NOW) < 3600 + 300,
        "{now:?}"
    );
    let first = after_failure(
        Failed::Outage("API Error: 529 Overloaded"),
        Attempts::default(),
        NOW,
        options(),
        wait(),
    );
    let AfterFailure::Retry { text, .. } = first.next else {
        panic!("{first:?}");
    };
    insta::assert_snapshot!(format!("{text}\n{stopped}"));
    // `--outage-wait 0`: no retry.
    let none = RetryOptions {
        outage_secs: 0,
        ..options()
    };
    let verdict = after_failure(
        Failed::Outage("down"),
        Attempts::default(),
        NOW,
        none,
        wait(),
    );
    assert!(matches!(verdict.next, AfterFailure::Stop(_)), "{verdict:?}");
}

/// `--no-limit-wait`: a limit that resets is retried as a crash is; one no wait ends still
/// ends the loop at once.
#[test]
fn issue_30_no_limit_wait_retries_a_limit_but_never_a_stop() {
    let options = RetryOptions {
        no_limit_wait: true,
        ..options()
    };
    let window = seen(LimitKind::Window, Some(60), "You've hit your session limit");
    let verdict = after_failure(
        Failed::Limit(&window),
        Attempts::default(),
        NOW,
        options,
        wait(),
    );
    assert_eq!(verdict.class, FailureClass::UsageLimit);
    assert_eq!(verdict.attempts.crashes, 1);
    let AfterFailure::Retry { text, .. } = verdict.next else {
        panic!("{verdict:?}");
    };
    assert_eq!(
        text,
        "usage limit: You've hit your session limit (--no-limit-wait); retry 1 of 3 in 5s, not counted as an iteration"
    );
    let seat = seen(
        LimitKind::Admin,
        None,
        "Your seat type doesn't include usage",
    );
    let verdict = after_failure(
        Failed::Limit(&seat),
        Attempts::default(),
        NOW,
        options,
        wait(),
    );
    assert!(matches!(verdict.next, AfterFailure::End(_)), "{verdict:?}");
}

#[test]
fn issue_30_the_last_failure_is_kept_until_an_iteration_ends() {
    let state = crate::decide::tests::ralph(10);
    let verdict = after_failure(
        Failed::Outage("API Error: 529 Overloaded"),
        Attempts::default(),
        NOW,
        options(),
        wait(),
    );
    let AfterFailure::Retry { text, .. } = &verdict.next else {
        panic!("{verdict:?}");
    };
    let failed = record(&state, &verdict, text, NOW);
    let last = failed.last_failure.clone().unwrap();
    assert_eq!(
        (last.class, last.retry_at),
        (FailureClass::Outage, Some(Timestamp(NOW.0 + 5)))
    );
    assert_eq!(
        last.describe(Timestamp(NOW.0 + 3)),
        format!("3s ago: {text}")
    );
    assert_eq!(failed.iterations, state.iterations, "no iteration counted");
    // The next decision clears it.
    let mut world = crate::testing::MemoryWorld::default()
        .message("working")
        .tree("t1");
    let step = crate::decide_iteration(&failed, &mut world, Timestamp(NOW.0 + 10));
    assert_eq!(step.write.last_failure, None);
    let names: Vec<&str> = [
        FailureClass::Outage,
        FailureClass::UsageLimit,
        FailureClass::Stop,
        FailureClass::Crash,
    ]
    .iter()
    .map(|c| {
        assert_eq!(
            serde_json::to_value(c).unwrap(),
            serde_json::Value::from(c.as_str())
        );
        c.label()
    })
    .collect();
    assert_eq!(
        names,
        [
            "service outage",
            "usage limit",
            "credit, spend or admin stop",
            "agent crash or bad exit"
        ]
    );
}

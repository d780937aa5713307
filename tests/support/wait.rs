//! Waiting for a condition under a deadline: the one way a test lets time pass.
//!
//! A test that sleeps a fixed time and then asserts decides on a guess: on a fast
//! machine it wastes the sleep, on a slow one the thing has not happened yet and the
//! test fails (or, asserting that nothing happened, passes because it looked too
//! early). Here a test names the condition it is waiting for and a deadline; the
//! condition is looked at every [`POLL`], the wait ends the moment it holds, and only a
//! condition still false at the deadline fails the test, with what was seen last. The
//! deadline is generous (it is only reached when something is wrong), so it never
//! decides a passing test.

use std::fmt::Display;
use std::time::{Duration, Instant};

/// How often a condition is looked at.
pub const POLL: Duration = Duration::from_millis(20);

/// Waits until `condition` holds, looking every [`POLL`]; fails the test with `what` if
/// it still does not at `deadline` (counted from now). Returns how long it took.
pub fn wait_for(
    deadline: Duration,
    what: impl Display,
    mut condition: impl FnMut() -> bool,
) -> Duration {
    let started = Instant::now();
    wait_until(deadline, what, || condition().then_some(()));
    started.elapsed()
}

/// Waits until `found` returns something and returns it; fails the test with `what` if
/// it returns `None` up to `deadline`.
pub fn wait_until<T>(
    deadline: Duration,
    what: impl Display,
    mut found: impl FnMut() -> Option<T>,
) -> T {
    wait_showing(deadline, what, || found().ok_or(String::new()))
}

/// Waits until `look` returns `Ok` and returns its value; fails the test with `what` and
/// the last `Err` (what was seen instead: a screen, a log) if none came by `deadline`.
pub fn wait_showing<T>(
    deadline: Duration,
    what: impl Display,
    look: impl FnMut() -> Result<T, String>,
) -> T {
    wait_showing_every(deadline, POLL, what, look)
}

/// [`wait_showing`], looking every `every` instead of every [`POLL`]: for a look that
/// costs a process of its own (a terminal's screen captured by tmux).
pub fn wait_showing_every<T>(
    deadline: Duration,
    every: Duration,
    what: impl Display,
    mut look: impl FnMut() -> Result<T, String>,
) -> T {
    let until = Instant::now() + deadline;
    loop {
        let seen = match look() {
            Ok(value) => return value,
            Err(seen) => seen,
        };
        if Instant::now() >= until {
            panic!("waited {deadline:?} for {what}, in vain; what was seen last:\n{seen}");
        }
        std::thread::sleep(every);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_wait_ends_when_its_condition_holds() {
        let started = Instant::now();
        let mut looks = 0;
        let took = wait_for(Duration::from_secs(20), "three looks", || {
            looks += 1;
            looks == 3
        });
        assert_eq!(looks, 3);
        assert!(took < Duration::from_secs(20) && started.elapsed() >= took);
        assert_eq!(wait_until(Duration::from_secs(1), "a value", || Some(7)), 7);
    }

    #[test]
    fn a_condition_that_never_holds_fails_at_its_deadline_with_what_was_seen() {
        let started = Instant::now();
        let failed = std::panic::catch_unwind(|| {
            wait_showing(Duration::from_millis(100), "the marker", || {
                Err::<(), _>("the screen as it was".to_owned())
            })
        })
        .unwrap_err();
        let message = failed.downcast_ref::<String>().unwrap();
        assert!(message.contains("the marker"), "{message}");
        assert!(message.contains("the screen as it was"), "{message}");
        assert!(started.elapsed() >= Duration::from_millis(100));
    }
}

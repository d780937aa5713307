//! Time limits measured against this machine, now.
//!
//! A test that asserts "this took less than 5 s" was tuned on one machine at one load.
//! Under qemu, or on two cores beside 64 stress hooks, the same correct code takes ten
//! times as long and the test fails; loosen the limit to 60 s and it no longer catches
//! the regression it was written for. So a limit here is counted in [`Baseline`]s: the
//! time a reference run (the same operation unobstructed, or the same work on a smaller
//! input) takes on this machine, measured by the test itself just before. The crash test
//! started this (it kills hooks within 1.5 times what one whole hook takes here); this
//! module is that idea for every wall-clock assertion.
//!
//! The limit scales with the machine but not with the regression: a wait that never
//! ends, a timeout not enforced, or work that grows as the square of its input grows
//! against the baseline too, and still fails. [`assert_linear`] makes that exact for
//! growth: quadratic work on eight times the input is 64 baselines, against a limit of
//! [`LINEAR_SLACK`] × 8 = 24 (its test below shows a quadratic function caught).

use std::time::{Duration, Instant};

/// How much slower than exactly linear [`assert_linear`] lets the large run be: room for
/// caches, allocation and load, and well under the square of any scale from 4 up.
pub const LINEAR_SLACK: u32 = 3;

/// What a reference run takes on this machine, now: the fastest of a few runs, the one
/// least disturbed by whatever else the machine is doing.
#[derive(Debug, Clone, Copy)]
pub struct Baseline {
    unit: Duration,
}

impl Baseline {
    /// Runs `reference` `runs` times (at least once) and keeps the fastest.
    pub fn measure(runs: u32, mut reference: impl FnMut()) -> Baseline {
        let unit = (0..runs.max(1))
            .map(|_| timed(&mut reference).1)
            .min()
            .unwrap_or_default();
        Baseline { unit }
    }

    /// A baseline already timed by the test (a reference run whose result it also uses).
    pub fn of(unit: Duration) -> Baseline {
        Baseline { unit }
    }

    /// The reference run's time.
    pub fn unit(self) -> Duration {
        self.unit
    }

    /// The limit for something that takes `times` reference runs on any machine, and
    /// never less than `floor`: the limit as it was on a quiet machine, below which the
    /// scheduler's noise is larger than the work.
    pub fn limit(self, times: u32, floor: Duration) -> Duration {
        (self.unit * times).max(floor)
    }

    /// Asserts `took` is within [`Baseline::limit`], naming `what` and the figures.
    pub fn assert_within(self, took: Duration, times: u32, floor: Duration, what: &str) {
        let limit = self.limit(times, floor);
        assert!(
            took <= limit,
            "{what} took {took:?}: over {limit:?} ({times} × {:?}, the reference run here now, or at least {floor:?})",
            self.unit
        );
    }
}

/// Runs `f` and returns its result and how long it took.
pub fn timed<T>(f: impl FnOnce() -> T) -> (T, Duration) {
    let started = Instant::now();
    let value = f();
    (value, started.elapsed())
}

/// How many times longer `large` took than `small`, each the fastest of two runs (one
/// run disturbed by other load does not decide; a third costs the large run again).
pub fn growth(mut small: impl FnMut(), mut large: impl FnMut()) -> f64 {
    let small = Baseline::measure(2, &mut small).unit();
    let large = Baseline::measure(2, &mut large).unit();
    large.as_secs_f64() / small.as_secs_f64().max(1e-6)
}

/// Asserts `what` is linear: `large` does `scale` times the work of `small` and takes at
/// most [`LINEAR_SLACK`] × `scale` times as long (quadratic work takes `scale`²).
pub fn assert_linear(what: &str, scale: u32, small: impl FnMut(), large: impl FnMut()) {
    let ratio = growth(small, large);
    let limit = f64::from(LINEAR_SLACK * scale);
    eprintln!("{what}: {scale} times the input took {ratio:.1} times as long (limit {limit})");
    assert!(
        ratio <= limit,
        "{what}: {scale} times the input took {ratio:.1} times as long (linear is {scale}, the limit {limit})"
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Work that grows as `n`: one pass over the input.
    fn linear(n: usize) -> u64 {
        (0..n as u64).fold(0, |a, i| std::hint::black_box(a.wrapping_add(i)))
    }

    /// Work that grows as `n`²: the bug `assert_linear` is there to catch.
    fn quadratic(n: usize) -> u64 {
        (0..n as u64).fold(0, |a, i| {
            a.wrapping_add(linear(std::hint::black_box(i as usize)))
        })
    }

    #[test]
    fn linear_work_passes_and_quadratic_work_is_caught() {
        assert_linear(
            "one pass",
            8,
            || {
                std::hint::black_box(linear(1_000_000));
            },
            || {
                std::hint::black_box(linear(8_000_000));
            },
        );
        let caught = std::panic::catch_unwind(|| {
            assert_linear(
                "a pass per element",
                8,
                || {
                    std::hint::black_box(quadratic(500));
                },
                || {
                    std::hint::black_box(quadratic(4_000));
                },
            );
        });
        assert!(caught.is_err(), "quadratic growth passed as linear");
    }

    #[test]
    fn a_limit_scales_with_the_baseline_and_keeps_its_floor() {
        let slow = Baseline::of(Duration::from_secs(2));
        assert_eq!(
            slow.limit(10, Duration::from_secs(5)),
            Duration::from_secs(20)
        );
        let fast = Baseline::of(Duration::from_millis(1));
        assert_eq!(
            fast.limit(10, Duration::from_secs(5)),
            Duration::from_secs(5)
        );
        fast.assert_within(Duration::from_secs(4), 10, Duration::from_secs(5), "x");
        let over = std::panic::catch_unwind(|| {
            slow.assert_within(
                Duration::from_secs(30),
                10,
                Duration::from_secs(5),
                "a hang",
            );
        });
        assert!(over.is_err());
    }

    #[test]
    fn a_baseline_is_the_fastest_run() {
        let mut runs = 0;
        let baseline = Baseline::measure(3, || {
            runs += 1;
            std::thread::sleep(Duration::from_millis(if runs == 2 { 5 } else { 40 }));
        });
        assert_eq!(runs, 3);
        assert!(baseline.unit() < Duration::from_millis(40), "{baseline:?}");
    }
}

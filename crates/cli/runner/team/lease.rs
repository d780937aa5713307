//! Leases without trusting anyone's clock.
//!
//! Holding a story means exactly one thing: the remote's `claims/STORY` is one of this
//! holding's claim commits. Every push that acts for the story (a renewal with its work
//! in progress, a landing, a give-up) carries a lease on that commit, so it is a
//! compare-and-swap at the remote: two workers can never both act for one story, whatever
//! their clocks say, and a worker whose claim was taken over learns it from its next push
//! or fetch, stops the story's loop and pushes its work to `salvage/`. The timing rules
//! below only decide when a silent holder is taken to be gone, measured on each
//! machine's own monotonic clock, never by comparing two machines' wall clocks:
//!
//! - **Holder.** It renews every `lease / 3` (a new claim commit, lease: its last one).
//! - **Observer.** Another worker takes the story over only once it has seen the *same*
//!   claim commit, unchanged, for `lease + margin` of its own time, restarting its timer
//!   whenever the commit changes, whenever it could not look (offline), and when it
//!   starts. Its takeover is a compare-and-swap on that stale commit: of several
//!   observers, one wins.
//!
//! A live holder changes its claim every third of a lease, so an observer sees it change
//! long before `lease + margin`: a skew between clocks does not enter (each measures only
//! its own durations), and the margin absorbs a drift of the clocks' rates and a slow
//! push. A holder that could not renew for that long (it died, or lost the network) is
//! taken over, and if it comes back its next push is rejected. The design sketch also had
//! the holder stop acting past `lease - margin`; that adds nothing the claim's lease on
//! every push does not already guarantee, and on a loaded machine (a push taking a
//! second) it made landings wait for renewals, so a holder here keeps working and lets
//! the compare-and-swap decide. A claim its holder released is taken over at once.

use std::collections::HashMap;
use std::time::{Duration, Instant};

/// The team's lease, and the times derived from it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Lease {
    pub length: Duration,
}

impl Lease {
    pub fn of_secs(secs: u64) -> Lease {
        Lease {
            length: Duration::from_secs(secs.max(1)),
        }
    }

    pub fn margin(self) -> Duration {
        self.length / 5
    }

    /// How often a holder renews.
    pub fn renew_every(self) -> Duration {
        self.length / 3
    }

    /// How long an observer must see one claim commit unchanged before taking it over.
    pub fn stale_after(self) -> Duration {
        self.length + self.margin()
    }

    /// How often a worker looks at the remote: often enough to renew on time, to notice
    /// a pause or cancel and a story that became free soon, not so often that a shared
    /// remote (or the machine, with many workers on it) feels it. A worker also looks at
    /// once whenever one of its stories ends.
    pub fn tick(self) -> Duration {
        self.renew_every()
            .clamp(Duration::from_secs(1), Duration::from_secs(15))
            .min(self.renew_every().max(Duration::from_millis(500)))
    }
}

/// The holder's clock for one story.
#[derive(Debug, Clone, Copy)]
pub struct Held {
    /// When the last successful renewal push (or the claim) started.
    pub renewed: Instant,
}

impl Held {
    pub fn renewal_due(self, lease: Lease, now: Instant) -> bool {
        now >= self.renewed + lease.renew_every()
    }
}

/// What one worker has seen of other workers' claims: each story's claim commit and
/// since when it has not changed.
#[derive(Debug, Default)]
pub struct Observer {
    seen: HashMap<String, (String, Instant)>,
}

impl Observer {
    /// Notes the claim commit `oid` of `story` as seen `now`; how long it has been
    /// unchanged.
    pub fn observe(&mut self, story: &str, oid: &str, now: Instant) -> Duration {
        match self.seen.get(story) {
            Some((seen, since)) if seen == oid => now.saturating_duration_since(*since),
            _ => {
                self.seen.insert(story.to_owned(), (oid.to_owned(), now));
                Duration::ZERO
            }
        }
    }

    /// Whether the claim of `story` (as last observed) may be taken over `now`.
    pub fn is_stale(&self, story: &str, lease: Lease, now: Instant) -> bool {
        self.seen
            .get(story)
            .is_some_and(|(_, since)| now.saturating_duration_since(*since) >= lease.stale_after())
    }

    /// Forgets `story` (its claim is gone, or ours now).
    pub fn forget(&mut self, story: &str) {
        self.seen.remove(story);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(n: f64) -> Duration {
        Duration::from_secs_f64(n)
    }

    /// A live holder's claim changes three times a lease: an observer never sees one
    /// commit for `lease + margin` while its holder renews, wherever each renewal landed
    /// between its push's start and the observer's look (up to a margin late).
    #[test]
    fn a_renewing_holder_is_never_stale_to_an_observer() {
        let lease = Lease::of_secs(10);
        let t0 = Instant::now();
        let mut observer = Observer::default();
        for (i, late) in [0.0, 1.5, 0.2, 1.9, 0.0, 1.0].iter().enumerate() {
            let renewed = lease.renew_every().as_secs_f64() * i as f64 + late;
            let seen_at = t0 + secs(renewed);
            observer.observe("US-1", &format!("claim {i}"), seen_at);
            let next = seen_at + lease.renew_every() + lease.margin();
            assert!(!observer.is_stale("US-1", lease, next), "renewal {i}");
        }
        let last = t0 + secs(lease.renew_every().as_secs_f64() * 5.0 + 1.0);
        assert!(observer.is_stale("US-1", lease, last + lease.stale_after()));
    }

    #[test]
    fn a_changed_claim_restarts_the_observers_timer() {
        let lease = Lease::of_secs(3);
        let t0 = Instant::now();
        let mut observer = Observer::default();
        observer.observe("s", "a", t0);
        assert_eq!(observer.observe("s", "a", t0 + secs(2.0)), secs(2.0));
        assert_eq!(observer.observe("s", "b", t0 + secs(3.0)), Duration::ZERO);
        assert!(!observer.is_stale("s", lease, t0 + secs(4.0)));
        assert!(observer.is_stale("s", lease, t0 + secs(3.0) + lease.stale_after()));
        observer.forget("s");
        assert!(!observer.is_stale("s", lease, t0 + secs(100.0)));
    }

    #[test]
    fn renewals_and_looks_come_well_inside_a_lease() {
        for secs in [2, 3, 60, 300, 3600] {
            let lease = Lease::of_secs(secs);
            assert!(
                lease.renew_every() * 2 + lease.margin() < lease.stale_after(),
                "{secs}"
            );
            assert!(lease.tick() <= lease.renew_every(), "{secs}");
        }
    }
}

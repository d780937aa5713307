//! The worker's look at the remote (one turn: fetch, follow, renew, claim), when it is
//! done, and how it ends.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::super::records::{Control, VERSION, WorkerRecord};
use super::super::remote::SyncError;
use super::super::view::View;
use super::claim::claim_next;
use super::{Which, Worker, add, reconcile, renew};
use crate::cli::exit::ExitStatus;
use crate::io::now;
use crate::runner::loop_event::UsageFigures;

/// How soon a worker with a free slot looks at the remote again.
const IDLE_LOOK: Duration = Duration::from_secs(2);

/// How long the worker keeps trying to release its claims when it ends.
const RELEASE_PATIENCE: Duration = Duration::from_secs(20);

impl Worker<'_> {
    /// One look at the remote.
    pub(super) fn look(&mut self) {
        let shared = self.shared.clone();
        let tick = shared.lease.tick();
        let mut turn = shared.remote.turn();
        let view = match turn.sync() {
            Ok(view) => view,
            Err(SyncError::Offline(why)) => {
                drop(turn);
                self.went_offline(&why);
                return;
            }
            Err(SyncError::Refused(why)) => {
                drop(turn);
                self.failed.get_or_insert(why);
                self.shared.stop();
                self.next_look = Instant::now() + tick;
                return;
            }
            Err(SyncError::View(err)) => {
                drop(turn);
                self.failed.get_or_insert_with(|| err.to_string());
                self.shared.stop();
                self.next_look = Instant::now() + tick;
                return;
            }
        };
        if let Some((since, _)) = self.offline.take() {
            let text = format!(
                "the remote answers again (after {} s)",
                since.elapsed().as_secs()
            );
            self.line(None, "online", &text);
        }
        reconcile(&shared, &view);
        if view.plan_oid
            != self
                .last_view
                .as_ref()
                .map_or(view.plan_oid, |v| v.plan_oid)
            || *view.plan != *shared.plan
        {
            self.failed.get_or_insert_with(|| {
                "the team's plan changed on the remote; a plan is written once".into()
            });
            self.shared.stop();
        }
        self.follow(view.state.control);
        if self.control != Control::Cancelled {
            self.observe(&view);
            let due = self.renewal_due();
            if due {
                let record = self.record();
                renew(&shared, &mut turn, &view, &record, Which::Due);
                self.record_pushed = Some(Instant::now());
            }
            if self.may_claim() {
                let free = self.running.jobs as usize - self.threads.len();
                let skip = self.skip.clone();
                let claiming = claim_next(&shared, &mut turn, &view, &self.observer, free, &|s| {
                    skip.contains(s)
                });
                drop(turn);
                for story in claiming.raced {
                    self.line(Some(&story), "raced", "another worker claimed it first");
                }
                for claimed in claiming.claimed {
                    self.start(claimed);
                }
            }
        }
        self.last_view = Some(view);
        // A worker with a free slot looks again soon: a story whose dependency just
        // landed, a dead worker's story, or the team's end shows within IDLE_LOOK, not a
        // whole tick (15 s on a 5-minute lease) later.
        let idle = self.may_claim() && self.threads.len() < self.running.jobs as usize;
        self.next_look = Instant::now() + if idle { tick.min(IDLE_LOOK) } else { tick };
    }

    fn went_offline(&mut self, why: &str) {
        // Nothing seen while away counts: a claim is stale only after a whole lease seen.
        self.observer = super::super::lease::Observer::default();
        let (since, failures) = self.offline.unwrap_or((Instant::now(), 0));
        if failures == 0 {
            self.line(
                None,
                "offline",
                &format!("cannot reach the remote ({why}); the stories go on, landings wait"),
            );
        }
        let failures = failures + 1;
        self.offline = Some((since, failures));
        let lease = self.shared.lease;
        let pause = (lease.tick() * 2u32.saturating_pow(failures.min(6))).min(lease.renew_every());
        self.next_look = Instant::now() + pause;
    }

    fn follow(&mut self, control: Control) {
        if control == self.control {
            return;
        }
        self.shared.set_control(control);
        let text = match control {
            Control::Paused => "the team is paused: no new claims, no landings; loops wait",
            Control::Running => "the team runs again",
            Control::Cancelled => {
                "the team was cancelled: its stories stop, nothing more is pushed"
            }
        };
        self.line(None, control.as_str(), text);
        self.control = control;
    }

    fn observe(&mut self, view: &View) {
        let now = Instant::now();
        let held: Vec<String> = self.shared.holdings().keys().cloned().collect();
        for (story, seen) in &view.claims {
            if held.contains(story) {
                self.observer.forget(story);
            } else {
                self.observer.observe(story, &seen.oid.to_string(), now);
            }
        }
        for story in self.shared.plan.stories.iter().map(|s| &s.name) {
            if !view.claims.contains_key(story) {
                self.observer.forget(story);
            }
        }
    }

    fn renewal_due(&self) -> bool {
        let lease = self.shared.lease;
        let now = Instant::now();
        self.record_pushed
            .is_none_or(|at| now >= at + lease.renew_every())
            || self
                .shared
                .holdings()
                .values()
                .any(|h| !h.lost && !h.settled && (h.release || h.held.renewal_due(lease, now)))
    }

    fn may_claim(&self) -> bool {
        self.control == Control::Running
            && !self.shared.stopping()
            && self.failed.is_none()
            && self.threads.len() < self.running.jobs as usize
            && self
                .running
                .spend_limit
                .is_none_or(|limit| self.spent().cost_microusd < limit)
    }

    fn start(&mut self, claimed: super::claim::Claimed) {
        let name = claimed.story.name.clone();
        let text = match &claimed.taken_over {
            Some(from) => format!("taken over from {from}, from its work in progress"),
            None => "claimed".to_owned(),
        };
        self.line(Some(&name), "claimed", &text);
        let shared = Arc::clone(&self.shared);
        let handle = std::thread::spawn(move || {
            super::slot::run(
                shared,
                claimed.story,
                claimed.start,
                claimed.taken_over.is_some(),
            );
        });
        self.threads.insert(name, handle);
    }

    pub(super) fn spent(&self) -> UsageFigures {
        self.usage
            .values()
            .fold(UsageFigures::default(), |sum, (done, now)| {
                add(sum, add(*done, *now))
            })
    }

    fn record(&self) -> WorkerRecord {
        let spent = self.spent();
        let state = if self.finishing && self.why_stopped.is_none() && self.failed.is_none() {
            "done"
        } else if self.why_stopped.is_some() || self.failed.is_some() {
            "stopped"
        } else if self.control == Control::Paused {
            "paused"
        } else if self.threads.is_empty() {
            "idle"
        } else {
            "working"
        };
        WorkerRecord {
            version: VERSION,
            worker: self.shared.worker.clone(),
            host: self.shared.host.clone(),
            started_at: self.started_at,
            updated_at: now(),
            jobs: self.running.jobs,
            state: state.to_owned(),
            holds: self
                .shared
                .holdings()
                .iter()
                .filter(|(_, h)| !h.lost && !h.settled)
                .map(|(s, _)| s.clone())
                .collect(),
            landed: self.landed,
            tokens: spent.tokens,
            cost_microusd: spent.cost_microusd,
            cost_known: spent.cost_known,
            until: self
                .running
                .until
                .map(|d| pagent_engine::Timestamp(self.started_at.0 + d.as_secs())),
            seq: 0,
        }
    }

    /// Whether the worker has nothing more to do.
    pub(super) fn is_done(&mut self) -> bool {
        if !self.threads.is_empty() {
            return false;
        }
        if self.control == Control::Cancelled || self.why_stopped.is_some() || self.failed.is_some()
        {
            return true;
        }
        if self.running.spend_limit.is_some()
            && !self.may_claim()
            && self.control == Control::Running
        {
            self.why_stopped = Some("its spending limit was reached".into());
            return true;
        }
        self.last_view.as_ref().is_some_and(team_is_done)
    }

    /// Releases what is still held (unless the team was cancelled), pushes the last
    /// record, says how it went; the exit status.
    pub(super) fn finish(mut self) -> ExitStatus {
        self.finishing = true;
        if self.control != Control::Cancelled {
            self.release_all();
        }
        let summary = self.summary();
        self.line(None, "summary", &summary);
        if self.control == Control::Cancelled
            || self.why_stopped.as_deref() == Some("stopped by a signal")
        {
            return ExitStatus::Interrupted;
        }
        if let Some(why) = &self.failed {
            let text = format!("this worker stopped: {why}");
            self.line(None, "failed", &text);
            return ExitStatus::Failure;
        }
        if self
            .last_view
            .as_ref()
            .is_some_and(|v| !v.state.gave_up.is_empty())
        {
            return ExitStatus::GaveUp;
        }
        ExitStatus::Success
    }

    fn release_all(&mut self) {
        let shared = self.shared.clone();
        let started = Instant::now();
        while started.elapsed() < RELEASE_PATIENCE {
            let mut turn = shared.remote.turn();
            let Ok(view) = turn.sync() else {
                drop(turn);
                std::thread::sleep(shared.lease.tick());
                continue;
            };
            reconcile(&shared, &view);
            if view.state.control == Control::Cancelled {
                self.control = Control::Cancelled;
                return;
            }
            let record = self.record();
            renew(&shared, &mut turn, &view, &record, Which::Release);
            let left = shared.holdings().values().any(|h| !h.lost && !h.settled);
            self.last_view = Some(view);
            if !left {
                return;
            }
        }
    }

    fn summary(&self) -> String {
        let Some(view) = &self.last_view else {
            return "this worker ends without having seen the team".into();
        };
        let total = view.plan.stories.len();
        let landed = view.state.landed.len();
        let gave_up = view.state.gave_up.len();
        let mine = super::super::status::stories(self.landed as usize);
        let team = if landed + gave_up == total {
            format!(
                "the team {} is done: {landed} of {total} stories landed",
                view.plan.team
            )
        } else {
            format!(
                "the team {} goes on: {landed} of {total} stories landed",
                view.plan.team
            )
        };
        let gave = if gave_up > 0 {
            format!(", {gave_up} gave up")
        } else {
            String::new()
        };
        format!("{team}{gave}; this worker landed {mine}")
    }
}

/// Whether nothing in the team is left to do: every story landed or gave up, or waits
/// for one that gave up.
pub(super) fn team_is_done(view: &View) -> bool {
    let mut blocked: std::collections::BTreeSet<&str> =
        view.state.gave_up.keys().map(String::as_str).collect();
    // Whatever waits, directly or not, for a story that gave up can never start.
    loop {
        let before = blocked.len();
        for story in &view.plan.stories {
            if story.after.iter().any(|d| blocked.contains(d.as_str())) {
                blocked.insert(&story.name);
            }
        }
        if blocked.len() == before {
            break;
        }
    }
    view.plan
        .stories
        .iter()
        .all(|s| view.state.landed.contains_key(&s.name) || blocked.contains(s.name.as_str()))
}

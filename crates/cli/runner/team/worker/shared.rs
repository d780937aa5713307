//! What a worker's threads share: the remote, the plan, the claims it holds, the team's
//! control as last seen, and the channel its story threads speak through.
//!
//! A [`Holding`] is this worker's side of one claim: the claim commit it believes is on
//! the remote, the pushes whose outcome it does not know yet, and its lease clock. Only
//! [`reconcile`] (right after a fetch, in the same turn at the remote) and the pushes of
//! that turn change it, so a story thread and the renewals never disagree about it.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, mpsc};
use std::time::Instant;

use git2::Oid;
use pagent_engine::Timestamp;

use super::super::lease::{Held, Lease};
use super::super::records::{Claim, Control, Phase, TeamPlan, VERSION};
use super::super::remote::Remote;
use super::super::story_loop::LoopSettings;
use super::super::view::View;
use crate::cli::env::Env;
use crate::runner::loop_event::UsageFigures;
use pagent_door::process::{Containment, SearchPath};

/// One claim this worker holds.
#[derive(Debug, Clone)]
pub struct Holding {
    /// The claim commit on the remote, as far as this worker knows.
    pub claim: Oid,
    /// Claim commits pushed without a word back: each, when its push started, its `seq`.
    pub attempted: Vec<(Oid, Instant, u64)>,
    pub nonce: String,
    pub seq: u64,
    pub since: Timestamp,
    pub held: Held,
    pub phase: Phase,
    pub iterations: u32,
    pub taken_over: bool,
    /// The work the claim carried when this worker took it.
    pub start: Oid,
    /// The remote shows another worker's claim: this one is gone.
    pub lost: bool,
    /// Landed or gave up: nothing more to renew.
    pub settled: bool,
    /// Its story stopped here: the next renewal releases it, for any worker to take over.
    pub release: bool,
}

impl Holding {
    /// The claim as its next commit says it.
    pub fn record(
        &self,
        story: &str,
        worker: &str,
        host: &str,
        lease: Lease,
        phase: Phase,
    ) -> Claim {
        Claim {
            version: VERSION,
            story: story.to_owned(),
            worker: worker.to_owned(),
            host: host.to_owned(),
            holding: self.nonce.clone(),
            seq: self.seq + 1,
            since: self.since,
            renewed_at: crate::io::now(),
            lease_secs: lease.length.as_secs(),
            phase,
            iterations: self.iterations,
            taken_over: self.taken_over,
        }
    }
}

/// Something a story thread tells the worker.
#[derive(Debug)]
pub enum Note {
    /// A line for people (`kind` names it in `--json`).
    Said {
        story: String,
        kind: &'static str,
        text: String,
    },
    /// The figures of the story's current loop so far.
    Usage {
        story: String,
        figures: UsageFigures,
    },
    /// A new loop of the story begins (the figures of the last one are kept).
    NewRun { story: String },
    /// The story thread ended.
    Ended { story: String, outcome: Outcome },
}

/// How a story thread ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    Landed {
        commit: Oid,
        rejected: u32,
    },
    GaveUp(String),
    /// Another worker holds the story now (its work here was pushed to salvage).
    Lost,
    /// Stopped by Ctrl-C or the time limit: the claim is to be released.
    Stopped,
    /// The team was cancelled: nothing more is pushed.
    Cancelled,
    /// The loop could not run on this machine.
    Failed(String),
}

/// Everything a worker's threads share.
#[derive(Debug)]
pub struct Shared {
    pub remote: Remote,
    pub plan: Arc<TeamPlan>,
    pub lease: Lease,
    pub worker: String,
    pub host: String,
    pub loops: LoopSettings,
    /// The gate: the commands a landing runs on the merged tree.
    pub checks: Vec<String>,
    /// The walls the gate runs inside when the worker's agents are contained.
    pub walls: Option<Containment>,
    pub search: SearchPath,
    pub env: Env,
    holdings: Mutex<BTreeMap<String, Holding>>,
    control: Mutex<Control>,
    stopping: AtomicBool,
    pub notes: mpsc::Sender<Note>,
}

impl Shared {
    pub fn new(parts: SharedParts, notes: mpsc::Sender<Note>) -> Shared {
        Shared {
            remote: parts.remote,
            lease: super::super::lease::Lease::of_secs(parts.plan.lease_secs),
            plan: parts.plan,
            worker: parts.worker,
            host: parts.host,
            loops: parts.loops,
            checks: parts.checks,
            walls: parts.walls,
            search: parts.search,
            env: parts.env,
            holdings: Mutex::new(BTreeMap::new()),
            control: Mutex::new(Control::Running),
            stopping: AtomicBool::new(false),
            notes,
        }
    }

    pub fn holdings(&self) -> MutexGuard<'_, BTreeMap<String, Holding>> {
        self.holdings.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn holding(&self, story: &str) -> Option<Holding> {
        self.holdings().get(story).cloned()
    }

    pub fn control(&self) -> Control {
        *self.control.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn set_control(&self, control: Control) {
        *self.control.lock().unwrap_or_else(|p| p.into_inner()) = control;
    }

    /// Ctrl-C or the time limit: every story stops and its claim is released.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst) || pagent_door::process::signals::interrupted()
    }

    pub fn is_lost(&self, story: &str) -> bool {
        self.holdings().get(story).is_none_or(|h| h.lost)
    }

    pub fn set_phase(&self, story: &str, phase: Phase) {
        if let Some(h) = self.holdings().get_mut(story) {
            h.phase = phase;
        }
    }

    pub fn say(&self, story: &str, kind: &'static str, text: String) {
        let _ = self.notes.send(Note::Said {
            story: story.to_owned(),
            kind,
            text,
        });
    }
}

/// What [`Shared::new`] is made of.
#[derive(Debug)]
pub struct SharedParts {
    pub remote: Remote,
    pub plan: Arc<TeamPlan>,
    pub worker: String,
    pub host: String,
    pub loops: LoopSettings,
    pub checks: Vec<String>,
    pub walls: Option<Containment>,
    pub search: SearchPath,
    pub env: Env,
}

/// Brings every holding in line with a fresh `view` (call it in the turn that fetched
/// it): a claim commit whose push went unanswered and that the remote now shows is
/// adopted, with the time its push started as the renewal; a claim the remote shows as
/// another's (or gone) is lost, unless the story landed or gave up by this worker's own
/// push.
pub fn reconcile(shared: &Shared, view: &View) {
    let mut holdings = shared.holdings();
    for (story, holding) in holdings.iter_mut() {
        if holding.settled || holding.lost {
            continue;
        }
        let seen = view.claims.get(story).map(|c| c.oid);
        if seen == Some(holding.claim) {
            holding.attempted.clear();
            continue;
        }
        if let Some(at) = holding
            .attempted
            .iter()
            .position(|(oid, _, _)| Some(*oid) == seen)
        {
            let (oid, started, seq) = holding.attempted[at];
            holding.claim = oid;
            holding.held = Held { renewed: started };
            holding.seq = seq;
            holding.attempted.clear();
            continue;
        }
        let settled_by_us = view
            .state
            .landed
            .get(story)
            .is_some_and(|l| l.worker == shared.worker)
            || view
                .state
                .gave_up
                .get(story)
                .is_some_and(|g| g.worker == shared.worker);
        if settled_by_us {
            holding.settled = true;
        } else {
            holding.lost = true;
        }
    }
}

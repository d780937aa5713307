//! Renewals: every claim a worker holds gets a new claim commit every `lease / 3`, whose
//! parent is the story's branch as it is now (so a renewal is also the push of the work
//! in progress), pushed with a lease on the claim commit before it. One push carries the
//! renewals of every held story and the worker's record, not atomic: each ref succeeds or
//! fails on its own lease. Releasing is the same push with the phase `released`.

use std::time::Instant;

use git2::Oid;

use super::super::git::{Expect, Update};
use super::super::objects::write_record;
use super::super::records::{Phase, WorkerRecord, encode};
use super::super::remote::Turn;
use super::super::view::View;
use super::shared::Shared;
use crate::io::now;

/// Which claims a push renews.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Which {
    /// Those whose renewal is due.
    Due,
    /// Every claim, released for any worker to take over at once.
    Release,
}

/// Renews (or releases) this worker's claims and pushes its record, in `turn`, right after
/// the fetch that gave `view` (and `reconcile`).
pub fn renew(
    shared: &Shared,
    turn: &mut Turn<'_>,
    view: &View,
    record: &WorkerRecord,
    which: Which,
) {
    let Ok(repo) = shared.remote.repo() else {
        return;
    };
    let refs = &shared.remote.refs;
    let started = Instant::now();
    let (mut updates, pending) = claim_updates(shared, &repo, which, started);
    if let Ok(commit) = write_record(
        &repo,
        "worker.json",
        &encode(record),
        &[],
        "pagent: worker",
        now().0,
    ) {
        updates.push(Update {
            new: Some(commit),
            dst: refs.worker(&shared.worker),
            expect: view
                .workers
                .get(&shared.worker)
                .map_or(Expect::Absent, |w| Expect::Is(w.oid)),
        });
    }
    let result = turn.push(&updates, false);
    let mut holdings = shared.holdings();
    for (story, commit, seq) in pending {
        let Some(holding) = holdings.get_mut(&story) else {
            continue;
        };
        match &result {
            Ok(pushed) => {
                let dst = refs.claim(&story);
                if pushed.iter().any(|p| p.dst == dst && p.ok) {
                    if holding.release || which == Which::Release {
                        // Released: any worker may take it over; not this one's any more.
                        holding.lost = true;
                    }
                    holding.claim = commit;
                    holding.seq = seq;
                    holding.held.renewed = started;
                    holding.attempted.clear();
                }
                // Rejected: the remote changed after this turn's fetch; the next fetch
                // tells whether the claim is still this worker's.
            }
            Err(_) => holding.attempted.push((commit, started, seq)),
        }
    }
}

/// The renewed (or released) records of this worker's claims that are due, as updates of
/// one push, and what each becomes once it lands: story, commit, sequence number.
fn claim_updates(
    shared: &Shared,
    repo: &git2::Repository,
    which: Which,
    started: Instant,
) -> (Vec<Update>, Vec<(String, Oid, u64)>) {
    let refs = &shared.remote.refs;
    let mut updates = Vec::new();
    let mut pending: Vec<(String, Oid, u64)> = Vec::new();
    let holdings = shared.holdings();
    for (story, holding) in holdings.iter() {
        if holding.lost || holding.settled {
            continue;
        }
        if which == Which::Due
            && !holding.release
            && !holding.held.renewal_due(shared.lease, started)
        {
            continue;
        }
        let phase = if which == Which::Release || holding.release {
            Phase::Released
        } else {
            holding.phase
        };
        let claim = holding.record(story, &shared.worker, &shared.host, shared.lease, phase);
        let work = super::super::objects::ref_target(repo, &format!("refs/heads/pagent/{story}"))
            .unwrap_or(holding.start);
        let Ok(commit) = write_record(
            repo,
            "claim.json",
            &encode(&claim),
            &[work],
            &format!("pagent: {} {story}", phase.as_str()),
            now().0,
        ) else {
            continue;
        };
        updates.push(Update {
            new: Some(commit),
            dst: refs.claim(story),
            expect: Expect::Is(holding.claim),
        });
        pending.push((story.clone(), commit, claim.seq));
    }
    (updates, pending)
}

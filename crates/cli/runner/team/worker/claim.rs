//! Claiming: the next story of the plan (in its order) that nobody finished, whose
//! dependencies have all landed on the shared branch, and that is free: no claim at all
//! (a create-only push), or a claim its holder released, or one this worker has seen
//! unchanged for a whole lease and its margin (a takeover: a push with a lease on that
//! stale claim commit). Of two workers racing for one story, one push goes through; the
//! other is rejected and this worker tries the next story at once.
//!
//! A fresh claim starts the story from the shared branch's tip (which holds every
//! dependency's landing); a takeover starts it from the claim's work in progress.

use std::time::Instant;

use git2::Oid;

use super::super::git::{Expect, Update};
use super::super::lease::{Held, Observer};
use super::super::objects::write_record;
use super::super::records::{Claim, Phase, TeamStory, VERSION, encode};
use super::super::remote::{Turn, all_ok};
use super::super::view::View;
use super::shared::{Holding, Shared};
use crate::io::now;
use crate::world::merge::holds;

/// What a round of claiming did.
#[derive(Debug, Default)]
pub struct Claiming {
    pub claimed: Vec<Claimed>,
    /// Stories another worker claimed first (this worker's push was rejected).
    pub raced: Vec<String>,
}

/// A story this worker just claimed, to start.
#[derive(Debug)]
pub struct Claimed {
    pub story: TeamStory,
    pub start: Oid,
    pub taken_over: Option<String>,
}

/// What kind of claim a story would get now.
enum Free {
    /// No claim: create one.
    Fresh,
    /// A released or stale claim: take it over from its work, `from` its worker.
    Stale {
        oid: Oid,
        work: Option<Oid>,
        from: String,
    },
}

/// Claims up to `free` stories, in the plan's order; what it claimed, and which stories
/// another worker claimed first. Stops at the first
/// push that gets no answer (the remote is away: the next look tries again).
pub fn claim_next(
    shared: &Shared,
    turn: &mut Turn<'_>,
    view: &View,
    observer: &Observer,
    free: usize,
    skip: &dyn Fn(&str) -> bool,
) -> Claiming {
    let mut out = Claiming::default();
    let Some(base) = view.branch else {
        return out;
    };
    let Ok(repo) = shared.remote.repo() else {
        return out;
    };
    let now_instant = Instant::now();
    for story in &shared.plan.stories {
        if out.claimed.len() >= free {
            break;
        }
        let name = story.name.as_str();
        if skip(name) || view.state.is_settled(name) || shared.holdings().contains_key(name) {
            continue;
        }
        if !dependencies_landed(&repo, view, story, base) {
            continue;
        }
        let Some(free_kind) = freedom(shared, view, observer, name, now_instant) else {
            continue;
        };
        let (expect, start, from) = match free_kind {
            Free::Fresh => (Expect::Absent, base, None),
            Free::Stale { oid, work, from } => {
                let work = work.filter(|&w| shares_history(&repo, w, base));
                (Expect::Is(oid), work.unwrap_or(base), Some(from))
            }
        };
        let (claim, nonce, at) = new_claim(shared, name, from.is_some());
        let Ok(commit) = write_record(
            &repo,
            "claim.json",
            &encode(&claim),
            &[start],
            &format!("pagent: claim {name}"),
            at.0,
        ) else {
            continue;
        };
        let pushed_at = Instant::now();
        let pushed = turn.push(
            &[Update {
                new: Some(commit),
                dst: shared.remote.refs.claim(name),
                expect,
            }],
            true,
        );
        match pushed {
            Ok(p) if all_ok(&p) => {
                shared.holdings().insert(
                    name.to_owned(),
                    Holding {
                        claim: commit,
                        attempted: Vec::new(),
                        nonce,
                        seq: 1,
                        since: at,
                        held: Held { renewed: pushed_at },
                        phase: Phase::Working,
                        iterations: 0,
                        taken_over: from.is_some(),
                        start,
                        lost: false,
                        settled: false,
                        release: false,
                    },
                );
                out.claimed.push(Claimed {
                    story: story.clone(),
                    start,
                    taken_over: from,
                });
            }
            Ok(_) => out.raced.push(name.to_owned()), // another was first: the next story
            Err(_) => break,
        }
    }
    out
}

/// Whether every story `story` waits for has landed, and on the shared branch as fetched.
fn dependencies_landed(repo: &git2::Repository, view: &View, story: &TeamStory, base: Oid) -> bool {
    story.after.iter().all(|dep| {
        view.state
            .landed
            .get(dep)
            .and_then(|l| Oid::from_str(&l.commit).ok())
            .is_some_and(|commit| holds(repo, base, commit))
    })
}

/// Whether a claim's work in progress `work` shares history with the shared branch's
/// `tip`: another machine's claim may carry anything as its work, and a history of its
/// own (nothing of the team's in it) is never built on, so never merged into the branch.
fn shares_history(repo: &git2::Repository, work: Oid, tip: Oid) -> bool {
    repo.merge_base(work, tip).is_ok()
}

/// Whether `name` may be claimed now, and how.
fn freedom(
    shared: &Shared,
    view: &View,
    observer: &Observer,
    name: &str,
    now: Instant,
) -> Option<Free> {
    let Some(seen) = view.claims.get(name) else {
        return Some(Free::Fresh);
    };
    let (released, from) = match &seen.claim {
        Ok(claim) if claim.phase.is_final() => return None,
        Ok(claim) => (claim.phase == Phase::Released, claim.worker.clone()),
        Err(_) => (false, "an unreadable claim".to_owned()),
    };
    (released || observer.is_stale(name, shared.lease, now)).then_some(Free::Stale {
        oid: seen.oid,
        work: seen.work,
        from,
    })
}

/// A new claim of `name` by this worker, its holding's nonce (unique, so that no two claim
/// commits are the same object: a push of an object a ref already has always succeeds)
/// and when it was made.
fn new_claim(
    shared: &Shared,
    name: &str,
    taken_over: bool,
) -> (Claim, String, pagent_engine::Timestamp) {
    let nonce = pagent_door::random_bytes::<8>()
        .map(|b| pagent_engine::seal::hex(&b))
        .unwrap_or_else(|_| format!("{:x}", now().0));
    let at = now();
    let claim = Claim {
        version: VERSION,
        story: name.to_owned(),
        worker: shared.worker.clone(),
        host: shared.host.clone(),
        holding: nonce.clone(),
        seq: 1,
        since: at,
        renewed_at: at,
        lease_secs: shared.lease.length.as_secs(),
        phase: Phase::Working,
        iterations: 0,
        taken_over,
    };
    (claim, nonce, at)
}

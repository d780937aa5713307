//! The team as the remote showed it at the last fetch: the plan, the state, every claim,
//! every worker's record and the shared branch, read from the clone's `seen` copy of the
//! team's refs.
//!
//! Everything here came from other machines. A plan or state that fails its checks makes
//! the whole view an error that says why (a worker does nothing with a team it cannot
//! read). A claim or worker record that fails them is kept as the words of why: the ref
//! still counts (an unreadable claim is still someone's claim, taken over only once it
//! has not changed for a whole lease), but nothing in it is believed. A ref under the
//! team's namespace that names no story of the plan, or is not a name pagent uses, is
//! counted and ignored.

use std::collections::BTreeMap;
use std::sync::Arc;

use git2::{Oid, Repository};

use super::names::{self, TeamRefs};
use super::objects::{first_parent, read_record, ref_target};
use super::records::{
    Claim, MAX_PLAN_BYTES, MAX_SMALL_BYTES, MAX_STATE_BYTES, MAX_STORIES, TeamPlan, TeamState,
    WorkerRecord,
};

/// The most worker records read (more are counted as strays).
const MAX_WORKERS: usize = 1000;

/// What the remote showed.
#[derive(Debug, Clone)]
pub struct View {
    pub plan_oid: Oid,
    pub plan: Arc<TeamPlan>,
    pub state_oid: Oid,
    pub state: TeamState,
    pub claims: BTreeMap<String, SeenClaim>,
    pub workers: BTreeMap<String, SeenWorker>,
    /// The shared branch's tip (`None`: the remote has no such branch).
    pub branch: Option<Oid>,
    /// Refs under the team's namespace that pagent ignored.
    pub strays: usize,
}

#[derive(Debug, Clone)]
pub struct SeenClaim {
    pub oid: Oid,
    pub claim: Result<Claim, String>,
    /// Its parent: the story's work in progress.
    pub work: Option<Oid>,
}

#[derive(Debug, Clone)]
pub struct SeenWorker {
    pub oid: Oid,
    pub record: Result<WorkerRecord, String>,
}

/// Why there is no view.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ViewError {
    #[error("the remote has no team {0}")]
    NoTeam(String),
    #[error("the team {0}'s plan on the remote cannot be used: {1}")]
    BadPlan(String, String),
    #[error("the team {0}'s state on the remote cannot be used: {1}")]
    BadState(String, String),
}

/// The view in `repo`'s `seen` refs. `known`: the plan read at an earlier fetch, reused
/// while its commit is the same (a plan is written once).
pub fn read_view(
    repo: &Repository,
    refs: &TeamRefs,
    known: Option<(Oid, Arc<TeamPlan>)>,
) -> Result<View, ViewError> {
    let team = refs.team.clone();
    let seen = |name: &str| refs.seen(name).and_then(|local| ref_target(repo, &local));
    let plan_oid = seen(&refs.plan()).ok_or_else(|| ViewError::NoTeam(team.clone()))?;
    let plan = match known {
        Some((oid, plan)) if oid == plan_oid => plan,
        _ => {
            let plan: TeamPlan = read_record(repo, plan_oid, "plan.json", MAX_PLAN_BYTES)
                .map_err(|why| ViewError::BadPlan(team.clone(), why))?;
            plan.validate(&team)
                .map_err(|why| ViewError::BadPlan(team.clone(), why))?;
            Arc::new(plan)
        }
    };
    let state_oid = seen(&refs.state())
        .ok_or_else(|| ViewError::BadState(team.clone(), "it is missing".into()))?;
    let state: TeamState = read_record(repo, state_oid, "state.json", MAX_STATE_BYTES)
        .map_err(|why| ViewError::BadState(team.clone(), why))?;
    state
        .validate(&plan)
        .map_err(|why| ViewError::BadState(team.clone(), why))?;
    let mut view = View {
        plan_oid,
        plan,
        state_oid,
        state,
        claims: BTreeMap::new(),
        workers: BTreeMap::new(),
        branch: ref_target(repo, &refs.seen_branch()),
        strays: 0,
    };
    read_claims(repo, refs, &mut view);
    read_workers(repo, refs, &mut view);
    Ok(view)
}

/// Each ref under `prefix` in the clone: its name after the prefix and its target, at
/// most `cap` of them; and how many more there were.
fn listed(repo: &Repository, prefix: &str, cap: usize) -> (Vec<(String, Oid)>, usize) {
    let mut found = Vec::new();
    let mut more = 0;
    let Ok(iter) = repo.references_glob(&format!("{prefix}*")) else {
        return (found, 0);
    };
    for reference in iter.flatten() {
        let (Some(name), Some(oid)) = (reference.name(), reference.target()) else {
            more += 1;
            continue;
        };
        if found.len() >= cap {
            more += 1;
            continue;
        }
        if let Some(rest) = name.strip_prefix(prefix) {
            found.push((rest.to_owned(), oid));
        }
    }
    (found, more)
}

fn read_claims(repo: &Repository, refs: &TeamRefs, view: &mut View) {
    let prefix = format!("{}claims/", refs.seen_prefix());
    let (found, more) = listed(repo, &prefix, MAX_STORIES);
    view.strays += more;
    for (story, oid) in found {
        if !names::is_valid(&story) || view.plan.story(&story).is_none() {
            view.strays += 1;
            continue;
        }
        let claim = read_record::<Claim>(repo, oid, "claim.json", MAX_SMALL_BYTES)
            .and_then(|c| c.validate(&story).map(|()| c));
        let work = first_parent(repo, oid);
        view.claims.insert(story, SeenClaim { oid, claim, work });
    }
}

fn read_workers(repo: &Repository, refs: &TeamRefs, view: &mut View) {
    let prefix = format!("{}workers/", refs.seen_prefix());
    let (found, more) = listed(repo, &prefix, MAX_WORKERS);
    view.strays += more;
    for (worker, oid) in found {
        if !names::is_valid(&worker) {
            view.strays += 1;
            continue;
        }
        let record = read_record::<WorkerRecord>(repo, oid, "worker.json", MAX_SMALL_BYTES)
            .and_then(|r| r.validate(&worker).map(|()| r));
        view.workers.insert(worker, SeenWorker { oid, record });
    }
}

//! Landing a story on the shared branch, as one atomic push with leases:
//!
//! ```text
//! repeat:
//!     wait while the team is paused
//!     fetch: the shared branch B, the state S, the claim C (this worker's?)
//!     merge B and the story's branch in memory
//!         conflicts -> a resolution loop of the agent in the worktree (the caller runs
//!                      it), then again
//!     tick the story's marker in the plan file of the merged tree
//!     L = a commit of that tree, parents (B, story): a descendant of B
//!     run the team's checks on L's tree
//!         failing   -> the agent fixes it on the story's branch (the caller runs it), then again
//!     push, all or nothing:
//!         shared branch  B -> L   (lease B: nobody landed since, nobody pushed since)
//!         state          S -> S + landed story (lease S: no cancel, no pause since)
//!         claim          C -> a "landed" claim (lease C: still this worker's)
//!     rejected -> again, from a fresh fetch;  no answer -> again: the fetch says whether
//!     it landed
//! ```
//!
//! L descends from B and the lease is B, so the shared branch only ever moves forward:
//! a commit a person pushed there meanwhile makes the lease stale, and the next round
//! merges it in. A cancel or a pause changes the state, so no landing that read the
//! state before it can go through after it. The claim stays on the remote marked landed,
//! so no worker can claim the story again from a view older than the landing.

mod gate;
mod tick;

use std::time::{Duration, Instant};

use git2::{Oid, Repository, Signature};
use pagent_engine::prompt::team::{GateFill, gate as gate_prompt};

use super::git::{Expect, Update};
use super::objects::write_record;
use super::records::{Control, Landed, Phase, TeamStory, encode};
use super::remote::{SyncError, all_ok};
use super::view::View;
use super::worker::shared::{Holding, Shared, reconcile};
use crate::io::now;
use crate::runner::parallel::merge::resolve::{Resolution, start as start_resolution};
use crate::runner::worktree;
use crate::world::merge::holds;

/// Rounds of "the checks fail on the merged work" the agent gets before the story gives up.
const MAX_GATE_ROUNDS: u32 = 3;
/// Rounds of conflict resolution before the story gives up on a branch that keeps moving.
const MAX_RESOLUTIONS: u32 = 5;

/// How far a landing got.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Landing {
    Landed {
        commit: Oid,
        rejected: u32,
    },
    /// A conflict resolution is set up in the worktree: its loop is to run, then land again.
    Resolve(Vec<String>),
    /// The checks fail on the merged work: a loop with this task fixes it, then land again.
    Fix(String),
    GaveUp(String),
    Lost,
    Cancelled,
    Stopped,
    /// This machine cannot go on (its git configuration changed under it).
    Failed(String),
}

/// What one story's landings have been through so far.
#[derive(Debug, Default)]
pub struct Rounds {
    pub rejected: u32,
    /// When the current attempt (its fetch) began: how long one takes sets the backoff.
    pub attempt: Option<Instant>,
    pub gate_failures: u32,
    pub resolutions: u32,
}

/// Lands `story`, or says what must happen first.
pub fn land(shared: &Shared, story: &TeamStory, rounds: &mut Rounds) -> Landing {
    let name = story.name.as_str();
    let mut offline_since: Option<Instant> = None;
    loop {
        if let Some(stop) = wait_to_act(shared, name) {
            return stop;
        }
        shared.set_phase(name, Phase::Landing);
        let asked = Instant::now();
        rounds.attempt = Some(asked);
        let view = {
            let mut turn = shared.remote.turn();
            match turn.sync_since(asked) {
                Ok(view) => {
                    reconcile(shared, &view);
                    view
                }
                Err(SyncError::Offline(why)) => {
                    drop(turn);
                    if offline_since.is_none() {
                        shared.say(
                            name,
                            "waiting",
                            format!("landing waits for the remote: {why}"),
                        );
                        offline_since = Some(Instant::now());
                    }
                    std::thread::sleep(shared.lease.tick());
                    continue;
                }
                Err(SyncError::View(err)) => return Landing::GaveUp(err.to_string()),
                Err(SyncError::Refused(why)) => return Landing::Failed(why),
            }
        };
        offline_since = None;
        if let Some(done) = already_settled(shared, name, &view, rounds) {
            return done;
        }
        let Some(base) = view.branch else {
            shared.say(
                name,
                "waiting",
                format!("the remote has no branch {}", shared.plan.branch),
            );
            std::thread::sleep(shared.lease.renew_every());
            continue;
        };
        match attempt(shared, story, &view, base, rounds) {
            Ok(Some(outcome)) => return outcome,
            Ok(None) => {}
            Err(err) => return Landing::GaveUp(format!("the landing failed: {err:#}")),
        }
    }
}

/// Waits while the team is paused; how the landing ends instead, when it does.
fn wait_to_act(shared: &Shared, name: &str) -> Option<Landing> {
    let mut said = false;
    loop {
        if shared.stopping() {
            return Some(Landing::Stopped);
        }
        if shared.is_lost(name) {
            return Some(Landing::Lost);
        }
        match shared.control() {
            Control::Cancelled => return Some(Landing::Cancelled),
            Control::Running => return None,
            Control::Paused => {
                if !said {
                    shared.set_phase(name, Phase::Paused);
                    shared.say(
                        name,
                        "paused",
                        "the team is paused: the landing waits".into(),
                    );
                    said = true;
                }
            }
        }
        std::thread::sleep(shared.lease.tick());
    }
}

/// The landing's end when the fresh view already decides it.
fn already_settled(shared: &Shared, name: &str, view: &View, rounds: &Rounds) -> Option<Landing> {
    if let Some(landed) = view.state.landed.get(name)
        && landed.worker == shared.worker
    {
        // A push that got no answer went through.
        return Oid::from_str(&landed.commit)
            .ok()
            .map(|commit| Landing::Landed {
                commit,
                rejected: rounds.rejected,
            });
    }
    if shared.is_lost(name) || view.state.is_settled(name) {
        return Some(Landing::Lost);
    }
    match view.state.control {
        Control::Cancelled => Some(Landing::Cancelled),
        _ => None,
    }
}

/// One round: merge, tick, gate, push. `None`: go round again.
fn attempt(
    shared: &Shared,
    story: &TeamStory,
    view: &View,
    base: Oid,
    rounds: &mut Rounds,
) -> anyhow::Result<Option<Landing>> {
    let name = story.name.as_str();
    let repo = shared.remote.repo()?;
    let branch = format!("pagent/{name}");
    let tip = repo
        .find_reference(&format!("refs/heads/{branch}"))?
        .peel_to_commit()?
        .id();
    let tree = match merged_tree(&repo, base, tip)? {
        Merged::Clean(tree) => tree,
        Merged::Conflicts(files) => return resolve(shared, story, tip, files, rounds).map(Some),
    };
    let (tree, not_ticked) = tick::tick(&repo, tree, &shared.plan, story);
    let commit = landing_commit(&repo, shared, story, tree, base, tip)?;
    let tree_path = worktree::existing(shared.remote.root(), name)?
        .map(|t| t.path)
        .ok_or_else(|| anyhow::anyhow!("the story's worktree is gone"))?;
    let keep_going = &mut || {
        !shared.stopping() && !shared.is_lost(name) && shared.control() != Control::Cancelled
    };
    match gate::run(
        &tree_path,
        &branch,
        commit,
        &shared.checks,
        (&shared.search, shared.walls.as_ref()),
        keep_going,
    ) {
        gate::Gate::Passed => {}
        gate::Gate::Stopped => return Ok(None),
        gate::Gate::Broken(why) => anyhow::bail!(why),
        gate::Gate::Failed { check, output } => {
            return fix(shared, story, &tree_path, base, &check, &output, rounds).map(Some);
        }
    }
    Ok(push(shared, story, view, base, commit, not_ticked, rounds))
}

enum Merged {
    Clean(Oid),
    Conflicts(Vec<String>),
}

/// The tree of `base` and `tip` merged, in memory.
fn merged_tree(repo: &Repository, base: Oid, tip: Oid) -> anyhow::Result<Merged> {
    if holds(repo, tip, base) {
        return Ok(Merged::Clean(repo.find_commit(tip)?.tree_id()));
    }
    if holds(repo, base, tip) {
        return Ok(Merged::Clean(repo.find_commit(base)?.tree_id()));
    }
    let mut index = repo.merge_commits(&repo.find_commit(base)?, &repo.find_commit(tip)?, None)?;
    if index.has_conflicts() {
        let mut files: Vec<String> = index
            .conflicts()?
            .flatten()
            .filter_map(|c| c.our.or(c.their).or(c.ancestor))
            .map(|e| String::from_utf8_lossy(&e.path).into_owned())
            .collect();
        files.dedup();
        return Ok(Merged::Conflicts(files));
    }
    Ok(Merged::Clean(index.write_tree_to(repo)?))
}

/// The landing commit: `tree`, first parent the shared branch's tip `base`, then the
/// story's tip when the branch does not hold it already.
fn landing_commit(
    repo: &Repository,
    shared: &Shared,
    story: &TeamStory,
    tree: Oid,
    base: Oid,
    tip: Oid,
) -> anyhow::Result<Oid> {
    let mut parents = vec![repo.find_commit(base)?];
    if tip != base && !holds(repo, base, tip) {
        parents.push(repo.find_commit(tip)?);
    }
    let parents: Vec<&git2::Commit<'_>> = parents.iter().collect();
    let signature = repo
        .signature()
        .or_else(|_| Signature::now("pagent", "pagent@localhost"))?;
    let first = story.task.lines().next().unwrap_or("");
    let first = story
        .id
        .as_deref()
        .and_then(|id| first.strip_prefix(id))
        .map_or(first, |rest| rest.trim_start_matches(':').trim());
    let title: String = first.chars().take(72).collect();
    let message = format!(
        "pagent: land {}: {title}\n\nTeam {}, worker {}.\n",
        story.name, shared.plan.team, shared.worker
    );
    Ok(repo.commit(
        None,
        &signature,
        &signature,
        &message,
        &repo.find_tree(tree)?,
        &parents,
    )?)
}

/// The atomic push. `None`: rejected or unanswered, go round again.
fn push(
    shared: &Shared,
    story: &TeamStory,
    view: &View,
    base: Oid,
    commit: Oid,
    not_ticked: Option<String>,
    rounds: &mut Rounds,
) -> Option<Landing> {
    let name = story.name.as_str();
    let refs = &shared.remote.refs;
    let mut turn = shared.remote.turn();
    let holding = shared.holding(name)?;
    if holding.lost {
        return None;
    }
    let (state_commit, claim_commit) = landing_records(
        shared,
        &holding,
        view,
        name,
        commit,
        not_ticked,
        rounds.rejected,
    )?;
    let updates = [
        Update {
            new: Some(commit),
            dst: format!("refs/heads/{}", shared.plan.branch),
            expect: Expect::Is(base),
        },
        Update {
            new: Some(state_commit),
            dst: refs.state(),
            expect: Expect::Is(view.state_oid),
        },
        Update {
            new: Some(claim_commit),
            dst: refs.claim(name),
            expect: Expect::Is(holding.claim),
        },
    ];
    match turn.push(&updates, true) {
        Ok(pushed) if all_ok(&pushed) => {
            if let Some(h) = shared.holdings().get_mut(name) {
                h.settled = true;
            }
            Some(Landing::Landed {
                commit,
                rejected: rounds.rejected,
            })
        }
        Ok(_) => {
            rounds.rejected += 1;
            drop(turn);
            let took = rounds.attempt.map_or(Duration::ZERO, |a| a.elapsed());
            std::thread::sleep(backoff(took, rounds.rejected));
            None
        }
        Err(err) => {
            shared.say(
                name,
                "waiting",
                format!("the landing push got no answer ({err}); looking again"),
            );
            None
        }
    }
}

/// How long to stand back after the `round`th rejected landing whose attempt took
/// `took`: someone landed first, and the workers that lost the same race would meet
/// again at once. A random share of up to `took` times 1, 2, 4, then 8 (exponential
/// backoff with full jitter, in units of one attempt), so that under contention the
/// attempts spread out and each has a window of its own.
fn backoff(took: Duration, round: u32) -> Duration {
    let bytes: [u8; 4] = pagent_door::random_bytes().unwrap_or([7, 3, 1, round as u8]);
    let share = f64::from(u32::from_le_bytes(bytes)) / f64::from(u32::MAX);
    let unit = took.clamp(Duration::from_millis(50), Duration::from_secs(60));
    unit.mul_f64(share * f64::from(1u32 << round.saturating_sub(1).min(3)))
}

/// Sets up the resolution of a conflict between the story and the shared branch.
fn resolve(
    shared: &Shared,
    story: &TeamStory,
    tip: Oid,
    files: Vec<String>,
    rounds: &mut Rounds,
) -> anyhow::Result<Landing> {
    rounds.resolutions += 1;
    if rounds.resolutions > MAX_RESOLUTIONS {
        return Ok(Landing::GaveUp(format!(
            "{} conflicted with {} {} times",
            story.name, shared.plan.branch, MAX_RESOLUTIONS
        )));
    }
    let tree = worktree::existing(shared.remote.root(), &story.name)?
        .ok_or_else(|| anyhow::anyhow!("the story's worktree is gone"))?;
    let checks: Vec<&str> = shared.checks.iter().map(String::as_str).collect();
    let settings = Resolution {
        env: &shared.env,
        checks,
        trust: shared.loops.plan.trust,
        max_iterations: shared.loops.plan.max_iterations,
        budget: shared.loops.plan.budget,
        task: &story.task,
        start_git: shared.remote.git.baseline(),
    };
    start_resolution(
        &settings,
        &tree,
        &shared.remote.refs.seen_branch(),
        &shared.plan.branch,
        tip,
    )?;
    shared.set_phase(&story.name, Phase::Resolving);
    Ok(Landing::Resolve(files))
}

/// The checks fail on the merged work: the shared branch merged into the story's branch
/// in its worktree (cleanly: the merge in memory was clean), and the task of the loop
/// that makes them pass there.
fn fix(
    shared: &Shared,
    story: &TeamStory,
    tree: &std::path::Path,
    base: Oid,
    check: &str,
    output: &str,
    rounds: &mut Rounds,
) -> anyhow::Result<Landing> {
    rounds.gate_failures += 1;
    if rounds.gate_failures > MAX_GATE_ROUNDS {
        return Ok(Landing::GaveUp(format!(
            "`{check}` failed on the merged work {MAX_GATE_ROUNDS} times"
        )));
    }
    merge_in(tree, base, &shared.plan.branch)?;
    let branch = format!("pagent/{}", story.name);
    let promise = story.promise.as_deref().unwrap_or("DONE");
    Ok(Landing::Fix(gate_prompt(&GateFill {
        branch: &branch,
        target: &shared.plan.branch,
        target_commit: &base.to_string(),
        check,
        output,
        promise,
        task: &story.task,
    })))
}

/// Commits the merge of `base` into the worktree's branch (a merge known to be clean).
fn merge_in(tree: &std::path::Path, base: Oid, target: &str) -> anyhow::Result<()> {
    let repo = crate::store::git::discover(tree)
        .ok_or_else(|| anyhow::anyhow!("{} is not a git worktree", tree.display()))?;
    let head = repo.head()?.peel_to_commit()?;
    if holds(&repo, head.id(), base) {
        return Ok(());
    }
    let theirs = repo.find_commit(base)?;
    let mut index = repo.merge_commits(&head, &theirs, None)?;
    anyhow::ensure!(
        !index.has_conflicts(),
        "merging {target} conflicts after all"
    );
    let tree_id = index.write_tree_to(&repo)?;
    let signature = repo
        .signature()
        .or_else(|_| Signature::now("pagent", "pagent@localhost"))?;
    repo.commit(
        Some("HEAD"),
        &signature,
        &signature,
        &format!("Merge {target} (pagent: the team's checks fail on the merge)"),
        &repo.find_tree(tree_id)?,
        &[&head, &theirs],
    )?;
    repo.checkout_head(Some(git2::build::CheckoutBuilder::new().force()))?;
    Ok(())
}

/// The team's state with `name` landed at `commit`, and the claim's record marked landed:
/// the commits the landing push sets beside the shared branch.
fn landing_records(
    shared: &Shared,
    holding: &Holding,
    view: &View,
    name: &str,
    commit: Oid,
    not_ticked: Option<String>,
    rejected: u32,
) -> Option<(Oid, Oid)> {
    let repo = shared.remote.repo().ok()?;
    let mut state = view.state.clone();
    state.landed.insert(
        name.to_owned(),
        Landed {
            commit: commit.to_string(),
            worker: shared.worker.clone(),
            at: now(),
            rejected,
            not_ticked,
        },
    );
    let state_commit = super::control::state_commit(
        &shared.remote,
        &state,
        view.state_oid,
        &format!("pagent: landed {name}"),
    )
    .ok()?;
    let claim = holding.record(
        name,
        &shared.worker,
        &shared.host,
        shared.lease,
        Phase::Landed,
    );
    let claim_commit = write_record(
        &repo,
        "claim.json",
        &encode(&claim),
        &[],
        &format!("pagent: landed {name}"),
        now().0,
    )
    .ok()?;
    Some((state_commit, claim_commit))
}

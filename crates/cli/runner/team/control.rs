//! `pagent team pause`, `resume` and `cancel`, from any machine with the remote: a new
//! state commit with the new control, pushed with a lease on the state it replaces.
//!
//! Every landing pushes a new state too, with a lease on the state it read, in the same
//! atomic push as the shared branch. So a cancel and a landing in flight cannot both
//! succeed against one state: whichever reaches the remote second is rejected. A landing
//! that loses fetches again and sees the cancel (and pushes nothing more); a cancel that
//! loses fetches again and tries again at once, so it wins as soon as it gets between
//! two landings, which take a merge and a gate check each.

use std::time::{Duration, Instant};

use git2::Oid;

use super::git::{Expect, Update};
use super::objects::write_record;
use super::records::{Control, TeamState, encode};
use super::remote::{Remote, SyncError, all_ok};
use crate::io::now;

/// How long a control change keeps trying against landings and a flaky remote.
const PATIENCE: Duration = Duration::from_secs(120);

/// How a control change went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Changed {
    /// Pushed: the team is now `to`; `from` was its control before.
    Done { from: Control, tries: u32 },
    /// It was already so.
    Already,
    /// Refused: the team was cancelled (for good).
    Cancelled,
}

impl Changed {
    /// What `pagent team pause|resume|cancel` (and the dashboard's buttons) say of it.
    pub fn words(&self, team: &str, url: &str, to: Control) -> String {
        match self {
            Changed::Done { .. } => match to {
                Control::Paused => format!(
                    "paused the team {team}: no new claims and no landings; every worker's loops wait at their next step"
                ),
                Control::Running => format!("the team {team} runs again"),
                Control::Cancelled => format!(
                    "cancelled the team {team}: no landing goes through after this, and every worker stops at its next step"
                ),
            },
            Changed::Already => format!("the team {team} is {} already", to.as_str()),
            Changed::Cancelled => format!(
                "the team {team} on {url} was cancelled; a cancelled team stays so (start a new one)"
            ),
        }
    }
}

/// Sets the team's control to `to`, as `by` (who, for the log).
pub fn set_control(remote: &Remote, to: Control, by: &str) -> anyhow::Result<Changed> {
    let started = Instant::now();
    let mut tries = 0;
    let mut last_error = String::new();
    while started.elapsed() < PATIENCE {
        tries += 1;
        let mut turn = remote.turn();
        let view = match turn.sync() {
            Ok(view) => view,
            Err(SyncError::Offline(why)) => {
                drop(turn);
                last_error = why;
                std::thread::sleep(backoff(tries));
                continue;
            }
            Err(err) => return Err(err.into()),
        };
        let from = view.state.control;
        if from == to {
            return Ok(Changed::Already);
        }
        if from == Control::Cancelled {
            return Ok(Changed::Cancelled);
        }
        let state = TeamState {
            control: to,
            control_by: by.to_owned(),
            control_at: Some(now()),
            ..view.state.clone()
        };
        let commit = state_commit(
            remote,
            &state,
            view.state_oid,
            &format!("pagent: {}", to.as_str()),
        )?;
        let pushed = turn.push(
            &[Update {
                new: Some(commit),
                dst: remote.refs.state(),
                expect: Expect::Is(view.state_oid),
            }],
            true,
        );
        match pushed {
            Ok(pushed) if all_ok(&pushed) => return Ok(Changed::Done { from, tries }),
            Ok(_) => {} // a landing (or another control change) came first: again, at once
            Err(err) => {
                last_error = err.to_string();
                drop(turn);
                std::thread::sleep(backoff(tries));
            }
        }
    }
    anyhow::bail!(
        "the team's state could not be changed within {} s: {last_error}",
        PATIENCE.as_secs()
    )
}

/// A new state commit, its parent the one it replaces.
pub fn state_commit(
    remote: &Remote,
    state: &TeamState,
    parent: Oid,
    message: &str,
) -> anyhow::Result<Oid> {
    let repo = remote.repo()?;
    Ok(write_record(
        &repo,
        "state.json",
        &encode(state),
        &[parent],
        message,
        now().0,
    )?)
}

fn backoff(tries: u32) -> Duration {
    Duration::from_millis(200 * u64::from(tries.min(10)))
}

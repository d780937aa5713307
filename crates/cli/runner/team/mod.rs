//! `pagent team`: a team of loops across machines, sharing one plan through the
//! repository's own git remote. There is no server of pagent's: the remote's refs are
//! the shared memory, and a push with lease (accepted only if each ref is still what the
//! pusher last saw, checked in the remote's own ref transaction) is the compare-and-swap.
//!
//! - `start` ([`publish`]): the plan, read as `pagent parallel` reads it, published as
//!   the team's `plan` and `state` refs in one create-only push.
//! - `work` ([`worker`]): a worker anywhere with a clone; claims stories by create-only
//!   pushes, renews its claims (each renewal also pushes the story's work in progress),
//!   runs each story's loop through the same runner as `pagent loop` ([`story_loop`], the
//!   one seam), and lands it ([`land`]): merge, resolve, tick the plan's marker, gate,
//!   one atomic push with leases. Dead workers are taken over after their lease
//!   ([`lease`]: never by comparing clocks).
//! - `status`, `pause`, `resume`, `cancel` ([`status`], [`control`]): from any machine.
//! - `workflow` ([`workflow`]): GitHub Actions as the managed way to run many workers.
//!
//! Everything read from the remote is a stranger's: bounded and checked ([`records`],
//! [`objects`], [`names`], [`view`]); a plan's commands run only with this machine's
//! consent ([`trust`]); git runs hardened ([`git`]).

pub mod control;
pub mod git;
pub mod land;
pub mod lease;
pub mod names;
pub mod objects;
pub mod publish;
pub mod records;
pub mod remote;
pub mod status;
pub mod story_loop;
pub mod trust;
pub mod view;
pub mod watch;
pub mod worker;
pub mod workflow;

use std::path::{Path, PathBuf};

use anyhow::{Context, bail};

use crate::cli::env::Env;
use pagent_door::files::PrivateTemp;

/// Which remote, and which clone to fetch into.
#[derive(Debug)]
pub struct Place {
    /// The clone (or a scratch repository when the command ran outside any).
    pub root: PathBuf,
    pub url: String,
    /// A scratch repository, removed when this drops.
    _scratch: Option<PrivateTemp>,
}

/// The place for `remote` (a remote's name or a URL) seen from `cwd`: the repository
/// there, or a scratch one when there is none and `remote` is a URL.
pub fn place(cwd: &Path, remote: &str) -> anyhow::Result<Place> {
    if let Some(repo) = crate::store::git::discover(cwd) {
        let root = crate::store::git::work_tree(&repo)
            .context("the repository has no work tree; run pagent team in a clone")?;
        let url = match repo.find_remote(remote) {
            Ok(found) => found
                .url()
                .map(str::to_owned)
                .with_context(|| format!("the remote {remote}'s URL is not text"))?,
            Err(_) if looks_like_url(remote) => remote.to_owned(),
            Err(_) => bail!(
                "this repository has no remote {remote}; name one it has (`git remote -v`) or give a URL"
            ),
        };
        return Ok(Place {
            root,
            url,
            _scratch: None,
        });
    }
    anyhow::ensure!(
        looks_like_url(remote),
        "{} is not in a git repository: run this in a clone, or give the remote's URL with --remote",
        cwd.display()
    );
    let scratch = pagent_door::files::private_temp_dir("pagent-team-")
        .context("cannot make a scratch folder to fetch the team into")?;
    git2::Repository::init(scratch.path()).context("cannot make a scratch repository")?;
    Ok(Place {
        root: scratch.path().to_path_buf(),
        url: remote.to_owned(),
        _scratch: Some(scratch),
    })
}

fn looks_like_url(text: &str) -> bool {
    text.contains("://") || (text.contains(':') && text.contains('@')) || text.starts_with('/')
}

/// The team to act on: `named`, else the only team on the remote.
pub fn which_team(place: &Place, named: Option<&str>, env: &Env) -> anyhow::Result<String> {
    if let Some(team) = named {
        return Ok(names::checked("the team name", team)?.to_owned());
    }
    let git = git::TeamGit::new(&place.root, &place.url, env);
    let teams = git
        .teams()
        .map_err(|e| anyhow::anyhow!("cannot reach the remote: {e}"))?;
    match teams.as_slice() {
        [] => bail!(
            "the remote {} has no team; start one with `pagent team start PLAN`",
            place.url
        ),
        [one] => Ok(one.clone()),
        many => bail!(
            "the remote has {} teams ({}); name one with --team",
            many.len(),
            many.join(", ")
        ),
    }
}

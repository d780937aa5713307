//! One clone's link to one team on one remote: the team's git ([`TeamGit`]), its refs,
//! and a lock that serialises this process's fetches and pushes (so a landing's push
//! and a renewal never race inside one worker; between workers the remote's leases do
//! that). A [`Remote`] is shared by a worker's threads; each opens the repository itself
//! (libgit2 handles are not shared between threads).

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Instant;

use anyhow::Context;
use git2::{Oid, Repository};

use super::git::{NetError, Pushed, TeamGit, Update};
use super::names::TeamRefs;
use super::records::TeamPlan;
use super::view::{View, ViewError, read_view};
use crate::cli::env::Env;

/// Why the remote's view could not be had.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SyncError {
    #[error("{0}")]
    Offline(String),
    /// The repository's git configuration changed: no git runs for this worker any more.
    #[error("{0}")]
    Refused(String),
    #[error(transparent)]
    View(#[from] ViewError),
}

impl From<NetError> for SyncError {
    fn from(err: NetError) -> SyncError {
        match err {
            NetError::Unreachable(why) => SyncError::Offline(why),
            NetError::Refused(why) => SyncError::Refused(why),
        }
    }
}

/// A clone, a remote, a team.
#[derive(Debug)]
pub struct Remote {
    pub git: TeamGit,
    pub refs: TeamRefs,
    /// The worker this remote fetches for (only its own record), or none (everything).
    worker: Option<String>,
    /// Whether this remote only watches the team (the dashboard): it fetches the team's
    /// records alone, never the shared branch nor the work in progress.
    watching: bool,
    root: PathBuf,
    /// Held across each fetch-and-read and each push; keeps the plan read last.
    lock: Mutex<Cache>,
}

#[derive(Debug, Default)]
pub struct Cache {
    plan: Option<(Oid, Arc<TeamPlan>)>,
    /// The last view, and when the fetch that gave it started.
    last: Option<(Instant, View)>,
}

/// This process's turn at the remote.
pub struct Turn<'a> {
    remote: &'a Remote,
    cache: MutexGuard<'a, Cache>,
}

impl Remote {
    pub fn new(root: &Path, url: &str, team: &str, env: &Env) -> anyhow::Result<Remote> {
        Ok(Remote {
            git: TeamGit::new(root, url, env),
            refs: TeamRefs::new(team)?,
            worker: None,
            watching: false,
            root: root.to_path_buf(),
            lock: Mutex::new(Cache::default()),
        })
    }

    /// This remote fetches for `worker`: the team's refs it needs, not every worker's;
    /// and every git process after this one compares the repository's git configuration
    /// with what it is now, before any of the worker's agents ran.
    pub fn for_worker(mut self, worker: &str) -> Remote {
        self.worker = Some(worker.to_owned());
        self.git = self.git.with_baseline();
        self
    }

    /// This remote only watches the team, for `pagent dashboard`: each fetch takes the
    /// plan, the state, the claims and the workers' records (each commit alone, not its
    /// history) within `timeout`; the reader is the one `pagent team status` uses.
    pub fn watching(mut self, timeout: std::time::Duration) -> Remote {
        self.watching = true;
        self.git = self.git.watching(timeout);
        self
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn repo(&self) -> anyhow::Result<Repository> {
        crate::store::git::discover(&self.root)
            .with_context(|| format!("{} is not a git repository", self.root.display()))
    }

    /// Waits for this process's turn at the remote.
    pub fn turn(&self) -> Turn<'_> {
        let cache = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        Turn {
            remote: self,
            cache,
        }
    }

    /// A fetch, then the view (one turn).
    pub fn sync(&self) -> Result<View, SyncError> {
        self.turn().sync()
    }
}

impl Turn<'_> {
    /// A view at least as new as `asked`: the one another thread of this process fetched
    /// while this one waited for its turn, when its fetch started after `asked`; else a
    /// fetch of its own. (A landing waiting behind the worker's own look needs no second
    /// fetch.)
    pub fn sync_since(&mut self, asked: Instant) -> Result<View, SyncError> {
        if let Some((started, view)) = &self.cache.last
            && *started >= asked
        {
            return Ok(view.clone());
        }
        self.sync()
    }

    /// Fetches the team's refs and its shared branch, then reads them.
    pub fn sync(&mut self) -> Result<View, SyncError> {
        let started = Instant::now();
        let view = self.fetch_and_read()?;
        self.cache.last = Some((started, view.clone()));
        Ok(view)
    }

    fn fetch_and_read(&mut self) -> Result<View, SyncError> {
        let remote = self.remote;
        let known_branch = self.cache.plan.as_ref().map(|(_, p)| p.branch.clone());
        let refspecs = if remote.watching {
            remote.refs.record_refspecs()
        } else {
            remote
                .refs
                .refspecs(known_branch.as_deref(), remote.worker.as_deref())
        };
        remote.git.fetch(&refspecs)?;
        let repo = remote
            .repo()
            .map_err(|e| SyncError::Offline(format!("{e:#}")))?;
        let view = read_view(&repo, &remote.refs, self.cache.plan.clone())?;
        let first = known_branch.is_none() && !remote.watching;
        self.cache.plan = Some((view.plan_oid, view.plan.clone()));
        if first {
            // The plan names the branch: fetch it too, now that it is known.
            return self.fetch_and_read();
        }
        Ok(view)
    }

    /// A push, in this turn. The view fetched before it is no longer the remote's (this
    /// push changed it), so no other thread reuses it.
    pub fn push(&mut self, updates: &[Update], atomic: bool) -> Result<Vec<Pushed>, NetError> {
        self.cache.last = None;
        self.remote.git.push(updates, atomic)
    }
}

/// Whether every ref of `updates` was accepted.
pub fn all_ok(pushed: &[Pushed]) -> bool {
    !pushed.is_empty() && pushed.iter().all(|p| p.ok)
}

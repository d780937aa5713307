//! The teams this machine knows (`store::teams`: started, worked on or looked at from
//! here), watched for `pagent dashboard`: every story and every worker, read from the
//! remote exactly as `pagent team status` reads it ([`Remote::sync`], [`report`]), and
//! pause, resume and cancel as `pagent team` does them ([`set_control`]).
//!
//! The remote is never asked on a request's path: one thread fetches each known team in
//! turn, every [`REFRESH`] after the last round ended, and keeps what it saw; a request
//! reads that copy. A fetch is bounded like everything from a remote: [`FETCH_TIMEOUT`],
//! the team's records alone (the plan, the state, the claims, the workers' records; each
//! commit without its history, never the shared branch nor a story's work), and the
//! reader's own caps on each record and on the refs it reads. It goes into a repository
//! of the dashboard's own in the user's folder, one per team (`store::teams`), never
//! into a clone where a worker's agents run (and could have written the git
//! configuration a fetch there would obey), and never racing a worker's own fetch for a
//! ref's lock.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use pagent_engine::{Timestamp, format_duration};
use serde::Serialize;
use serde_json::{Value, json};

use super::control::set_control;
use super::records::Control;
use super::remote::{Remote, SyncError};
use super::status::{
    NO_WORKER, Report, control_words, headline, ignored, report, story_words, worker_words,
};
use crate::cli::env::Env;
use crate::io::now;
use crate::store::teams::{self, KnownTeam};
use crate::store::user::UserDir;

/// Between the end of one round of fetches and the next.
pub const REFRESH: Duration = Duration::from_secs(3);
/// How long one fetch of a team may take.
pub const FETCH_TIMEOUT: Duration = Duration::from_secs(30);

/// What the dashboard last saw of one team.
#[derive(Debug, Clone, Default, Serialize)]
struct Seen {
    /// When the report was fetched (none yet: the first fetch is under way).
    seen_at: Option<Timestamp>,
    report: Option<Report>,
    /// Why the last fetch gave nothing (the report, if any, is older).
    error: Option<String>,
}

/// The teams watched, shared by the fetching thread and the requests.
#[derive(Debug)]
pub struct Watch {
    env: Env,
    known: Mutex<Vec<KnownTeam>>,
    seen: Mutex<BTreeMap<String, Seen>>,
    remotes: Mutex<BTreeMap<String, Arc<Remote>>>,
}

impl Watch {
    /// Starts watching in a thread of its own.
    pub fn start(env: &Env) -> Arc<Watch> {
        let watch = Arc::new(Watch {
            env: env.clone(),
            known: Mutex::new(Vec::new()),
            seen: Mutex::new(BTreeMap::new()),
            remotes: Mutex::new(BTreeMap::new()),
        });
        let watching = Arc::clone(&watch);
        std::thread::spawn(move || {
            loop {
                watching.round();
                std::thread::sleep(REFRESH);
            }
        });
        watch
    }

    /// One fetch of every known team.
    fn round(&self) {
        let user_dir = UserDir::of(&self.env);
        let known = teams::list(&user_dir);
        *lock(&self.known) = known.clone();
        let listed = |key: &String| known.iter().any(|k| &k.key == key);
        lock(&self.seen).retain(|key, _| listed(key));
        lock(&self.remotes).retain(|key, _| listed(key));
        let keys: Vec<&str> = known.iter().map(|k| k.key.as_str()).collect();
        teams::prune_fetched(&user_dir, &keys);
        for team in &known {
            self.look(team);
        }
    }

    /// Fetches `team` and keeps what it showed (or why it showed nothing).
    fn look(&self, team: &KnownTeam) {
        let outcome = self
            .remote(team)
            .and_then(|remote| remote.sync().map_err(|e| said(&e)));
        let mut seen = lock(&self.seen);
        let entry = seen.entry(team.key.clone()).or_default();
        match outcome {
            Ok(view) => {
                *entry = Seen {
                    seen_at: Some(now()),
                    report: Some(report(&view, &team.url)),
                    error: None,
                }
            }
            Err(why) => entry.error = Some(why),
        }
    }

    /// The remote of `team`, fetching into a scratch repository of its own.
    fn remote(&self, team: &KnownTeam) -> Result<Arc<Remote>, String> {
        if let Some(remote) = lock(&self.remotes).get(&team.key) {
            return Ok(Arc::clone(remote));
        }
        let root = self.scratch_for(&team.key)?;
        let remote = Remote::new(&root, &team.url, &team.team, &self.env)
            .map_err(|e| format!("{e:#}"))?
            .watching(FETCH_TIMEOUT);
        let remote = Arc::new(remote);
        lock(&self.remotes).insert(team.key.clone(), Arc::clone(&remote));
        Ok(remote)
    }

    fn scratch_for(&self, key: &str) -> Result<PathBuf, String> {
        let root = teams::fetch_folder(&UserDir::of(&self.env), key)
            .map_err(|e| format!("cannot make a folder to fetch the team into: {e:#}"))?;
        if crate::store::git::open(&root).is_none() {
            git2::Repository::init(&root)
                .map_err(|e| format!("cannot make a repository to fetch the team into: {e}"))?;
        }
        Ok(root)
    }

    /// Every known team as the page shows it.
    pub fn page(&self, now: Timestamp) -> Value {
        let known = lock(&self.known).clone();
        let seen = lock(&self.seen).clone();
        let teams: Vec<Value> = known
            .iter()
            .map(|team| shown(team, seen.get(&team.key), now))
            .collect();
        json!({ "now": now, "teams": teams })
    }

    /// Pauses, resumes or cancels the known team `key` (`action`), as `pagent team`
    /// does: whether it changed, and what the command would have said. `None`: no such
    /// team or action.
    pub fn act(&self, key: &str, action: &str) -> Option<(bool, String)> {
        let to = match action {
            "pause" => Control::Paused,
            "resume" => Control::Running,
            "cancel" => Control::Cancelled,
            _ => return None,
        };
        let team = lock(&self.known).iter().find(|t| t.key == key).cloned()?;
        let remote = match self.remote(&team) {
            Ok(remote) => remote,
            Err(why) => return Some((false, format!("pagent team: error: {why}"))),
        };
        let by = format!(
            "{} (dashboard)",
            super::worker::assemble::host_name(&self.env)
        );
        let done = match set_control(&remote, to, &by) {
            Ok(changed) => (
                matches!(changed, super::control::Changed::Done { .. }),
                format!("pagent team: {}", changed.words(&team.team, &team.url, to)),
            ),
            Err(err) => (false, format!("pagent team: error: {err:#}")),
        };
        // The page shows the change at once, not a round later.
        self.look(&team);
        Some(done)
    }
}

/// One team for the page: the status's report, and its words as `pagent team status`
/// says them.
fn shown(team: &KnownTeam, seen: Option<&Seen>, now: Timestamp) -> Value {
    let seen = seen.cloned().unwrap_or_default();
    let looked = match (&seen.error, seen.seen_at) {
        (Some(why), Some(at)) => format!(
            "The last look at the remote failed: {why}. As the remote showed it {} ago.",
            format_duration(now.since(at))
        ),
        (Some(why), None) => format!("The dashboard cannot look at the remote: {why}"),
        (None, Some(at)) => format!(
            "As the remote showed it {} ago.",
            format_duration(now.since(at))
        ),
        (None, None) => "Looking at the remote…".to_owned(),
    };
    let mut value = json!({
        "id": team.key,
        "team": team.team,
        "url": team.url,
        "seen_at": seen.seen_at,
        "error": seen.error,
        "looked": looked,
    });
    let Some(report) = seen.report else {
        return value;
    };
    let control = control_words(&report);
    let actions: &[&str] = match control {
        "running" => &["pause", "cancel"],
        "paused" => &["resume", "cancel"],
        _ => &[],
    };
    value["control"] = json!(control);
    value["actions"] = json!(actions);
    value["headline"] = json!(headline(&report));
    value["stories"] = report
        .stories
        .iter()
        .map(|s| json!({ "name": s.name, "state": s.state, "said": story_words(s, now) }))
        .collect();
    value["workers"] = report
        .workers
        .iter()
        .map(|w| json!({ "worker": w.worker, "state": w.state, "said": worker_words(w, now) }))
        .collect();
    value["no_worker"] = json!(NO_WORKER);
    value["ignored"] = json!(ignored(&report));
    value["report"] = json!(report);
    value
}

fn said(err: &SyncError) -> String {
    match err {
        SyncError::Offline(why) => why.clone(),
        SyncError::View(err) => err.to_string(),
        SyncError::Refused(why) => why.clone(),
    }
}

fn lock<T>(mutex: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|p| p.into_inner())
}

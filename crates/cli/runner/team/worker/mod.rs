//! `pagent team work`: one worker of a team, running up to `-j N` stories at once in its
//! own clone.
//!
//! ```text
//! every tick (lease / 10, 0.25 s to 15 s), in one turn at the remote:
//!     fetch the team and the shared branch; bring the claims held in line (`reconcile`)
//!     follow the team's control: paused, running, cancelled (then push nothing more)
//!     note every other claim's commit (the takeover clock, `lease::Observer`)
//!     renew the claims due, with their work in progress, and this worker's record
//!     claim the next free stories, up to N held
//! each claimed story runs in a thread of its own (`slot`): its loop, then its landing
//! until: every story landed or gave up (or waits for one that gave up), the team was
//!        cancelled, Ctrl-C, the time limit (`--until`), or the spending limit
//! then: the claims still held are released with their work, for any worker to take over
//! ```
//!
//! A fetch that fails leaves everything running: the loops go on, landings wait, the
//! observer's clocks restart (a claim is only stale after a whole lease seen unchanged),
//! and the next look comes after a growing pause.

pub mod assemble;
pub mod claim;
pub mod renew;
pub mod shared;
pub mod slot;

use std::collections::{BTreeMap, BTreeSet};
use std::io::Write;
use std::sync::{Arc, mpsc};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use pagent_engine::Timestamp;
use serde_json::json;

use super::lease::Observer;
use super::records::Control;
use super::view::View;
use crate::cli::exit::ExitStatus;
use crate::io::now;
use crate::runner::loop_event::UsageFigures;
use renew::{Which, renew};
use shared::{Note, Outcome, Shared, reconcile};

/// How a worker runs, beside what the plan says.
#[derive(Debug, Clone)]
pub struct Running {
    pub jobs: u32,
    /// Stop (release every claim) this long after starting.
    pub until: Option<Duration>,
    /// Claim nothing more once this worker's stories have cost this much.
    pub spend_limit: Option<u64>,
    pub json: bool,
}

/// A worker: its shared half, and what only its main thread keeps.
struct Worker<'o> {
    shared: Arc<Shared>,
    running: Running,
    out: &'o mut dyn Write,
    rx: mpsc::Receiver<Note>,
    observer: Observer,
    threads: BTreeMap<String, JoinHandle<()>>,
    started: Instant,
    started_at: Timestamp,
    /// Each story's figures: its finished loops' sum, and its current loop's.
    usage: BTreeMap<String, (UsageFigures, UsageFigures)>,
    landed: u32,
    gave_up: u32,
    failed: Option<String>,
    /// Stories this worker could not run: not claimed again by it.
    skip: BTreeSet<String>,
    last_view: Option<View>,
    next_look: Instant,
    record_pushed: Option<Instant>,
    offline: Option<(Instant, u32)>,
    control: Control,
    why_stopped: Option<String>,
    /// Ending: its last record says so.
    finishing: bool,
}

/// Runs the worker to its end; the exit status.
pub fn work(
    shared: Shared,
    rx: mpsc::Receiver<Note>,
    running: Running,
    out: &mut dyn Write,
) -> ExitStatus {
    let mut worker = Worker {
        shared: Arc::new(shared),
        running,
        out,
        rx,
        observer: Observer::default(),
        threads: BTreeMap::new(),
        started: Instant::now(),
        started_at: now(),
        usage: BTreeMap::new(),
        landed: 0,
        gave_up: 0,
        failed: None,
        skip: BTreeSet::new(),
        last_view: None,
        next_look: Instant::now(),
        record_pushed: None,
        offline: None,
        control: Control::Running,
        why_stopped: None,
        finishing: false,
    };
    worker.joined();
    loop {
        worker.hear_all();
        worker.watch_the_time();
        if Instant::now() >= worker.next_look {
            worker.look();
        }
        if worker.is_done() {
            break;
        }
        let wait = worker
            .next_look
            .saturating_duration_since(Instant::now())
            .min(Duration::from_millis(200));
        if let Ok(note) = worker.rx.recv_timeout(wait) {
            worker.hear(note);
        }
    }
    worker.finish()
}

impl Worker<'_> {
    fn line(&mut self, story: Option<&str>, kind: &str, text: &str) {
        if self.running.json {
            let event =
                json!({"event": kind, "worker": self.shared.worker, "story": story, "text": text});
            let _ = writeln!(self.out, "{event}");
        } else {
            match story {
                Some(story) => {
                    let _ = writeln!(self.out, "[{story}] {text}");
                }
                None => {
                    let _ = writeln!(self.out, "pagent team: {text}");
                }
            }
        }
        let _ = self.out.flush();
    }

    fn joined(&mut self) {
        let plan = self.shared.plan.clone();
        let text = format!(
            "worker {} on {} joins the team {} ({} at a time; {} stories landing on {} of {})",
            self.shared.worker,
            self.shared.host,
            plan.team,
            self.running.jobs,
            plan.stories.len(),
            plan.branch,
            self.shared.remote.git.url
        );
        self.line(None, "joined", &text);
    }

    fn hear_all(&mut self) {
        while let Ok(note) = self.rx.try_recv() {
            self.hear(note);
        }
    }

    fn hear(&mut self, note: Note) {
        match note {
            Note::Said { story, kind, text } => self.line(Some(&story), kind, &text),
            Note::Usage { story, figures } => {
                self.usage.entry(story).or_default().1 = figures;
            }
            Note::NewRun { story } => {
                let entry = self.usage.entry(story).or_default();
                entry.0 = add(entry.0, entry.1);
                entry.1 = UsageFigures::default();
            }
            Note::Ended { story, outcome } => self.ended(&story, outcome),
        }
    }

    fn ended(&mut self, story: &str, outcome: Outcome) {
        if let Some(thread) = self.threads.remove(story) {
            let _ = thread.join();
        }
        // A slot is free (or a claim is to be released): look at once.
        self.next_look = std::time::Instant::now();
        // A stopped story's claim, and one whose loop cannot run here, go back to the
        // team with their work (the next renewal releases them); the others are over.
        if matches!(outcome, Outcome::Stopped | Outcome::Failed(_)) {
            if let Some(h) = self.shared.holdings().get_mut(story) {
                h.release = true;
            }
        } else {
            self.shared.holdings().remove(story);
        }
        let text = match &outcome {
            Outcome::Landed { commit, rejected } => {
                self.landed += 1;
                let short = &commit.to_string()[..10];
                match rejected {
                    0 => format!("landed as {short}"),
                    1 => format!(
                        "landed as {short} (1 push was rejected first: another landed meanwhile)"
                    ),
                    n => format!(
                        "landed as {short} ({n} pushes were rejected first: others landed meanwhile)"
                    ),
                }
            }
            Outcome::GaveUp(reason) => {
                self.gave_up += 1;
                format!("gave up: {reason}")
            }
            // Its thread said where its work went; another worker has the story now (and
            // this one may take it again, should that one stop).
            Outcome::Lost => return,
            Outcome::Stopped => "stopped; its claim is released with its work".to_owned(),
            Outcome::Cancelled => "stopped: the team was cancelled".to_owned(),
            Outcome::Failed(why) => {
                self.skip.insert(story.to_owned());
                self.failed.get_or_insert_with(|| why.clone());
                format!("could not run here: {why}")
            }
        };
        let kind = match outcome {
            Outcome::Landed { .. } => "landed",
            Outcome::GaveUp(_) => "gave_up",
            Outcome::Lost => "lost",
            Outcome::Stopped => "stopped",
            Outcome::Cancelled => "cancelled",
            Outcome::Failed(_) => "failed",
        };
        self.line(Some(story), kind, &text);
    }

    fn watch_the_time(&mut self) {
        if self.why_stopped.is_some() {
            return;
        }
        if pagent_door::process::signals::interrupted() {
            self.why_stopped = Some("stopped by a signal".into());
        } else if let Some(until) = self.running.until
            && self.started.elapsed() >= until
        {
            self.why_stopped = Some("its time limit (--until) came".into());
        } else {
            return;
        }
        self.shared.stop();
        let why = self.why_stopped.clone().unwrap_or_default();
        self.line(
            None,
            "stopping",
            &format!("{why}: stopping its stories and releasing their claims"),
        );
    }
}

fn add(a: UsageFigures, b: UsageFigures) -> UsageFigures {
    UsageFigures {
        tokens: a.tokens + b.tokens,
        cost_microusd: a.cost_microusd + b.cost_microusd,
        cost_known: a.cost_known || b.cost_known,
        reports: a.reports + b.reports,
    }
}

mod look;

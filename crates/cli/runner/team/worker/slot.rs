//! One story on one worker, in a thread of its own: the story's branch set to where the
//! claim starts it (the shared branch, or the work in progress of a worker that stopped),
//! its loop run through the seam (`story_loop`), then the landing (`land`), with the
//! loops a landing asks for (a conflict resolution, a fix of the checks) in between.
//!
//! While a loop runs the thread watches the team: a pause interrupts the loop (it saves
//! its state) and resumes it afterwards; a cancel, a lost claim or the worker stopping
//! interrupts it for good. A story that gives up is recorded on the remote (its claim
//! stays, marked, so nobody claims it again); a lost claim's work that the new holder may
//! not have is pushed to `salvage/STORY/WORKER`, so nothing is lost.

use std::sync::Arc;
use std::time::{Duration, Instant};

use git2::Oid;
use pagent_engine::prompt::team::taken_over;

use super::super::git::{Expect, Update};
use super::super::land::{Landing, Rounds, land};
use super::super::objects::{ref_target, write_record};
use super::super::records::{Control, GaveUp, Phase, TeamStory, encode};
use super::super::remote::{SyncError, all_ok};
use super::super::story_loop::{Heard, How, StoryLoop};
use super::shared::{Note, Outcome, Shared, reconcile};
use crate::io::now;
use crate::runner::loop_event::LoopEvent;
use crate::runner::worktree;
use crate::world::merge::holds;

/// How long a story thread waits for its loop's next word before looking at the team.
const LISTEN: Duration = Duration::from_millis(200);

/// Runs `story` from `start` to its end, then tells the worker.
pub fn run(shared: Arc<Shared>, story: TeamStory, start: Oid, taken: bool) {
    let outcome = run_story(&shared, &story, start, taken);
    let _ = shared.notes.send(Note::Ended {
        story: story.name.clone(),
        outcome,
    });
}

fn run_story(shared: &Shared, story: &TeamStory, start: Oid, taken: bool) -> Outcome {
    let name = story.name.as_str();
    let had_work = match prepare(shared, name, start) {
        Ok(had_work) => had_work,
        Err(err) => return Outcome::Failed(format!("cannot set up the story's branch: {err:#}")),
    };
    let task = if taken && had_work {
        taken_over(&story.task)
    } else {
        story.task.clone()
    };
    let mut how = How::New {
        task,
        promise: story.promise.clone(),
        max_iterations: story.max_iterations,
    };
    let mut rounds = Rounds::default();
    loop {
        match run_loop(shared, name, &how) {
            LoopEnd::Complete => {}
            LoopEnd::GaveUp(reason) => return give_up(shared, name, &reason),
            LoopEnd::Stopped => return Outcome::Stopped,
            LoopEnd::Lost => return lost(shared, name),
            LoopEnd::Cancelled => return Outcome::Cancelled,
            LoopEnd::Failed(why) => return Outcome::Failed(why),
        }
        shared.say(
            name,
            "landing",
            format!("landing on {}", shared.plan.branch),
        );
        match land(shared, story, &mut rounds) {
            Landing::Landed { commit, rejected } => {
                let _ = worktree::remove(shared.remote.root(), name);
                return Outcome::Landed { commit, rejected };
            }
            Landing::Resolve(files) => {
                shared.say(
                    name,
                    "resolving",
                    format!(
                        "conflicts with {} in {}: the agent resolves them",
                        shared.plan.branch,
                        files.join(", ")
                    ),
                );
                how = How::Resume;
            }
            Landing::Fix(task) => {
                shared.say(
                    name,
                    "fixing",
                    "the checks fail on the merged work: the agent fixes it".into(),
                );
                how = How::New {
                    task,
                    promise: story.promise.clone(),
                    max_iterations: Some(story.max_iterations.unwrap_or(10).min(10)),
                };
            }
            Landing::GaveUp(reason) => return give_up(shared, name, &reason),
            Landing::Lost => return lost(shared, name),
            Landing::Cancelled => return Outcome::Cancelled,
            Landing::Stopped => return Outcome::Stopped,
            Landing::Failed(why) => return Outcome::Failed(why),
        }
        shared.set_phase(name, Phase::Working);
    }
}

/// Sets the story's branch to `start` in a fresh worktree; whether `start` holds work
/// beyond the shared branch (a taken-over story's). A branch of an earlier run here that
/// holds commits `start` has not is kept under `refs/pagent/kept/`.
fn prepare(shared: &Shared, name: &str, start: Oid) -> anyhow::Result<bool> {
    let root = shared.remote.root();
    if worktree::existing(root, name)?.is_some() {
        worktree::remove(root, name)?;
    }
    let repo = shared.remote.repo()?;
    let branch = format!("refs/heads/pagent/{name}");
    if let Some(old) = ref_target(&repo, &branch)
        && !holds(&repo, start, old)
    {
        repo.reference(
            &format!("refs/pagent/kept/{name}-{}", &old.to_string()[..12]),
            old,
            true,
            "pagent: an earlier run's work, kept",
        )?;
    }
    repo.reference(&branch, start, true, "pagent: the team's claim starts here")?;
    let base = ref_target(&repo, &shared.remote.refs.seen_branch());
    Ok(base.is_none_or(|base| !holds(&repo, base, start)))
}

/// How one loop of the story ended.
enum LoopEnd {
    Complete,
    GaveUp(String),
    Stopped,
    Lost,
    Cancelled,
    Failed(String),
}

/// Why the worker interrupted a loop.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Interrupted {
    Pause,
    Stop,
    Lost,
    Cancel,
}

/// Runs one loop of the story to its end, pausing it while the team is paused.
fn run_loop(shared: &Shared, name: &str, how: &How) -> LoopEnd {
    let _ = shared.notes.send(Note::NewRun {
        story: name.to_owned(),
    });
    let mut story_loop = match StoryLoop::start(&shared.loops, name, how) {
        Ok(started) => started,
        Err(err) => return LoopEnd::Failed(format!("{err:#}")),
    };
    let mut interrupted: Option<Interrupted> = None;
    let mut reason = String::new();
    let mut stderr = String::new();
    loop {
        match story_loop.hear(LISTEN) {
            Some(Heard::Event(event)) => tell(shared, name, &event, &mut reason),
            Some(Heard::Stderr(line)) => keep_tail(&mut stderr, &line),
            Some(Heard::Ended(code)) => match (code, interrupted) {
                (Some(0), _) => return LoopEnd::Complete,
                (Some(3), _) => return LoopEnd::GaveUp(reason),
                (_, Some(Interrupted::Pause)) => match wait_out_pause(shared, name) {
                    Some(end) => return end,
                    None => {
                        shared.say(
                            name,
                            "resumed",
                            "the team runs again: the loop goes on".into(),
                        );
                        story_loop = match StoryLoop::start(&shared.loops, name, &How::Resume) {
                            Ok(started) => started,
                            Err(err) => return LoopEnd::Failed(format!("{err:#}")),
                        };
                        interrupted = None;
                    }
                },
                (_, Some(Interrupted::Stop)) | (Some(130), None) => return LoopEnd::Stopped,
                (_, Some(Interrupted::Lost)) => return LoopEnd::Lost,
                (_, Some(Interrupted::Cancel)) => return LoopEnd::Cancelled,
                (_, None) => {
                    let last = stderr.lines().rfind(|l| !l.trim().is_empty()).unwrap_or("");
                    let why = if reason.is_empty() {
                        last.trim().to_owned()
                    } else {
                        reason
                    };
                    return LoopEnd::Failed(format!("the story's loop failed: {why}"));
                }
            },
            None => {}
        }
        if interrupted.is_none()
            && let Some(why) = interruption(shared, name)
        {
            story_loop.interrupt();
            interrupted = Some(why);
            if why == Interrupted::Pause {
                shared.set_phase(name, Phase::Paused);
                shared.say(
                    name,
                    "paused",
                    "the team is paused: the loop saves its state and waits".into(),
                );
            }
        }
    }
}

fn interruption(shared: &Shared, name: &str) -> Option<Interrupted> {
    if shared.stopping() {
        return Some(Interrupted::Stop);
    }
    if shared.is_lost(name) {
        return Some(Interrupted::Lost);
    }
    match shared.control() {
        Control::Cancelled => Some(Interrupted::Cancel),
        Control::Paused => Some(Interrupted::Pause),
        Control::Running => None,
    }
}

/// Waits while the team is paused; how the story ends instead, when it does.
fn wait_out_pause(shared: &Shared, name: &str) -> Option<LoopEnd> {
    loop {
        match interruption(shared, name) {
            None => {
                shared.set_phase(name, Phase::Working);
                return None;
            }
            Some(Interrupted::Pause) => std::thread::sleep(shared.lease.tick()),
            Some(Interrupted::Stop) => return Some(LoopEnd::Stopped),
            Some(Interrupted::Lost) => return Some(LoopEnd::Lost),
            Some(Interrupted::Cancel) => return Some(LoopEnd::Cancelled),
        }
    }
}

/// Passes a loop's event on: a line per iteration, the figures, the end's reason.
fn tell(shared: &Shared, name: &str, event: &LoopEvent, reason: &mut String) {
    match event {
        LoopEvent::IterationFinished {
            stage,
            iteration,
            outcome,
            detail,
            usage,
            ..
        } => {
            if let Some(h) = shared.holdings().get_mut(name) {
                h.iterations += 1;
            }
            shared.say(
                name,
                "iteration",
                format!("{stage} {iteration} ({}): {detail}", outcome.words()),
            );
            if let Some(figures) = usage {
                let _ = shared.notes.send(Note::Usage {
                    story: name.to_owned(),
                    figures: *figures,
                });
            }
        }
        LoopEvent::Finished {
            reason: why, usage, ..
        } => {
            reason.clone_from(why);
            if let Some(figures) = usage {
                let _ = shared.notes.send(Note::Usage {
                    story: name.to_owned(),
                    figures: *figures,
                });
            }
        }
        LoopEvent::LimitWait {
            reason: why, until, ..
        } => shared.say(
            name,
            "waiting",
            format!(
                "waiting for a usage limit until {until}, then the same iteration runs again: {why}"
            ),
        ),
        LoopEvent::LimitResumed { waited_secs } => shared.say(
            name,
            "waiting",
            format!(
                "the usage limit was waited out ({}): the same iteration runs again",
                pagent_engine::format_duration(*waited_secs)
            ),
        ),
        // Its reason says the retry whole: which, of how many, and when.
        LoopEvent::Retry { reason: why, .. } => shared.say(name, "waiting", why.clone()),
        _ => {}
    }
}

fn keep_tail(text: &mut String, line: &str) {
    text.push_str(line);
    if text.len() > 4096 {
        let cut = (text.len() - 4096..text.len())
            .find(|c| text.is_char_boundary(*c))
            .unwrap_or(text.len());
        text.drain(..cut);
    }
}

/// Records on the remote that the story gave up: the state and a final claim, atomically,
/// with leases (so not after a cancel, and only while the claim is this worker's).
fn give_up(shared: &Shared, name: &str, reason: &str) -> Outcome {
    let reason = super::super::records::one_line(reason);
    let started = Instant::now();
    loop {
        if shared.stopping() && started.elapsed() > shared.lease.length {
            return Outcome::GaveUp(reason);
        }
        let mut turn = shared.remote.turn();
        let view = match turn.sync() {
            Ok(view) => view,
            Err(SyncError::Offline(_)) => {
                drop(turn);
                std::thread::sleep(shared.lease.tick());
                continue;
            }
            Err(SyncError::View(err)) => return Outcome::Failed(err.to_string()),
            Err(SyncError::Refused(why)) => return Outcome::Failed(why),
        };
        reconcile(shared, &view);
        if view.state.control == Control::Cancelled {
            return Outcome::Cancelled;
        }
        let Some(holding) = shared.holding(name).filter(|h| !h.lost) else {
            drop(turn);
            return lost(shared, name);
        };
        if holding.settled {
            return Outcome::GaveUp(reason);
        }
        let Ok(repo) = shared.remote.repo() else {
            return Outcome::GaveUp(reason);
        };
        let mut state = view.state.clone();
        state.gave_up.insert(
            name.to_owned(),
            GaveUp {
                worker: shared.worker.clone(),
                at: now(),
                reason: reason.clone(),
            },
        );
        let claim = holding.record(
            name,
            &shared.worker,
            &shared.host,
            shared.lease,
            Phase::GaveUp,
        );
        let message = format!("pagent: {name} gave up");
        let (Ok(state_commit), Ok(claim_commit)) = (
            super::super::control::state_commit(&shared.remote, &state, view.state_oid, &message),
            write_record(&repo, "claim.json", &encode(&claim), &[], &message, now().0),
        ) else {
            return Outcome::GaveUp(reason);
        };
        let refs = &shared.remote.refs;
        let updates = [
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
        if let Ok(pushed) = turn.push(&updates, true)
            && all_ok(&pushed)
        {
            if let Some(h) = shared.holdings().get_mut(name) {
                h.settled = true;
            }
            return Outcome::GaveUp(reason);
        }
        drop(turn);
        std::thread::sleep(shared.lease.tick());
    }
}

/// The claim is another worker's now: this worker's work on the story that went further
/// than its start is pushed to `salvage/STORY/WORKER` (unless the team was cancelled).
fn lost(shared: &Shared, name: &str) -> Outcome {
    let plain = "another worker holds it now".to_owned();
    let Ok(repo) = shared.remote.repo() else {
        shared.say(name, "lost", plain);
        return Outcome::Lost;
    };
    let start = shared.holding(name).map(|h| h.start);
    let Some(tip) = ref_target(&repo, &format!("refs/heads/pagent/{name}")) else {
        shared.say(name, "lost", plain);
        return Outcome::Lost;
    };
    if Some(tip) == start || shared.control() == Control::Cancelled {
        shared.say(name, "lost", plain);
        return Outcome::Lost;
    }
    let refs = &shared.remote.refs;
    let dst = refs.salvage(name, &shared.worker);
    let mut turn = shared.remote.turn();
    let expect = refs
        .seen(&dst)
        .and_then(|local| ref_target(&repo, &local))
        .map_or(Expect::Absent, Expect::Is);
    let pushed = turn.push(
        &[Update {
            new: Some(tip),
            dst: dst.clone(),
            expect,
        }],
        true,
    );
    drop(turn);
    let said = match pushed {
        Ok(p) if all_ok(&p) => {
            format!("another worker holds it now; this worker's work is kept at {dst}")
        }
        _ => format!(
            "another worker holds it now; this worker's work stays on its branch pagent/{name} here"
        ),
    };
    shared.say(name, "lost", said);
    Outcome::Lost
}

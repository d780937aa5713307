//! Everything pagent keeps on disk, behind the file door (`pagent_door::files`).
//!
//! This file is the state file: locked, atomic, sealed, and never trusted unless it is the
//! user's own. Writers take an exclusive lock on `.claude/pagent/lock` (flock: released by
//! the kernel when the holder dies), re-read the state, and write through a temp file
//! that is fsynced and renamed over the old one. Nobody holds the lock across anything
//! unbounded (a check, an agent, a transcript read): decisions are made without it and
//! applied compare-and-swap, on the generation they were made on ([`apply_if_unchanged`]).
//! Readers need no lock: the state is swapped in whole, so they see the old file or the
//! new one (`Dir::read_settled` reads again the rare file a writer rewrote meanwhile).

use std::path::Path;
use std::time::Duration;

use anyhow::Context;
use pagent_engine::{State, seal};

use crate::cli::hint::Hinted;
use crate::store::project::{LOCK_FILE, Project, STATE_FILE, STATE_SHADOW};
use crate::store::user::UserDir;

pub mod agent_config;
pub mod config;
pub mod consent;
pub mod covers;
pub mod eventlog;
pub mod exclude;
pub mod git;
pub mod nearest;
pub mod project;
pub mod register;
pub mod runs;
pub mod secret;
pub mod teams;
pub mod trust;
pub mod tuning;
pub mod user;
pub mod workflows;

/// Where the rooms below the command line put a warning: something the user should
/// know that changes no outcome (a generation not recorded, a prompt file not written).
/// The store never prints: whoever holds the terminal passes a sink down, a closure
/// over `cli::ui::warn` for a command, a `Vec` in a test.
pub trait Warn {
    fn warn(&mut self, message: &str);
}

impl<F: FnMut(&str)> Warn for F {
    fn warn(&mut self, message: &str) {
        self(message);
    }
}

/// State, config, workflow and prompt files are small; anything larger is refused.
pub const SMALL_FILE_CAP: u64 = 1024 * 1024;
/// How long a writer waits for the state lock. Holders never wait on anything unbounded,
/// so a lock held this long belongs to a stuck process: give up (and allow the stop).
pub const LOCK_WAIT: Duration = Duration::from_secs(5);

/// Holds the exclusive state lock until dropped.
#[derive(Debug)]
pub struct StateLock {
    _lock: pagent_door::files::Lock,
}

pub fn lock_state(project: &Project) -> anyhow::Result<StateLock> {
    let lock = project
        .dir()
        .lock(Path::new(LOCK_FILE), LOCK_WAIT)
        .context("cannot take the state lock")?;
    Ok(StateLock { _lock: lock })
}

/// The state file's bytes, or `None` when there is no state file.
pub fn read_state_bytes(project: &Project) -> anyhow::Result<Option<Vec<u8>>> {
    project
        .dir()
        .read_settled(Path::new(STATE_FILE), SMALL_FILE_CAP)
        .context("cannot read the loop state")
}

/// The parsed state, or `None` when there is no state file.
pub fn read_state(project: &Project) -> anyhow::Result<Option<State>> {
    let Some(bytes) = read_state_bytes(project)? else {
        return Ok(None);
    };
    parse_state(&bytes).map(Some)
}

pub fn parse_state(bytes: &[u8]) -> anyhow::Result<State> {
    State::from_json(bytes).with_context(|| {
        Hinted::new(format!("{STATE_FILE} is corrupt")).hint("run `pagent cancel` to set it aside")
    })
}

/// Whose state this is, as far as pagent will act on it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ownership {
    /// Sealed by this user for this project, and not older than the newest they wrote.
    Own,
    /// No secret, no seal, or a seal that does not verify: a stranger's file.
    Unsealed,
    /// Sealed by this user, but an older copy than the newest pagent wrote here.
    Stale,
}

/// Whether `state` is the user's own, current state for `project`.
pub fn ownership(project: &Project, user_dir: &UserDir, state: &State) -> Ownership {
    let Some(secret) = crate::store::secret::read_secret(user_dir) else {
        return Ownership::Unsealed;
    };
    if !seal::verify(state, &project.seal_key(), &secret) {
        return Ownership::Unsealed;
    }
    let newest = user_dir.newest_generation(&project.root).unwrap_or(0);
    if state.generation >= newest {
        return Ownership::Own;
    }
    // Older than the newest written: a rollback, or a copy read just before another
    // writer replaced it. Only the file on disk now can tell; an outdated copy is the
    // writer's own business (its compare-and-swap will fail).
    match read_state(project) {
        Ok(Some(now)) if now.generation >= newest => Ownership::Own,
        _ => Ownership::Stale,
    }
}

/// Seals `state` as the next generation and replaces the state file atomically, then
/// records the generation in the user's folder. Call with the lock held. Returns the state
/// as written.
pub fn write_state_atomic(
    project: &Project,
    user_dir: &UserDir,
    state: &State,
    secret: &[u8],
    warn: &mut dyn Warn,
) -> anyhow::Result<State> {
    let mut sealed = state.clone();
    let newest = user_dir.newest_generation(&project.root).unwrap_or(0);
    sealed.generation = state.generation.max(newest) + 1;
    seal::apply(&mut sealed, &project.seal_key(), secret);
    let mut text = sealed.to_json_pretty();
    text.push('\n');
    project
        .dir()
        .write_atomic_swapping(Path::new(STATE_FILE), STATE_SHADOW, text.as_bytes())
        .context("cannot write the loop state")?;
    if let Err(err) = user_dir.record_generation(&project.root, sealed.generation) {
        warn.warn(&format!(
            "cannot record the loop's generation in pagent's config folder: {err:#}"
        ));
    }
    Ok(sealed)
}

/// What [`apply_if_unchanged`] found under the lock.
#[derive(Debug)]
pub enum Applied {
    /// The state was still the one decided on, and the new one is written.
    Written(Box<State>),
    /// The state changed meanwhile (another writer, a cancel, a new loop): nothing written.
    Changed,
}

/// Takes the lock, re-reads the state, and writes `next` only if the state on disk is
/// still `decided_on` (same loop, same generation).
pub fn apply_if_unchanged(
    project: &Project,
    user_dir: &UserDir,
    decided_on: &State,
    next: &State,
    secret: &[u8],
    warn: &mut dyn Warn,
) -> anyhow::Result<Applied> {
    let _lock = lock_state(project)?;
    match read_state(project)? {
        Some(now)
            if now.loop_id == decided_on.loop_id && now.generation == decided_on.generation =>
        {
            write_state_atomic(project, user_dir, next, secret, warn)
                .map(|s| Applied::Written(Box::new(s)))
        }
        _ => Ok(Applied::Changed),
    }
}

/// Moves a corrupt state file aside (`pagent-pipeline.json.corrupt-<time>`), returning the
/// new name.
pub fn set_aside(project: &Project, now: u64) -> anyhow::Result<String> {
    let name = format!("pagent-pipeline.json.corrupt-{now}");
    project
        .dir()
        .rename_in_place(Path::new(STATE_FILE), &name)
        .context("cannot move the state file aside")?;
    Ok(format!(".claude/{name}"))
}

/// Writes the current stage's full prompt to [`pagent_engine::PROMPT_FILE`], where a
/// quiet re-prompt tells the model to find it. A failure is a warning: `pagent prompt`
/// prints the same text from the state.
pub fn write_prompt_file(project: &Project, state: &State, warn: &mut dyn Warn) {
    let mut text = state.current().prompt.clone();
    if !text.ends_with('\n') {
        text.push('\n');
    }
    if let Err(err) = project
        .dir()
        .write_atomic(Path::new(pagent_engine::PROMPT_FILE), text.as_bytes())
    {
        warn.warn(&format!(
            "cannot write {}: {err}",
            pagent_engine::PROMPT_FILE
        ));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_31_a_corrupt_state_says_what_to_do_next_as_a_hint() {
        let err = parse_state(b"{").unwrap_err();
        let hinted = err.downcast_ref::<Hinted>().unwrap();
        assert_eq!(hinted.hints(), ["run `pagent cancel` to set it aside"]);
        // Worded as it always was.
        assert_eq!(
            err.to_string(),
            format!("{STATE_FILE} is corrupt; run `pagent cancel` to set it aside")
        );
    }
}

//! `pagent hook stop`: the Stop hook Claude Code runs whenever the model tries to stop.
//!
//! Failure policy (tested): any error allows the stop, says why on stderr and exits 1,
//! which Claude Code reports as a non-blocking hook error. Nothing here exits 2.
//!
//! Speed policy: with no state file the hook returns before reading stdin or anything
//! else, so a project without a loop pays only for starting a process. A state owned by
//! another session is read without the lock, since it is never written; the lock is
//! taken only to change the owner's state.

#![allow(clippy::print_stdout)]

use std::time::Instant;

use anyhow::Context;
use pagent_engine::{Decision, State, StopEvent, decide_stop, seal};
use pagent_protocol::HookOutput;
use sha2::{Digest, Sha256};

use crate::args::Global;
use crate::cmd::{now, read_hook_input};
use crate::env::Env;
use crate::eventlog::{Event, append_event};
use crate::exit::ExitStatus;
use crate::project::{self, Project, STATE_FILE};
use crate::world::FsWorld;
use crate::{secret, store, ui};

pub fn run(global: &Global, env: &Env) -> ExitStatus {
    if env.driven_by_loop() {
        // `pagent loop` drives this state from outside; its agents' hooks stand aside.
        return ExitStatus::Success;
    }
    if let Some(root) = project::root_from_flag_or_env(global, env)
        && !root.join(STATE_FILE).exists()
    {
        return ExitStatus::Success;
    }
    let started = Instant::now();
    match decide(global, env, started) {
        Ok(output) => {
            if !output.is_empty() {
                println!("{}", serde_json::to_string(&output).unwrap_or_default());
            }
            ExitStatus::Success
        }
        Err(err) => {
            ui::report(&err.context("the Stop hook failed, so the stop is allowed"));
            ExitStatus::Failure
        }
    }
}

fn parse_state(bytes: &[u8]) -> anyhow::Result<State> {
    State::from_json(bytes)
        .with_context(|| format!("{STATE_FILE} is corrupt; run `pagent cancel` to set it aside"))
}

fn decide(global: &Global, env: &Env, started: Instant) -> anyhow::Result<HookOutput> {
    let input = read_hook_input()?;
    let project = Project::resolve(global, env, input.cwd.as_deref())?;
    let Some(mut bytes) = store::read_state_bytes(&project)? else {
        return Ok(HookOutput::default());
    };
    let mut state = parse_state(&bytes)?;
    if !state.is_active() {
        return Ok(HookOutput::default());
    }
    let session = input.session_id.clone().or_else(|| env.session_id.clone());
    let ours = state.session_id.is_none() || state.session_id == session;
    let _lock = if ours {
        Some(store::lock_state(&project)?)
    } else {
        None
    };
    if ours {
        // Under the lock, decide on the newest state: another hook may have just written it.
        let Some(fresh) = store::read_state_bytes(&project)? else {
            return Ok(HookOutput::default());
        };
        state = parse_state(&fresh)?;
        bytes = fresh;
    }

    let secret = secret::read_secret(env.config_dir.as_deref());
    let seal_valid = secret
        .as_deref()
        .is_some_and(|s| seal::verify(&state, &project.seal_key(), s));
    // Which unsealed file the user was warned about; not computed for a sealed state.
    let digest = (!seal_valid).then(|| pagent_engine::seal::hex(&Sha256::digest(&bytes)));
    let unsealed_warned = digest.as_ref().is_some_and(|d| {
        std::fs::read_to_string(project.unsealed_marker()).is_ok_and(|m| m.trim() == d)
    });
    let event = StopEvent {
        session_id: session.as_deref(),
        seal_valid,
        unsealed_warned,
        now: now(),
    };
    let mut world = FsWorld::for_hook(
        &project.root,
        &state.current().name,
        input.last_assistant_message.clone(),
        input.transcript_path.clone(),
    );
    let outcome = decide_stop(&event, &state, &mut world);

    if let (Some(next), Some(secret)) = (&outcome.write, &secret) {
        store::write_state_atomic(&project, next, secret)?;
    }
    if let Some(digest) =
        digest.filter(|_| !unsealed_warned && matches!(outcome.decision, Decision::Notify(_)))
    {
        let _ = std::fs::create_dir_all(project.pagent_dir())
            .and_then(|()| std::fs::write(project.unsealed_marker(), digest));
    }
    if let Some(entry) = outcome.log {
        let record = Event {
            ts: event.now.to_string(),
            action: entry.action.to_owned(),
            session_id: session,
            stage: Some(entry.stage),
            iteration: Some(entry.iteration),
            detail: entry.detail,
            ms: Some(u64::try_from(started.elapsed().as_millis()).unwrap_or(u64::MAX)),
        };
        if let Err(err) = append_event(&project, &record) {
            ui::warn(&format!("cannot append to the event log: {err:#}"));
        }
    }
    Ok(match outcome.decision {
        Decision::Allow => HookOutput::default(),
        Decision::Notify(message) => HookOutput {
            system_message: Some(message),
            ..HookOutput::default()
        },
        Decision::Block { reason, message } => HookOutput {
            decision: Some(pagent_protocol::Decision::Block),
            reason: Some(reason),
            system_message: Some(message),
            hook_specific_output: None,
        },
    })
}

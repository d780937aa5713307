//! `pagent hook stop`: the Stop hook Claude Code runs whenever the model tries to stop.
//!
//! Failure policy (tested): any error allows the stop, says why on stderr and exits 1,
//! which Claude Code reports as a non-blocking hook error. Nothing here exits 2.
//!
//! Speed policy: with no state file the hook returns before reading stdin or anything
//! else, so a project without a loop pays only for starting a process.
//!
//! Lock policy: the decision is made without the state lock (checks, the transcript and
//! the fingerprint may take long), then applied compare-and-swap: under the lock, only if
//! the state is still the generation it was made on. A cancel that lands meanwhile wins
//! and the stop is allowed. So does any other writer's update: the only other writer of
//! an active hook-driven loop is a second Stop hook of the same stop (pagent installed
//! twice, say), and its block already carries the next prompt; deciding again would
//! count one stop twice. A state that is not the user's own is never written, nor is anything else in
//! the project: the one-time notice is remembered in the user's own folder.
//!
//! What the user typed while the model worked: Claude Code holds a typed command in its
//! queue until the turn ends, and a loop's turn ends only with the loop. So each Stop
//! reads the commands queued since the last one (the transcript's `queue-operation`
//! lines, with the usage it reads anyway): a queued `/pagent-cancel` ends the loop at this
//! stop, a queued `/pagent-status` is answered in this stop's `systemMessage` and the loop
//! goes on, unpaused. The queued command still runs when the turn ends; its answer then
//! says how things stand.
//!
//! Output form: a re-prompt is `hookSpecificOutput.additionalContext` with no `decision`,
//! which both pinned clients take as "go on" (docs/claude-code.md): the model gets the
//! text once (a block reached 2.1.330's model twice, the second time after the hook's
//! whole command line), and the screen shows it as "Stop hook says" / "Stop hook
//! feedback", not as an error. The user's one line is the `systemMessage`.

use std::io::Write;
use std::time::Instant;

use pagent_engine::block_cap::{BlockCap, TurnSoFar};
use pagent_engine::notice::By;
use pagent_engine::{Decision, StopEvent, decide_stop};
use pagent_protocol::{HookInput, HookOutput, HookSpecificOutput};
use sha2::{Digest, Sha256};

use crate::agent::review::ReviewSetup;
use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::{Io, now};
use crate::session::hook::run_hook;
use crate::session::{self, Hook, control};
use crate::slash::Command;
use crate::store::eventlog::Event;
use crate::store::project::Project;
use crate::store::user::{NoticeKey, UserDir};
use crate::store::{self, Ownership};
use crate::world::FsWorld;
use crate::world::driven::Driven;
use crate::world::usage::Metered;

pub fn run(global: &Global, env: &Env, io: &mut Io) -> ExitStatus {
    let started = Instant::now();
    let failed = "the Stop hook failed, so Claude may stop";
    run_hook(
        Hook::Stop,
        global.project.as_deref(),
        env,
        io,
        failed,
        |call| {
            let project = call.project()?;
            decide_on(&project, &call.input, call.env, started, call.stderr)
        },
    )
}

fn decide_on(
    project: &Project,
    input: &HookInput,
    env: &Env,
    started: Instant,
    stderr: &mut dyn Write,
) -> anyhow::Result<HookOutput> {
    let user_dir = &UserDir::of(env);
    // A state that cannot be read or parsed (corrupt, a symlink out, a FIFO, too large)
    // is reported once per cause and content, then the hook stays quiet.
    let mut once = |key: String, err: anyhow::Error| -> anyhow::Result<HookOutput> {
        if user_dir.notice_given(&project.root, &NoticeKey::new(&key)) {
            return Ok(HookOutput::default());
        }
        remember(user_dir, project, &key, stderr);
        Err(err)
    };
    let bytes = match store::read_state_bytes(project) {
        Ok(Some(bytes)) => bytes,
        Ok(None) => return Ok(HookOutput::default()),
        Err(err) => return once(format!("unreadable {err:#}"), err),
    };
    let state = match store::parse_state(&bytes) {
        Ok(state) => state,
        Err(err) => return once(format!("corrupt {}", digest(&bytes)), err),
    };
    // Only the hook input names the stopping session (Claude Code always sends it): an
    // input without one never claims or continues a loop, whatever the environment says.
    let session = input.session_id.clone();
    if state.session_notice.is_some()
        && let Some(notice) =
            session::tell_session(project, env, &state, session.as_deref(), &mut |m: &str| {
                ui::warn(stderr, m)
            })?
    {
        return Ok(HookOutput {
            system_message: Some(pagent_engine::notice::at_stop(&notice)),
            ..HookOutput::default()
        });
    }
    if !state.is_active() {
        return Ok(HookOutput::default());
    }
    let ownership = store::ownership(project, user_dir, &state);
    // Which stranger's file the user was told about; not computed for their own state.
    let notice_key = (ownership != Ownership::Own).then(|| format!("not yours {}", digest(&bytes)));
    let mut world = FsWorld::for_hook(
        project,
        &state,
        input.last_assistant_message.clone(),
        input.transcript_path.clone(),
    )
    .with_path(env.path.clone())
    .with_review(ReviewSetup::for_stop_hook(env, started));
    // Decided on the state with this turn's tokens added; applied over the state read.
    let metered = meter(&state, ownership, session.as_deref(), input, user_dir);
    let event = StopEvent {
        session_id: session.as_deref(),
        seal_valid: ownership == Ownership::Own,
        unsealed_warned: notice_key
            .as_deref()
            .is_some_and(|key| user_dir.notice_given(&project.root, &NoticeKey::new(key))),
        now: now(),
        turn: TurnSoFar {
            continued: input.stop_hook_active,
            tool_called: metered.tool_called,
        },
        block_cap: BlockCap::from_env(env.stop_hook_block_cap.as_deref()),
    };
    let asked = queued_commands(&metered.queued);
    if let Some((_, typed)) = asked.iter().find(|(c, _)| *c == Command::Cancel) {
        let by = session.as_deref().map_or(By::Terminal, By::Session);
        let done = control::cancel(project, env, by, &mut |m: &str| ui::warn(stderr, m))?;
        return Ok(HookOutput {
            system_message: Some(format!(
                "{} (You typed {} while Claude worked.)",
                done.message(&project.root),
                crate::cli::ui::printable(typed, false)
            )),
            ..HookOutput::default()
        });
    }
    let mut outcome = decide_stop(&event, &metered.state, &mut world);
    // A reviewer that ran is paid for like the session: its usage counts too.
    if let Some(write) = &mut outcome.write {
        *write =
            crate::world::usage::add_records(write, &world.take_review_usage(), None, user_dir);
    }

    if let Some(notice_key) = notice_key {
        // Never write in the project for a state pagent ignores.
        if let Decision::Notify(message) = &outcome.decision {
            remember(user_dir, project, &notice_key, stderr);
            let message = if ownership == Ownership::Stale {
                "pagent: ignoring .claude/pagent-pipeline.json: it is an older copy of a loop \
                 state than the newest pagent wrote here (restored from a backup or a stash?), \
                 so it is not continued. Start a new loop with /pagent:run or /pagent:ralph."
                    .to_owned()
            } else {
                message.clone()
            };
            return Ok(HookOutput {
                system_message: Some(message),
                ..HookOutput::default()
            });
        }
        return Ok(HookOutput::default());
    }

    let logged = |entry| Event::of(entry, event.now, session.as_deref()).took(started.elapsed());
    let Some(written) = session::apply(project, env, &state, &outcome, logged, &mut |m: &str| {
        ui::warn(stderr, m)
    })?
    else {
        // Cancelled, replaced, removed or decided by another hook meanwhile.
        return Ok(HookOutput::default());
    };
    if state.paused.is_none() && written.paused.is_some() {
        // The one pause a Stop makes: Claude Code's cap on continuations (the user may be
        // away; the loop waits for them now).
        let go_on = Driven::Session.go_on(&written, &project.root);
        session::notify::loop_paused(env, &project.root, &written, &go_on);
    }
    let mut output = output_of(outcome.decision);
    if asked.iter().any(|(c, _)| *c == Command::Status) {
        add_message(&mut output, crate::slash::answer::status_line(project, env));
    }
    if let Some((key, notice)) = world.take_notice()
        && !user_dir.notice_given(&project.root, &NoticeKey::new(&key))
    {
        remember(user_dir, project, &key, stderr);
        add_message(&mut output, notice);
    }
    Ok(output)
}

/// `state` with the usage this turn's transcript recorded since the last Stop, the
/// commands queued since, and whether a tool ran: read only for the user's own state.
fn meter(
    state: &pagent_engine::State,
    ownership: Ownership,
    session: Option<&str>,
    input: &HookInput,
    user_dir: &UserDir,
) -> Metered {
    match ownership {
        Ownership::Own => crate::world::usage::meter_stop(
            state,
            session,
            input.transcript_path.as_deref(),
            input.last_assistant_message.as_deref(),
            user_dir,
        ),
        _ => Metered {
            state: state.clone(),
            queued: Vec::new(),
            tool_called: None,
        },
    }
}

/// pagent's status and cancel commands among the prompts queued during the turn, with the
/// name each was typed as.
fn queued_commands(queued: &[String]) -> Vec<(Command, &str)> {
    queued
        .iter()
        .filter_map(|prompt| {
            let word = prompt.split_whitespace().next()?;
            Some((Command::named(word.strip_prefix('/')?)?, word))
        })
        .filter(|(c, _)| matches!(c, Command::Status | Command::Cancel))
        .collect()
}

/// Adds a line (or lines) to what the user reads.
fn add_message(output: &mut HookOutput, line: String) {
    output.system_message = Some(match output.system_message.take() {
        Some(message) => format!("{message}\n{line}"),
        None => line,
    });
}

fn output_of(decision: Decision) -> HookOutput {
    match decision {
        Decision::Allow => HookOutput::default(),
        Decision::Notify(message) => HookOutput {
            system_message: Some(message),
            ..HookOutput::default()
        },
        // Not a block: additionalContext alone continues the turn (see above).
        Decision::Block { reason, message } => HookOutput {
            system_message: Some(message),
            hook_specific_output: Some(HookSpecificOutput {
                hook_event_name: "Stop".to_owned(),
                additional_context: Some(reason),
            }),
            ..HookOutput::default()
        },
    }
}

fn digest(bytes: &[u8]) -> String {
    pagent_engine::seal::hex(&Sha256::digest(bytes))
}

fn remember(user_dir: &UserDir, project: &Project, key: &str, stderr: &mut dyn Write) {
    if let Err(err) = user_dir.remember_notice(&project.root, &NoticeKey::new(key)) {
        ui::warn(
            stderr,
            &format!("cannot remember a notice in pagent's config folder: {err:#}"),
        );
    }
}

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

use pagent_engine::{Decision, StopEvent, decide_stop};
use pagent_protocol::{HookInput, HookOutput, HookSpecificOutput};
use sha2::{Digest, Sha256};

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::{Io, now, read_hook_input};
use crate::runner::review::ReviewSetup;
use crate::session::{self, Hook, control};
use crate::slash::Command;
use crate::store::eventlog::Event;
use crate::store::project::{self, Project};
use crate::store::{self, Ownership, user};
use crate::world::FsWorld;

pub fn run(global: &Global, env: &Env, io: &mut Io) -> ExitStatus {
    let root = project::root_from_flag_or_env(global, env);
    if session::hook_stands_aside(
        Hook::Stop,
        env.driver,
        root.as_deref(),
        env.config_dir.as_deref(),
    ) {
        return ExitStatus::Success;
    }
    let started = Instant::now();
    match decide(global, env, started, io) {
        Ok(output) => {
            if !output.is_empty() {
                // Unwritable stdout: Claude Code sees no decision, which allows the stop.
                let _ = writeln!(
                    io.stdout,
                    "{}",
                    serde_json::to_string(&output).unwrap_or_default()
                );
            }
            ExitStatus::Success
        }
        Err(err) => {
            ui::report(
                io.stderr,
                &err.context("the Stop hook failed, so Claude may stop"),
            );
            ExitStatus::Failure
        }
    }
}

fn decide(global: &Global, env: &Env, started: Instant, io: &mut Io) -> anyhow::Result<HookOutput> {
    let input = read_hook_input(io.stdin)?;
    let project = Project::resolve(global, env, input.cwd.as_deref())?;
    decide_on(&project, &input, env, started, io.stderr)
}

fn decide_on(
    project: &Project,
    input: &HookInput,
    env: &Env,
    started: Instant,
    stderr: &mut dyn Write,
) -> anyhow::Result<HookOutput> {
    let config_dir = env.config_dir.as_deref();
    // A state that cannot be read or parsed (corrupt, a symlink out, a FIFO, too large)
    // is reported once per cause and content, then the hook stays quiet.
    let mut once = |key: String, err: anyhow::Error| -> anyhow::Result<HookOutput> {
        if user::notice_given(config_dir, &project.root, &key) {
            return Ok(HookOutput::default());
        }
        remember(config_dir, project, &key, stderr);
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
            session::tell_session(project, config_dir, &state, session.as_deref(), stderr)?
    {
        return Ok(HookOutput {
            system_message: Some(notice),
            ..HookOutput::default()
        });
    }
    if !state.is_active() {
        return Ok(HookOutput::default());
    }
    let ownership = store::ownership(project, config_dir, &state);
    // Which stranger's file the user was told about; not computed for their own state.
    let notice_key = (ownership != Ownership::Own).then(|| format!("not yours {}", digest(&bytes)));
    let event = StopEvent {
        session_id: session.as_deref(),
        seal_valid: ownership == Ownership::Own,
        unsealed_warned: notice_key
            .as_deref()
            .is_some_and(|key| user::notice_given(config_dir, &project.root, key)),
        now: now(),
    };
    let mut world = FsWorld::for_hook(
        project,
        &state,
        input.last_assistant_message.clone(),
        input.transcript_path.clone(),
    )
    .with_path(env.path.clone())
    .with_review(ReviewSetup::for_stop_hook(env, started));
    // Decided on the state with this turn's tokens added; applied over the state read.
    let (metered, queued) = match ownership {
        Ownership::Own => crate::world::usage::meter_stop(
            &state,
            session.as_deref(),
            input.transcript_path.as_deref(),
            config_dir,
        ),
        _ => (state.clone(), Vec::new()),
    };
    let asked = queued_commands(&queued);
    if let Some((_, typed)) = asked.iter().find(|(c, _)| *c == Command::Cancel) {
        let done = control::cancel(project, env, session.as_deref(), stderr)?;
        return Ok(HookOutput {
            system_message: Some(format!(
                "{} (You typed {} while Claude worked.)",
                done.message(&project.root),
                crate::cli::ui::printable(typed, false)
            )),
            ..HookOutput::default()
        });
    }
    let mut outcome = decide_stop(&event, &metered, &mut world);
    // A reviewer that ran is paid for like the session: its usage counts too.
    if let Some(write) = &mut outcome.write {
        *write =
            crate::world::usage::add_records(write, &world.take_review_usage(), None, config_dir);
    }

    if let Some(notice_key) = notice_key {
        // Never write in the project for a state pagent ignores.
        if let Decision::Notify(message) = &outcome.decision {
            remember(config_dir, project, &notice_key, stderr);
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
    let Some(written) = session::apply(project, config_dir, &state, &outcome, logged, stderr)?
    else {
        // Cancelled, replaced, removed or decided by another hook meanwhile.
        return Ok(HookOutput::default());
    };
    if outcome.write.is_some() {
        crate::notify::loop_ended(env, &project.root, &written);
    }
    let mut output = output_of(outcome.decision);
    if asked.iter().any(|(c, _)| *c == Command::Status) {
        add_message(&mut output, crate::slash::answer::status_line(project, env));
    }
    if let Some((key, notice)) = world.take_notice()
        && !user::notice_given(config_dir, &project.root, &key)
    {
        remember(config_dir, project, &key, stderr);
        add_message(&mut output, notice);
    }
    Ok(output)
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

fn remember(
    config_dir: Option<&std::path::Path>,
    project: &Project,
    key: &str,
    stderr: &mut dyn Write,
) {
    if let Err(err) = user::remember_notice(config_dir, &project.root, key) {
        ui::warn(
            stderr,
            &format!("cannot remember a notice in pagent's config folder: {err:#}"),
        );
    }
}

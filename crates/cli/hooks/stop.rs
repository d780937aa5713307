//! The Stop hook's use case (`pagent hook stop`, run whenever the model tries to stop).
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
use pagent_engine::{Decision, Outcome, State, StopEvent, decide_stop};
use pagent_protocol::{HookEvent, HookInput, HookOutput, HookSpecificOutput};
use sha2::{Digest, Sha256};

use super::frame::HookCall;
use super::words;
use crate::agent::review::ReviewSetup;
use crate::cli::env::Env;
use crate::cli::ui;
use crate::io::now;
use crate::session::{self, control};
use crate::slash::Command;
use crate::store::eventlog::Event;
use crate::store::project::Project;
use crate::store::user::{NoticeKey, UserDir};
use crate::store::{self, Ownership};
use crate::world::FsWorld;
use crate::world::driven::Driven;
use crate::world::usage::Metered;

/// The Stop hook's body: the hook's output for this stop (`started` is when the process
/// began, for the log's timings and the reviewer's budget).
pub fn decide(call: &mut HookCall, started: Instant) -> anyhow::Result<HookOutput> {
    let project = call.project()?;
    Stop {
        project: &project,
        input: &call.input,
        session: call.session(),
        env: call.env,
        user_dir: UserDir::of(call.env),
        started,
        stderr: &mut *call.stderr,
    }
    .decide()
}

/// One Stop: what it reads and where it reports.
struct Stop<'a> {
    project: &'a Project,
    input: &'a HookInput,
    /// The stopping session ([`HookCall::session`]).
    session: Option<String>,
    env: &'a Env,
    user_dir: UserDir,
    started: Instant,
    stderr: &'a mut dyn Write,
}

/// The state as read, with its bytes (a stranger's file is remembered by their digest).
struct Read {
    state: State,
    bytes: Vec<u8>,
}

impl Stop<'_> {
    fn decide(&mut self) -> anyhow::Result<HookOutput> {
        let Some(Read { state, bytes }) = self.read()? else {
            return Ok(HookOutput::default());
        };
        // Only the hook input names the stopping session (Claude Code always sends it;
        // `hook_session`): an input without one never claims or continues a loop, whatever
        // the environment says.
        let session = self.session.clone();
        if let Some(told) = self.tell(&state, session.as_deref())? {
            return Ok(told);
        }
        if !state.is_active() {
            return Ok(HookOutput::default());
        }
        let ownership = store::ownership(self.project, &self.user_dir, &state);
        // Which stranger's file the user was told about; not computed for their own state.
        let notice_key =
            (ownership != Ownership::Own).then(|| format!("not yours {}", digest(&bytes)));
        let mut world = FsWorld::for_hook(
            self.project,
            &state,
            self.input.last_assistant_message.clone(),
            self.input.transcript_path.clone(),
        )
        .with_path(self.env.path.clone())
        .with_review(ReviewSetup::for_stop_hook(self.env, self.started));
        // Decided on the state with this turn's tokens added; applied over the state read.
        let metered = meter(
            &state,
            ownership,
            session.as_deref(),
            self.input,
            &self.user_dir,
        );
        let event = StopEvent {
            session_id: session.as_deref(),
            seal_valid: ownership == Ownership::Own,
            unsealed_warned: notice_key.as_deref().is_some_and(|key| self.given(key)),
            now: now(),
            turn: TurnSoFar {
                continued: self.input.stop_hook_active,
                tool_called: metered.tool_called,
            },
            block_cap: BlockCap::from_env(self.env.stop_hook_block_cap.as_deref()),
        };
        let asked = queued_commands(&metered.queued);
        if let Some((_, typed)) = asked.iter().find(|(c, _)| *c == Command::Cancel) {
            return self.cancel(session.as_deref(), typed);
        }
        let mut outcome = decide_stop(&event, &metered.state, &mut world);
        // A reviewer that ran is paid for like the session: its usage counts too.
        if let Some(write) = &mut outcome.write {
            *write = crate::world::usage::add_records(
                write,
                &world.take_review_usage(),
                None,
                &self.user_dir,
            );
        }
        if let Some(notice_key) = notice_key {
            return Ok(self.stranger(&outcome.decision, ownership, &notice_key));
        }
        let Some(mut output) = self.apply(&state, &outcome, &event, session.as_deref())? else {
            // Cancelled, replaced, removed or decided by another hook meanwhile.
            return Ok(HookOutput::default());
        };
        if asked.iter().any(|(c, _)| *c == Command::Status) {
            add_message(
                &mut output,
                crate::slash::answer::status_line(self.project, self.env),
            );
        }
        if let Some((key, notice)) = world.take_notice()
            && !self.given(&key)
        {
            self.remember(&key);
            add_message(&mut output, notice);
        }
        Ok(output)
    }

    /// The state, or `None` when there is none or it cannot be used: a state that cannot
    /// be read or parsed (corrupt, a symlink out, a FIFO, too large) is reported once per
    /// cause and content, then the hook stays quiet.
    fn read(&mut self) -> anyhow::Result<Option<Read>> {
        let (key, err) = match store::read_state_bytes(self.project) {
            Ok(None) => return Ok(None),
            Ok(Some(bytes)) => match store::parse_state(&bytes) {
                Ok(state) => return Ok(Some(Read { state, bytes })),
                Err(err) => (format!("corrupt {}", digest(&bytes)), err),
            },
            Err(err) => (format!("unreadable {err:#}"), err),
        };
        if self.given(&key) {
            return Ok(None);
        }
        self.remember(&key);
        Err(err)
    }

    /// The notice waiting for this session (a cancel from a terminal, say), said once.
    fn tell(&mut self, state: &State, session: Option<&str>) -> anyhow::Result<Option<HookOutput>> {
        if state.session_notice.is_none() {
            return Ok(None);
        }
        let stderr = &mut *self.stderr;
        let told =
            session::tell_session(self.project, self.env, state, session, &mut |m: &str| {
                ui::warn(stderr, m)
            })?;
        Ok(told.map(|notice| HookOutput {
            system_message: Some(pagent_engine::notice::at_stop(&notice)),
            ..HookOutput::default()
        }))
    }

    /// `/pagent-cancel` typed while the model worked (`typed` as the user wrote it): the
    /// loop ends at this stop.
    fn cancel(&mut self, session: Option<&str>, typed: &str) -> anyhow::Result<HookOutput> {
        let by = session.map_or(By::Terminal, By::Session);
        let stderr = &mut *self.stderr;
        let done = control::cancel(self.project, self.env, by, &mut |m: &str| {
            ui::warn(stderr, m)
        })?;
        Ok(HookOutput {
            system_message: Some(words::cancelled_while_working(
                &done.message(&self.project.root),
                &ui::printable(typed, false),
            )),
            ..HookOutput::default()
        })
    }

    /// What a state that is not the user's own gets: its notice, once (remembered in the
    /// user's own folder: nothing is ever written in the project for it), else nothing.
    fn stranger(&mut self, decision: &Decision, ownership: Ownership, key: &str) -> HookOutput {
        let Decision::Notify(message) = decision else {
            return HookOutput::default();
        };
        self.remember(key);
        let message = if ownership == Ownership::Stale {
            words::stale_state()
        } else {
            message.clone()
        };
        HookOutput {
            system_message: Some(message),
            ..HookOutput::default()
        }
    }

    /// Applies `outcome` to the user's own state, compare-and-swap: the hook's output, or
    /// `None` when another writer changed the state meanwhile.
    fn apply(
        &mut self,
        state: &State,
        outcome: &Outcome,
        event: &StopEvent,
        session: Option<&str>,
    ) -> anyhow::Result<Option<HookOutput>> {
        let started = self.started;
        let logged = |entry| Event::of(entry, event.now, session).took(started.elapsed());
        let stderr = &mut *self.stderr;
        let written = session::apply(
            self.project,
            self.env,
            state,
            outcome,
            logged,
            &mut |m: &str| ui::warn(stderr, m),
        )?;
        let Some(written) = written else {
            return Ok(None);
        };
        if state.paused.is_none() && written.paused.is_some() {
            // The one pause a Stop makes: Claude Code's cap on continuations (the user may
            // be away; the loop waits for them now).
            let go_on = Driven::Session.go_on(&written, &self.project.root);
            session::notify::loop_paused(self.env, &self.project.root, &written, &go_on);
        }
        Ok(Some(output_of(outcome.decision.clone())))
    }

    /// Whether the notice `key` was given in this project already.
    fn given(&self, key: &str) -> bool {
        self.user_dir
            .notice_given(&self.project.root, &NoticeKey::new(key))
    }

    fn remember(&mut self, key: &str) {
        if let Err(err) = self
            .user_dir
            .remember_notice(&self.project.root, &NoticeKey::new(key))
        {
            ui::warn(self.stderr, &words::cannot_remember_notice(&err));
        }
    }
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
                hook_event_name: HookEvent::Stop.name().to_owned(),
                additional_context: Some(reason),
            }),
            ..HookOutput::default()
        },
    }
}

fn digest(bytes: &[u8]) -> String {
    pagent_engine::seal::hex(&Sha256::digest(bytes))
}

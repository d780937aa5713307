//! `pagent hook stop-failure`: Claude Code's StopFailure hook, run instead of Stop when a
//! turn ends on an API error (registered for `rate_limit` only, in `hooks/hooks.json`).
//!
//! A usage limit of the session's own loop marks the loop waiting
//! (`pagent_engine::limit::decide_stop_failure`): no iteration is counted, the
//! no-progress count is untouched, and the user hears it once (the hook's
//! `systemMessage` and, as their config asks, a notification). The next Stop goes on as
//! before: Claude Code 2.1.234 and later resume the session by themselves after the
//! reset (its prompt is not taken for the user's words, `pagent_engine::pause`), with
//! older ones `/pagent:resume` does. Any other error, any other session's loop and any
//! state that is not the user's own are left untouched.
//!
//! Like every hook: with no state file it returns before reading stdin, it never
//! blocks (Claude Code ignores a StopFailure hook's decision anyway), never exits 2, and
//! an error only reaches stderr. The zone database is read here, once per limit, to
//! turn `resets 3am (Europe/Paris)` into the instant `pagent status` counts down to.

use pagent_engine::Decision;
use pagent_engine::limit::{StopFailureEvent, decide_stop_failure};
use pagent_protocol::HookOutput;
use pagent_protocol::stream::limit::claude_text;

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::{Io, now, read_hook_input};
use crate::session::{self, Hook};
use crate::store::eventlog::Event;
use crate::store::project::{self, Project};
use crate::store::{self, Ownership};
use crate::world::zone::{self, Zones};

pub fn run(global: &Global, env: &Env, io: &mut Io) -> ExitStatus {
    let root = project::root_from_flag_or_env(global, env);
    if session::hook_stands_aside(
        Hook::StopFailure,
        env.driver,
        root.as_deref(),
        env.config_dir.as_deref(),
    ) {
        return ExitStatus::Success;
    }
    match decide(global, env, io) {
        Ok(output) => {
            if !output.is_empty() {
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
                &err.context("the StopFailure hook failed; the loop was not marked waiting"),
            );
            ExitStatus::Failure
        }
    }
}

fn decide(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<HookOutput> {
    let input = read_hook_input(io.stdin)?;
    let project = Project::resolve(global, env, input.cwd.as_deref())?;
    let config_dir = env.config_dir.as_deref();
    let Some(state) = store::read_state(&project)?.filter(pagent_engine::State::is_active) else {
        return Ok(HookOutput::default());
    };
    let now = now();
    let zones = Zones {
        tz: env.tz.as_deref(),
        tzdir: env.tzdir.as_deref(),
    };
    let limit = input
        .last_assistant_message
        .as_deref()
        .and_then(claude_text)
        .map(|hit| zone::limit_seen(&hit, &zones, now));
    let session = input.session_id.clone();
    let event = StopFailureEvent {
        session_id: session.as_deref(),
        seal_valid: store::ownership(&project, config_dir, &state) == Ownership::Own,
        error: input.error.as_deref().unwrap_or(""),
        limit,
        now,
    };
    let outcome = decide_stop_failure(&event, &state);
    if outcome.write.is_none() {
        return Ok(HookOutput::default());
    }
    let logged = |entry| Event::of(entry, now, session.as_deref());
    let Some(written) = session::apply(&project, config_dir, &state, &outcome, logged, io.stderr)?
    else {
        return Ok(HookOutput::default());
    };
    let why = written
        .limit_wait
        .as_ref()
        .map_or_else(String::new, |wait| wait.why.clone());
    crate::notify::limit_reached(env, &project.root, &written, &why);
    Ok(match outcome.decision {
        Decision::Notify(message) => HookOutput {
            system_message: Some(message),
            ..HookOutput::default()
        },
        _ => HookOutput::default(),
    })
}

//! The StopFailure hook's use case (`pagent hook stop-failure`): Claude Code's StopFailure
//! hook, run instead of Stop when a turn ends on an API error (registered for `rate_limit`
//! only, in `hooks/hooks.json`).
//!
//! A usage limit of the session's own loop marks the loop waiting
//! (`pagent_engine::limit::decide_stop_failure`): no iteration is counted, the
//! no-progress count is untouched, and the user hears it once (the hook's
//! `systemMessage` and, as their config asks, a notification), with what to do on their
//! client: Claude Code 2.1.234 and later resume the session by themselves after the
//! reset (its prompt is not taken for the user's words, `pagent_engine::pause`), with
//! older ones `/pagent:resume` does; which version it is, Claude Code's `AI_AGENT`
//! says. The next Stop goes on as before. A limit that no wait ends (out of credits, a
//! seat or admin setting) ends the loop at once, saying why. Any other error, any other
//! session's loop and any state that is not the user's own are left untouched.
//!
//! Like every hook: with no state file it returns before reading stdin, it never
//! blocks (Claude Code ignores a StopFailure hook's decision anyway), never exits 2, and
//! an error only reaches stderr. The zone database is read here, once per limit, to
//! turn `resets 3am (Europe/Paris)` into the instant `pagent status` counts down to.

use pagent_engine::Decision;
use pagent_engine::limit::{StopFailureEvent, decide_stop_failure};
use pagent_protocol::HookOutput;
use pagent_protocol::stream::limit::claude_text;

use super::frame::HookCall;
use crate::cli::ui;
use crate::io::now;
use crate::session;
use crate::store::eventlog::Event;
use crate::store::user::UserDir;
use crate::store::{self, Ownership};
use crate::world::zone::{self, Zones};

/// The StopFailure hook's body: a usage limit of the owner's loop makes it wait.
pub fn decide(call: &mut HookCall) -> anyhow::Result<HookOutput> {
    let (input, env) = (&call.input, call.env);
    let project = call.project()?;
    let user_dir = &UserDir::of(env);
    let Some(state) = store::read_state(&project)?.filter(pagent_engine::State::is_active) else {
        return Ok(HookOutput::default());
    };
    let now = now();
    let zones = Zones {
        tz: env.tz.as_deref(),
        tzdir: env.tzdir.as_deref(),
    };
    let said = input
        .last_assistant_message
        .as_deref()
        .filter(|text| !text.trim().is_empty());
    let limit = said
        .and_then(claude_text)
        .map(|hit| zone::limit_seen(&hit, &zones, now));
    let session = call.session();
    let event = StopFailureEvent {
        session_id: session.as_deref(),
        seal_valid: store::ownership(&project, user_dir, &state) == Ownership::Own,
        error: input.error.as_deref().unwrap_or(""),
        outage: said.is_some() && limit.is_none(),
        limit,
        client: env.claude_version.as_deref(),
        now,
    };
    let outcome = decide_stop_failure(&event, &state);
    if outcome.write.is_none() {
        return Ok(HookOutput::default());
    }
    let logged = |entry| Event::of(entry, now, session.as_deref());
    let Some(written) = session::apply(&project, env, &state, &outcome, logged, &mut |m: &str| {
        ui::warn(call.stderr, m)
    })?
    else {
        return Ok(HookOutput::default());
    };
    // A loop that ended here was told by the write itself (`session::apply`).
    if let Some(wait) = &written.limit_wait {
        crate::session::notify::limit_reached(env, &project.root, &written, &wait.why);
    }
    Ok(match outcome.decision {
        Decision::Notify(message) => HookOutput {
            system_message: Some(message),
            ..HookOutput::default()
        },
        _ => HookOutput::default(),
    })
}

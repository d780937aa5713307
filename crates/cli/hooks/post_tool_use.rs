//! The PostToolUse hook's use case (`pagent hook post-tool-use`): backpressure. After an
//! edit tool writes a file, check it and hand problems straight back to the model as
//! `additionalContext`.
//!
//! This hook runs after every tool call of every session, so the common case must cost
//! no more than starting a process: with no state file (and no user config that turns
//! checks on everywhere) it returns before reading stdin. Who gets checks is the engine's
//! policy (`decide_post_tool_use`): the session that owns an active, sealed loop, or
//! everywhere when the user's own config says `"always": true`. Like the Stop hook it fails open: an error is reported on
//! stderr and the tool's result stands. A check that would run the project's own code is
//! skipped unless the user trusted it; the hook says so once (to the user, remembered in
//! their own folder), then stays quiet. Nothing is written into a project whose state is
//! not the user's own.

use std::path::{Path, PathBuf};

use pagent_engine::backpressure::{BackpressureConfig, CheckResult, render_feedback};
use pagent_engine::{
    Action, EditEvent, LogEntry, decide_post_tool_use, record_check, record_check_log,
};
use pagent_protocol::{HookEvent, HookOutput, HookSpecificOutput};

use super::frame::HookCall;
use super::words;
use crate::cli::ui;
use crate::io::now;
use crate::session;
use crate::store::eventlog::Event;
use crate::store::project::Project;
use crate::store::user::{NoticeKey, UserDir};
use crate::store::{self, config, consent};
use crate::world::backpressure::{Checked, run_checks};
use pagent_door::files;

/// What the hook has to say: context for the model, a notice for the user.
#[derive(Debug, Default)]
struct Said {
    context: Option<String>,
    notice: Option<String>,
}

/// The PostToolUse hook's body: the edited file's feedback for the model, any notice for
/// the user.
pub fn check(call: &mut HookCall) -> anyhow::Result<HookOutput> {
    let said = check_edit(call)?;
    Ok(HookOutput {
        hook_specific_output: said.context.map(|context| HookSpecificOutput {
            hook_event_name: HookEvent::PostToolUse.name().into(),
            additional_context: Some(context),
        }),
        system_message: said.notice,
        ..HookOutput::default()
    })
}

/// The feedback for the edited file, and any notice for the user. The engine decides who
/// gets checks and under which settings ([`decide_post_tool_use`]); this reads and runs.
fn check_edit(call: &mut HookCall) -> anyhow::Result<Said> {
    let (input, env) = (&call.input, call.env);
    let Some(file) = input.edited_file() else {
        return Ok(Said::default());
    };
    let project = call.project()?;
    let session = call.session();
    let session = session.as_deref();
    let user_dir = &UserDir::of(env);
    let user = user_checks(user_dir, call.stderr);
    let state = store::read_state(&project).ok().flatten();
    let event = EditEvent {
        session_id: session,
        seal_valid: state.as_ref().is_some_and(|s| {
            s.is_active() && store::ownership(&project, user_dir, s) == store::Ownership::Own
        }),
    };
    let Some(plan) = decide_post_tool_use(&event, state.as_ref(), &user) else {
        return Ok(Said::default());
    };
    let Some((rel, ext)) = edited_in(&project, file) else {
        return Ok(Said::default());
    };
    let specs = plan.config.checks_for(&ext);
    if specs.is_empty() {
        return Ok(Said::default());
    }
    let shown = rel.display().to_string();
    let trusted = |program: &Path| consent::program_trusted(&project, user_dir, program);
    let checked = run_checks(&project, &rel, &specs, env.path.as_deref(), &trusted);
    let notice = untrusted_notice(&project, user_dir, &shown, &checked);
    let results: Vec<(String, CheckResult)> = checked
        .iter()
        .map(|c| (c.label.clone(), c.result.clone()))
        .collect();
    // Only the user's own loop gets a log and a memory: nothing is written for a stranger.
    if let Some(stage) = &plan.stage {
        record(call, &project, stage, &shown, &checked, &results)?;
    }
    Ok(Said {
        context: render_feedback(&shown, &results),
        notice,
    })
}

/// The checks the user's own config asks for (the defaults when it says nothing, or
/// cannot be read, which is said).
fn user_checks(user_dir: &UserDir, stderr: &mut dyn std::io::Write) -> BackpressureConfig {
    match config::user_config_path(user_dir).map(|p| config::read_config(&p)) {
        Some(Ok(file)) => file.and_then(|f| f.backpressure).unwrap_or_default(),
        Some(Err(err)) => {
            ui::warn(stderr, &words::default_checks(&err));
            BackpressureConfig::default()
        }
        None => BackpressureConfig::default(),
    }
}

/// The edited `file` as a regular file inside the project: its path there and its
/// extension; `None` for anything else (outside, a symlink, a folder, no extension).
fn edited_in(project: &Project, file: &str) -> Option<(PathBuf, String)> {
    let rel = consent::rel_in_project(project, &project.root, Path::new(file)).ok()?;
    if !matches!(project.dir().kind(&rel), Ok(Some((files::Kind::File, _)))) {
        return None;
    }
    let ext = rel.extension()?.to_string_lossy().into_owned();
    Some((rel, ext))
}

/// The notice for a check skipped because its program is not trusted: said once per
/// program (remembered in the user's own folder).
fn untrusted_notice(
    project: &Project,
    user_dir: &UserDir,
    shown: &str,
    checked: &[Checked],
) -> Option<String> {
    let mut notice = None;
    for program in checked.iter().filter_map(|c| c.untrusted.as_ref()) {
        let key = format!("untrusted program {}", program.display());
        let key = NoticeKey::new(&key);
        if !user_dir.notice_given(&project.root, &key) {
            let _ = user_dir.remember_notice(&project.root, &key);
            notice = Some(words::untrusted_check(shown, program));
        }
    }
    notice
}

/// Logs each check of the user's own loop (at `stage`) and records the results in it.
fn record(
    call: &mut HookCall,
    project: &Project,
    stage: &str,
    shown: &str,
    checked: &[Checked],
    results: &[(String, CheckResult)],
) -> anyhow::Result<()> {
    let session = call.session();
    let session = session.as_deref();
    let now = now();
    for check in checked {
        let entry = LogEntry {
            action: Action::Check,
            stage: stage.to_owned(),
            iteration: 0,
            detail: record_check_log(&check.label, shown, &check.result),
        };
        let mut event = Event::of(entry, now, session);
        event.iteration = None;
        event.ms = Some(check.millis);
        if !session::log(project, &event, &mut |m: &str| ui::warn(call.stderr, m)) {
            break;
        }
    }
    session::change_own_loop(
        project,
        call.env,
        |state| record_check(state, session, shown, results),
        &mut |m: &str| ui::warn(call.stderr, m),
    )?;
    Ok(())
}

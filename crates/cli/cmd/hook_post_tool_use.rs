//! `pagent hook post-tool-use`: backpressure. After an edit tool writes a file, check it
//! and hand problems straight back to the model as `additionalContext`.
//!
//! This hook runs after every tool call of every session, so the common case must cost
//! no more than starting a process: with no state file (and no user config that turns
//! checks on everywhere) it returns before reading stdin. Checks run only for the
//! session that owns an active, sealed loop, or everywhere when the user's own config
//! says `"always": true`. Like the Stop hook it fails open: an error is reported on
//! stderr and the tool's result stands.

#![allow(clippy::print_stdout)]

use pagent_engine::backpressure::{BackpressureConfig, CheckResult, render_feedback};
use pagent_engine::{Driver, seal};
use pagent_protocol::{HookOutput, HookSpecificOutput};

use crate::args::Global;
use crate::backpressure::{display, run_checks};
use crate::cmd::{now, read_hook_input};
use crate::config;
use crate::env::Env;
use crate::eventlog::{Event, append_event};
use crate::exit::ExitStatus;
use crate::project::{self, Project, STATE_FILE};
use crate::{secret, store, ui};

/// The tools that write files, and the input field naming the file.
const EDIT_TOOLS: &[(&str, &str)] = &[
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

pub fn run(global: &Global, env: &Env) -> ExitStatus {
    let user_config = config::user_config_path(env.config_dir.as_deref());
    if let Some(root) = project::root_from_flag_or_env(global, env)
        && !root.join(STATE_FILE).exists()
        && !user_config.as_deref().is_some_and(std::path::Path::exists)
    {
        return ExitStatus::Success;
    }
    match check_edit(global, env) {
        Ok(Some(context)) => {
            let output = HookOutput {
                hook_specific_output: Some(HookSpecificOutput {
                    hook_event_name: "PostToolUse".into(),
                    additional_context: Some(context),
                }),
                ..HookOutput::default()
            };
            println!("{}", serde_json::to_string(&output).unwrap_or_default());
            ExitStatus::Success
        }
        Ok(None) => ExitStatus::Success,
        Err(err) => {
            ui::report(&err.context("the PostToolUse hook failed; the edit was not checked"));
            ExitStatus::Failure
        }
    }
}

/// The feedback for the edited file, or `None` when there is nothing to say.
fn check_edit(global: &Global, env: &Env) -> anyhow::Result<Option<String>> {
    let input = read_hook_input()?;
    let Some(field) = EDIT_TOOLS
        .iter()
        .find(|(tool, _)| input.tool_name.as_deref() == Some(*tool))
        .map(|(_, f)| *f)
    else {
        return Ok(None);
    };
    let Some(file) = input
        .tool_input
        .as_ref()
        .and_then(|t| t.get(field))
        .and_then(|v| v.as_str())
    else {
        return Ok(None);
    };
    let project = Project::resolve(global, env, input.cwd.as_deref())?;
    let session = input.session_id.clone().or_else(|| env.session_id.clone());

    let user = match config::user_config_path(env.config_dir.as_deref())
        .map(|p| config::read_config(&p))
    {
        Some(Ok(file)) => file.and_then(|f| f.backpressure).unwrap_or_default(),
        Some(Err(err)) => {
            ui::warn(&format!("{err:#}; using the default checks"));
            BackpressureConfig::default()
        }
        None => BackpressureConfig::default(),
    };
    // A loop this session owns: its sealed settings apply over the user's.
    let state = store::read_state(&project)
        .ok()
        .flatten()
        .filter(|s| s.is_active());
    let owned = state.filter(|s| {
        let session_ok =
            s.driver == Driver::Loop || s.session_id.is_none() || s.session_id == session;
        session_ok
            && secret::read_secret(env.config_dir.as_deref())
                .is_some_and(|k| seal::verify(s, &project.seal_key(), &k))
    });
    let (config, stage) = match &owned {
        Some(state) => (
            user.clone()
                .overlaid(&state.backpressure.clone().unwrap_or_default()),
            Some(state.current().name.clone()),
        ),
        None if user.always => (user, None),
        None => return Ok(None),
    };

    let path = std::path::Path::new(file);
    let path = if path.is_absolute() {
        path.to_path_buf()
    } else {
        project.root.join(path)
    };
    let Ok(real) = path.canonicalize() else {
        return Ok(None);
    };
    if !real.starts_with(&project.root) || !real.is_file() {
        return Ok(None);
    }
    let Some(ext) = real.extension().map(|e| e.to_string_lossy().into_owned()) else {
        return Ok(None);
    };
    let specs = config.checks_for(&ext);
    if specs.is_empty() {
        return Ok(None);
    }
    let rel = display(&project.root, &real);
    let checked = run_checks(&project.root, &real, &specs, env.path.as_deref());
    let ts = now().to_string();
    for check in &checked {
        let outcome = match &check.result {
            CheckResult::Passed => "passed".to_owned(),
            CheckResult::Failed(_) => "failed".to_owned(),
            CheckResult::TimedOut { after_secs, .. } => format!("timed out after {after_secs} s"),
            CheckResult::Skipped(why) => format!("skipped: {why}"),
        };
        let event = Event {
            ts: ts.clone(),
            action: "check".into(),
            session_id: session.clone(),
            stage: stage.clone(),
            iteration: None,
            detail: format!("{} {rel}: {outcome}", check.label),
            ms: Some(check.millis),
        };
        if let Err(err) = append_event(&project, &event) {
            ui::warn(&format!("cannot append to the event log: {err:#}"));
            break;
        }
    }
    let results: Vec<(String, CheckResult)> =
        checked.into_iter().map(|c| (c.label, c.result)).collect();
    Ok(render_feedback(&rel, &results))
}

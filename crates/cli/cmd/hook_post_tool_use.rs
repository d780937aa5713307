//! `pagent hook post-tool-use`: backpressure. After an edit tool writes a file, check it
//! and hand problems straight back to the model as `additionalContext`.
//!
//! This hook runs after every tool call of every session, so the common case must cost
//! no more than starting a process: with no state file (and no user config that turns
//! checks on everywhere) it returns before reading stdin. Checks run only for the
//! session that owns an active, sealed loop, or everywhere when the user's own config
//! says `"always": true`. Like the Stop hook it fails open: an error is reported on
//! stderr and the tool's result stands. A check that would run the project's own code is
//! skipped unless the user trusted it; the hook says so once (to the user, remembered in
//! their own folder), then stays quiet. Nothing is written into a project whose state is
//! not the user's own.

use std::io::Write;
use std::path::Path;

use pagent_engine::backpressure::{BackpressureConfig, CheckResult, render_feedback};
use pagent_engine::{Driver, FailedCheck, State};
use pagent_protocol::{HookOutput, HookSpecificOutput};

use crate::cli::args::Global;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::io::{Io, now, read_hook_input};
use crate::store::eventlog::{Event, append_event};
use crate::store::project::{self, Project, STATE_FILE};
use crate::store::{door, user};
use crate::world::backpressure::run_checks;
use crate::{cli::ui, store, store::config, store::consent};

/// What the hook has to say: context for the model, a notice for the user.
#[derive(Debug, Default)]
struct Said {
    context: Option<String>,
    notice: Option<String>,
}

/// The tools that write files, and the input field naming the file.
const EDIT_TOOLS: &[(&str, &str)] = &[
    ("Write", "file_path"),
    ("Edit", "file_path"),
    ("MultiEdit", "file_path"),
    ("NotebookEdit", "notebook_path"),
];

pub fn run(global: &Global, env: &Env, io: &mut Io) -> ExitStatus {
    let user_config = config::user_config_path(env.config_dir.as_deref());
    if let Some(root) = project::root_from_flag_or_env(global, env)
        && !door::exists_no_follow(&root.join(STATE_FILE))
        && !user_config.as_deref().is_some_and(door::exists_no_follow)
    {
        return ExitStatus::Success;
    }
    match check_edit(global, env, io) {
        Ok(said) => {
            let output = HookOutput {
                hook_specific_output: said.context.map(|context| HookSpecificOutput {
                    hook_event_name: "PostToolUse".into(),
                    additional_context: Some(context),
                }),
                system_message: said.notice,
                ..HookOutput::default()
            };
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
                &err.context("the PostToolUse hook failed; the edit was not checked"),
            );
            ExitStatus::Failure
        }
    }
}

/// The feedback for the edited file, and any notice for the user.
fn check_edit(global: &Global, env: &Env, io: &mut Io) -> anyhow::Result<Said> {
    let input = read_hook_input(io.stdin)?;
    let Some(field) = EDIT_TOOLS
        .iter()
        .find(|(tool, _)| input.tool_name.as_deref() == Some(*tool))
        .map(|(_, f)| *f)
    else {
        return Ok(Said::default());
    };
    let Some(file) = input
        .tool_input
        .as_ref()
        .and_then(|t| t.get(field))
        .and_then(|v| v.as_str())
    else {
        return Ok(Said::default());
    };
    let project = Project::resolve(global, env, input.cwd.as_deref())?;
    let session = input.session_id.clone();

    let user = match config::user_config_path(env.config_dir.as_deref())
        .map(|p| config::read_config(&p))
    {
        Some(Ok(file)) => file.and_then(|f| f.backpressure).unwrap_or_default(),
        Some(Err(err)) => {
            ui::warn(io.stderr, &format!("{err:#}; using the default checks"));
            BackpressureConfig::default()
        }
        None => BackpressureConfig::default(),
    };
    // A loop this session owns: its sealed settings apply over the user's.
    let config_dir = env.config_dir.as_deref();
    let state = store::read_state(&project)
        .ok()
        .flatten()
        .filter(|s| s.is_active());
    let owned = state.filter(|s| {
        let session_ok =
            s.driver == Driver::Loop || s.session_id.is_none() || s.session_id == session;
        session_ok && store::ownership(&project, config_dir, s) == store::Ownership::Own
    });
    let (config, stage) = match &owned {
        Some(state) => (
            user.clone()
                .overlaid(&state.backpressure.clone().unwrap_or_default()),
            Some(state.current().name.clone()),
        ),
        None if user.always => (user, None),
        None => return Ok(Said::default()),
    };

    let Ok(rel) = consent::rel_in_project(&project, &project.root, Path::new(file)) else {
        return Ok(Said::default());
    };
    if !matches!(project.dir().kind(&rel), Ok(Some((door::Kind::File, _)))) {
        return Ok(Said::default());
    }
    let Some(ext) = rel.extension().map(|e| e.to_string_lossy().into_owned()) else {
        return Ok(Said::default());
    };
    let specs = config.checks_for(&ext);
    if specs.is_empty() {
        return Ok(Said::default());
    }
    let shown = rel.display().to_string();
    let trusted = |program: &Path| consent::program_trusted(&project, config_dir, program);
    let cache = config_dir.map(|d| d.join("cache"));
    let checked = run_checks(
        &project,
        &rel,
        &specs,
        env.path.as_deref(),
        cache.as_deref(),
        &trusted,
    );
    let mut notice = None;
    for program in checked.iter().filter_map(|c| c.untrusted.as_ref()) {
        let key = format!("untrusted program {}", program.display());
        if !user::notice_given(config_dir, &project.root, &key) {
            let _ = user::remember_notice(config_dir, &project.root, &key);
            notice = Some(format!(
                "pagent: a check of {shown} needs {}, which runs the project's own code, and you have not trusted it, \
                 so the check was skipped. Run `pagent trust {}` to allow it (said once).",
                program.display(),
                consent::shell_word(&program.display().to_string())
            ));
        }
    }
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
            detail: format!("{} {shown}: {outcome}", check.label),
            ms: Some(check.millis),
        };
        // Only the user's own loop gets a log: nothing is written for a stranger.
        if owned.is_none() {
            break;
        }
        if let Err(err) = append_event(&project, &event) {
            ui::warn(
                io.stderr,
                &format!("cannot append to the event log: {err:#}"),
            );
            break;
        }
    }
    let results: Vec<(String, CheckResult)> =
        checked.into_iter().map(|c| (c.label, c.result)).collect();
    if owned.is_some() {
        record_latest_check(
            &project,
            config_dir,
            session.as_deref(),
            &shown,
            &results,
            io.stderr,
        )?;
    }
    Ok(Said {
        context: render_feedback(&shown, &results),
        notice,
    })
}

/// Keeps the file's latest check result in the loop's state (Stop-hook loops), where it
/// holds completion back while it fails (see the engine's gate). Written only when it changes: a file
/// that failed and now passes, or a new or different failure.
fn record_latest_check(
    project: &Project,
    config_dir: Option<&Path>,
    session: Option<&str>,
    shown: &str,
    results: &[(String, CheckResult)],
    stderr: &mut dyn Write,
) -> anyhow::Result<()> {
    let failed: Vec<(&str, &str)> = results
        .iter()
        .filter_map(|(label, result)| match result {
            CheckResult::Failed(output) | CheckResult::TimedOut { output, .. } => {
                Some((label.as_str(), output.as_str()))
            }
            CheckResult::Passed | CheckResult::Skipped(_) => None,
        })
        .collect();
    let latest = (!failed.is_empty()).then(|| FailedCheck {
        checks: failed
            .iter()
            .map(|(l, _)| *l)
            .collect::<Vec<_>>()
            .join(", "),
        output: pagent_engine::render::cap_message(
            failed.first().map_or("", |(_, o)| o),
            pagent_engine::backpressure::CHECK_OUTPUT_CAP,
        ),
    });
    let change = |state: &State| {
        // Not for `pagent loop`: its runner applies its own decisions compare-and-swap,
        // and a write from its agent's hook in between would read as a lost race.
        let mine = state.driver == Driver::Hook
            && (state.session_id.is_none() || state.session_id.as_deref() == session);
        if !mine || state.failing_checks.get(shown) == latest.as_ref() {
            return None;
        }
        let mut next = state.clone();
        match &latest {
            Some(failed) => next.failing_checks.insert(shown.to_owned(), failed.clone()),
            None => next.failing_checks.remove(shown),
        };
        Some(next)
    };
    store::update_own_loop(project, config_dir, change, stderr)?;
    Ok(())
}

//! [`decide_post_tool_use`]: backpressure policy for one tool call. Which edits are
//! checked, for whom, under which settings; what the log says about a check; and what the
//! loop remembers of a failure so that its Stop can hold completion back.
//!
//! Checks run for the user's own active loop (sealed, not stale) when the editing session
//! is the loop's, the loop is not claimed yet, or `pagent loop` drives it (its agents'
//! sessions are fresh every iteration); they run everywhere else only when the user's own
//! config says `"always": true`, and then nothing is logged or remembered: nothing is
//! written into a project for a loop that is not the user's. The loop's sealed settings
//! apply over the user's. A failing check is remembered only in a hook-driven loop: the
//! runner applies its own decisions compare-and-swap, and a write from its agent's hook in
//! between would read to it as a lost race.

use super::{Belongs, belongs};
use crate::backpressure::{BackpressureConfig, CHECK_OUTPUT_CAP, CheckResult};
use crate::render::cap_message;
use crate::{FailedCheck, State};

/// What the binary knows about an edit beyond the state.
#[derive(Debug, Clone, Copy)]
pub struct EditEvent<'a> {
    pub session_id: Option<&'a str>,
    /// Whether the state's seal verified with this user's secret (and it is not stale).
    pub seal_valid: bool,
}

/// Check the edited file, under `config`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CheckPlan {
    pub config: BackpressureConfig,
    /// The user's own loop's current stage: the results are logged and remembered. `None`
    /// for a check only the user's `"always"` asked for: nothing is written.
    pub stage: Option<String>,
}

/// Whether and how to check an edit of `event.session_id`, given the project's state (if
/// any) and the user's own settings. `None`: check nothing.
pub fn decide_post_tool_use(
    event: &EditEvent<'_>,
    state: Option<&State>,
    user: &BackpressureConfig,
) -> Option<CheckPlan> {
    let own = state.filter(|state| {
        state.is_active()
            && event.seal_valid
            && matches!(
                belongs(state, event.session_id),
                Belongs::Runner
                    | Belongs::Owner
                    | Belongs::Unclaimed
                    | Belongs::NoSessionId { owner: None }
            )
    });
    match own {
        Some(state) => Some(CheckPlan {
            config: user
                .clone()
                .overlaid(&state.backpressure.clone().unwrap_or_default()),
            stage: Some(state.current().name.clone()),
        }),
        None if user.always => Some(CheckPlan {
            config: user.clone(),
            stage: None,
        }),
        None => None,
    }
}

/// The event log's detail for one check of `file`.
pub fn record_check_log(label: &str, file: &str, result: &CheckResult) -> String {
    let outcome = match result {
        CheckResult::Passed => "passed".to_owned(),
        CheckResult::Failed(_) => "failed".to_owned(),
        CheckResult::TimedOut { after_secs, .. } => format!("timed out after {after_secs} s"),
        CheckResult::Skipped(why) => format!("skipped: {why}"),
    };
    format!("{label} {file}: {outcome}")
}

/// The state to write so that it holds `file`'s latest check results (a failure holds the
/// loop's completion back, a pass forgets it), or `None` when nothing changes or the loop
/// is not the hook's to write (see the module's note on `pagent loop`).
pub fn record_check(
    state: &State,
    session: Option<&str>,
    file: &str,
    results: &[(String, CheckResult)],
) -> Option<State> {
    if !matches!(
        belongs(state, session),
        Belongs::Owner | Belongs::Unclaimed | Belongs::NoSessionId { owner: None }
    ) {
        return None;
    }
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
            .map(|(label, _)| *label)
            .collect::<Vec<_>>()
            .join(", "),
        output: cap_message(
            failed.first().map_or("", |(_, output)| output),
            CHECK_OUTPUT_CAP,
        ),
    });
    if state.failing_checks.get(file) == latest.as_ref() {
        return None;
    }
    let mut next = state.clone();
    match latest {
        Some(failed) => next.failing_checks.insert(file.to_owned(), failed),
        None => next.failing_checks.remove(file),
    };
    Some(next)
}

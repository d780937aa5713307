//! `pagent loop`'s side of budgets: the usage an agent run printed, added to the loop's
//! state before the engine decides, and an iteration's time limit cut to what the time
//! budget has left, so a budget of 30 minutes is not overrun by a 30-minute iteration.

use std::time::Duration;

use pagent_engine::{State, Timestamp};
use pagent_protocol::stream::UsageRecord;

use crate::cli::args::AgentArgs;
use crate::runner::agent::Limits;

/// `state` with a run's usage records added (each priced when the agent gave no cost).
pub(super) fn metered(
    state: &State,
    records: &[UsageRecord],
    agent: &AgentArgs,
    config_dir: Option<&std::path::Path>,
) -> State {
    let model_flag = model_from_args(&agent.agent_args);
    crate::world::usage::add_records(state, records, model_flag.as_deref(), config_dir)
}

/// The model named by `--agent-arg=--model --agent-arg=NAME` (or `-m`, or `--model=NAME`):
/// Codex and OpenCode do not say which model ran in their streams.
fn model_from_args(args: &[String]) -> Option<String> {
    let mut words = args.iter();
    while let Some(word) = words.next() {
        if let Some(name) = word.strip_prefix("--model=") {
            return Some(name.to_owned());
        }
        if word == "--model" || word == "-m" {
            return words.next().cloned();
        }
    }
    None
}

/// `limits` with the iteration timeout cut to the time budget's rest (at least a second).
pub(super) fn within_time_budget(limits: Limits, state: &State, now: Timestamp) -> Limits {
    let Some(budget) = state.budget.max_duration_secs else {
        return limits;
    };
    let used = pagent_engine::budget::worked_secs(state, now);
    let left = Duration::from_secs(budget.saturating_sub(used).max(1));
    Limits {
        iteration_timeout: limits.iteration_timeout.min(left),
        ..limits
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_model_comes_from_the_agent_arguments() {
        let words = |w: &[&str]| w.iter().map(|s| (*s).to_owned()).collect::<Vec<_>>();
        assert_eq!(
            model_from_args(&words(&["--model", "gpt-5"])).as_deref(),
            Some("gpt-5")
        );
        assert_eq!(
            model_from_args(&words(&["-c", "x", "--model=o3"])).as_deref(),
            Some("o3")
        );
        assert_eq!(model_from_args(&words(&["--model"])), None);
        assert_eq!(model_from_args(&[]), None);
    }
}

//! Plans: what `cmd/` hands the runner instead of clap's structs. The command line's
//! flags are read here once, into plain values ([`LoopPlan`], [`ParallelPlan`], the
//! agent's [`Options`]), so nothing below `cmd/` and `setup/` knows clap (an architecture
//! test keeps it so). A loop's start (`pagent loop ralph ...`, `pagent loop run ...`)
//! stays the set-up's own business: the runner holds it as an opaque [`Start`] and hands
//! it back to [`new_loop_state`]. A `pagent parallel` child's plan comes as data, not
//! flags ([`LoopPlan::from_child`], `child_plan.rs`). The way back to flags is only for
//! the command line `pagent parallel --dry-run` shows a person ([`agent_cli`],
//! [`budget_cli`]), tested to parse back into the same plan.

use std::path::PathBuf;

use pagent_engine::{Action, Budget, Driver, State};

use crate::agent::Options;
use crate::cli::args::{
    AgentArgs, BudgetArgs, LoopArgs, LoopStart, ParallelArgs, RalphArgs, ReviewArgs,
};
use crate::cli::env::Env;
use crate::setup::child_plan::ChildPlan;
use crate::store::project::Project;
use crate::store::tuning::Tuning;

/// The agent's options as flags gave them, the user's `tuning` (their config's `loop`
/// section over the defaults) where a flag did not: the command line wins for its run.
pub fn agent_options(args: &AgentArgs, tuning: &Tuning) -> Options {
    Options {
        agent: args.agent,
        command: args.command.clone(),
        agent_bin: args.agent_bin.clone(),
        agent_args: args.agent_args.clone(),
        permission_mode: args.permission_mode.clone(),
        iteration_timeout: args.iteration_timeout.unwrap_or(tuning.iteration_timeout),
        idle_timeout: args.idle_timeout.unwrap_or(tuning.idle_timeout),
        retries: args.retries.unwrap_or(tuning.retries),
        retry_delay: args.retry_delay.unwrap_or(tuning.retry_delay),
        outage_wait: args.outage_wait.unwrap_or(tuning.outage_wait),
        limit_wait: args.limit_wait.unwrap_or(tuning.limit_wait),
        limit_margin: args.limit_margin.unwrap_or(tuning.limit_margin),
        no_limit_wait: args.no_limit_wait,
        sandbox: args.sandbox,
        allow_hosts: args.allow_host.clone(),
    }
}

/// The user's tuning of a loop: their own config's `loop` section over the defaults.
pub fn user_tuning(env: &Env) -> anyhow::Result<Tuning> {
    crate::store::config::read_tuning(&crate::store::user::UserDir::of(env))
}

/// A new loop's start, as given after `pagent loop`: opened only by the set-up.
#[derive(Debug, Clone)]
pub struct Start(LoopStart);

impl Start {
    /// The subcommand that gave this start: `ralph` or `run`.
    pub fn name(&self) -> &'static str {
        match &self.0 {
            LoopStart::Ralph(_) => "ralph",
            LoopStart::Run(_) => "run",
        }
    }

    /// `--trust`, as this start has it (`ralph --trust`, `run --trust`).
    pub fn trust(&self) -> bool {
        match &self.0 {
            LoopStart::Ralph(ralph) => ralph.trust,
            LoopStart::Run(run) => run.trust,
        }
    }
}

/// How a plan of stories is read and checked (`--format`, `--check`).
#[derive(Debug, Clone, Default)]
pub struct PlanOptions {
    pub format: Option<pagent_stories::Format>,
    pub checks: Vec<String>,
}

/// `pagent loop`'s plan.
#[derive(Debug, Clone)]
pub struct LoopPlan {
    pub agent: Options,
    pub stories: Option<PathBuf>,
    pub issues: Option<String>,
    pub plan: PlanOptions,
    pub comment_progress: bool,
    pub trust: bool,
    pub budget: Budget,
    pub max_iterations: Option<u32>,
    pub worktree: Option<String>,
    pub setup: Option<String>,
    pub checkpoint: bool,
    pub push: bool,
    pub pr: bool,
    pub start: Option<Start>,
}

impl LoopPlan {
    pub fn from_args(args: LoopArgs, tuning: &Tuning) -> LoopPlan {
        LoopPlan {
            agent: agent_options(&args.agent, tuning),
            stories: args.stories,
            issues: args.issues,
            plan: PlanOptions {
                format: args.plan.format,
                checks: args.plan.checks,
            },
            comment_progress: args.comment_progress,
            trust: args.trust,
            budget: args.budget.budget(),
            max_iterations: args.max_iterations,
            worktree: args.worktree,
            setup: args.setup,
            checkpoint: args.checkpoint,
            push: args.push,
            pr: args.pr,
            start: args.start.map(Start),
        }
    }

    /// A `pagent parallel` child's plan, read from the file its parent wrote: the agent,
    /// the limits and the task all come from it; only where the loop runs (`--worktree`)
    /// is the command line's.
    pub fn from_child(plan: ChildPlan, worktree: Option<String>) -> LoopPlan {
        let start = plan.start.map(|start| {
            Start(LoopStart::Ralph(RalphArgs {
                prompt: vec![start.task],
                max_iterations: Some(start.max_iterations),
                promise: start.promise,
                no_progress_limit: None,
                budget: BudgetArgs::default(),
                force: start.force,
                trust: start.trust,
                stdin_args: false,
                review: ReviewArgs::default(),
            }))
        });
        LoopPlan {
            agent: plan.agent,
            stories: None,
            issues: None,
            plan: PlanOptions::default(),
            comment_progress: false,
            trust: false,
            budget: plan.budget,
            max_iterations: None,
            worktree,
            setup: None,
            checkpoint: plan.checkpoint,
            push: false,
            pr: false,
            start,
        }
    }

    /// `--trust`, wherever this start has it (`ralph --trust`, `run --trust`, `--prd ...
    /// --trust`).
    pub fn trusts(&self) -> bool {
        self.start.as_ref().map_or(self.trust, Start::trust)
    }
}

/// `pagent parallel`'s plan.
#[derive(Debug, Clone)]
pub struct ParallelPlan {
    pub jobs: u32,
    pub agent: Options,
    pub budget: Budget,
    pub max_iterations: u32,
    pub no_checkpoint: bool,
    pub force: bool,
    pub merge: bool,
    pub merge_only: bool,
    pub into: Option<String>,
    pub check: Option<String>,
    pub json: bool,
    pub trust: bool,
}

impl ParallelPlan {
    pub fn from_args(args: &ParallelArgs, tuning: &Tuning) -> ParallelPlan {
        ParallelPlan {
            jobs: args.jobs,
            agent: agent_options(&args.agent, tuning),
            budget: args.budget.budget(),
            max_iterations: args.max_iterations,
            no_checkpoint: args.no_checkpoint,
            force: args.force,
            merge: args.merge,
            merge_only: args.merge_only,
            into: args.into.clone(),
            check: args.check.clone(),
            json: args.json,
            trust: args.trust,
        }
    }
}

/// A new loop's state from `start` (its task read from stdin when the arguments name
/// none), with the loop-wide budget under the start's own (a limit given after the
/// subcommand wins); whether `--force` was given, and the log's action. `note` hears the
/// set-up's notes.
pub fn new_loop_state(
    project: &Project,
    env: &Env,
    start: &Start,
    outer: Budget,
    (stdin, stdin_is_terminal): (&mut dyn std::io::Read, bool),
    note: &mut dyn FnMut(&str),
) -> anyhow::Result<(State, bool, Action)> {
    let (state, notes, force, action) = match &start.0 {
        LoopStart::Ralph(ralph_args) => {
            let (mut ralph_args, task) = crate::cli::task::resolve(
                ralph_args.clone(),
                stdin,
                stdin_is_terminal,
                "pagent loop ralph",
            )?;
            ralph_args.budget = merged_budget(outer, ralph_args.budget);
            let (state, notes) =
                super::build::ralph(project, env, &ralph_args, task, Driver::Loop)?;
            (state, notes, ralph_args.force, Action::Ralph)
        }
        LoopStart::Run(run_args) => {
            let mut run_args = run_args.clone();
            run_args.budget = merged_budget(outer, run_args.budget);
            let (state, notes, action) =
                match super::build::stories_spec_of(&run_args, Driver::Loop)? {
                    Some(spec) => {
                        let (state, notes) = super::stories::stories(project, env, &spec)?;
                        (state, notes, Action::Stories)
                    }
                    None => {
                        let (state, notes) =
                            super::build::pipeline(project, env, &run_args, Driver::Loop)?;
                        (state, notes, Action::Run)
                    }
                };
            (state, notes, run_args.force, action)
        }
    };
    notes.lines().iter().for_each(|l| note(l));
    Ok((state, force, action))
}

/// `pagent loop --max-tokens N ralph ...` and `pagent loop ralph --max-tokens N ...` both
/// work; a limit given after the subcommand wins.
fn merged_budget(outer: Budget, inner: BudgetArgs) -> BudgetArgs {
    BudgetArgs {
        max_duration: inner.max_duration.or(outer.max_duration_secs),
        max_tokens: inner.max_tokens.or(outer.max_tokens),
        max_cost: inner.max_cost.or(outer.max_cost_microusd),
    }
}

/// Micro-dollars as a person writes dollars: `5`, `2.5`, `0.000001`.
fn dollars(micros: u64) -> String {
    let (whole, frac) = (micros / 1_000_000, micros % 1_000_000);
    if frac == 0 {
        return whole.to_string();
    }
    let frac = format!("{frac:06}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

/// The budget flags of the `pagent parallel` command `--dry-run` prints.
pub fn budget_cli(budget: &pagent_engine::Budget) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(secs) = budget.max_duration_secs {
        out.extend(["--max-duration".to_owned(), format!("{secs}s")]);
    }
    if let Some(tokens) = budget.max_tokens {
        out.extend(["--max-tokens".to_owned(), tokens.to_string()]);
    }
    if let Some(micros) = budget.max_cost_microusd {
        out.extend(["--max-cost".to_owned(), dollars(micros)]);
    }
    out
}

/// The agent flags of the `pagent parallel` command `--dry-run` prints, so that running
/// it runs the same agent the same way: the flags as given (a tuning flag only when it
/// was, since the command run reads the same config).
pub fn agent_cli(args: &AgentArgs) -> Vec<String> {
    let mut out = Vec::new();
    match &args.command {
        Some(line) => out.extend(["--command".to_owned(), line.clone()]),
        None => {
            out.extend(["--agent".to_owned(), args.agent.name().to_owned()]);
        }
    }
    if let Some(bin) = &args.agent_bin {
        out.extend(["--agent-bin".to_owned(), bin.display().to_string()]);
    }
    for arg in &args.agent_args {
        out.push(format!("--agent-arg={arg}"));
    }
    out.extend(["--permission-mode".to_owned(), args.permission_mode.clone()]);
    let secs = |d: Option<std::time::Duration>| d.map(|d| format!("{}s", d.as_secs()));
    for (flag, value) in [
        ("--iteration-timeout", secs(args.iteration_timeout)),
        ("--idle-timeout", secs(args.idle_timeout)),
        ("--retries", args.retries.map(|n| n.to_string())),
        ("--retry-delay", secs(args.retry_delay)),
        ("--outage-wait", secs(args.outage_wait)),
        ("--limit-wait", secs(args.limit_wait)),
        ("--limit-margin", secs(args.limit_margin)),
    ] {
        if let Some(value) = value {
            out.extend([flag.to_owned(), value]);
        }
    }
    if args.no_limit_wait {
        out.push("--no-limit-wait".to_owned());
    }
    if args.sandbox {
        out.push("--sandbox".to_owned());
    }
    for host in &args.allow_host {
        out.push(format!("--allow-host={host}"));
    }
    out
}

#[cfg(test)]
mod tests {
    use clap::Parser;

    use super::*;
    use crate::cli::args::{Cli, Command};

    fn loop_args(flags: &[String]) -> LoopArgs {
        let argv = ["pagent", "loop"]
            .into_iter()
            .map(str::to_owned)
            .chain(flags.iter().cloned());
        match Cli::try_parse_from(argv).unwrap().command {
            Command::Loop(args) => *args,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn issue_22_the_printed_flags_parse_back_into_the_same_plan() {
        for flags in [
            vec![],
            vec![
                "--agent",
                "codex",
                "--agent-bin",
                "/opt/codex",
                "--agent-arg=--model",
                "--agent-arg=o3",
            ],
            vec![
                "--command",
                "my-agent --fast",
                "--retries",
                "0",
                "--no-limit-wait",
            ],
            vec![
                "--agent",
                "opencode",
                "--iteration-timeout",
                "90s",
                "--idle-timeout",
                "1h",
            ],
            vec![
                "--max-duration",
                "2h",
                "--max-tokens",
                "5000000",
                "--max-cost",
                "2.500001",
            ],
        ] {
            let given = loop_args(&flags.iter().map(|f| (*f).to_owned()).collect::<Vec<_>>());
            let mut again = agent_cli(&given.agent);
            again.extend(budget_cli(&given.budget.budget()));
            // The command printed runs with the same config as the one that printed it.
            let tuning = Tuning {
                retries: 7,
                ..Tuning::default()
            };
            let plan = LoopPlan::from_args(given, &tuning);
            let back = LoopPlan::from_args(loop_args(&again), &tuning);
            assert_eq!(back.agent, plan.agent, "{flags:?} -> {again:?}");
            assert_eq!(back.budget, plan.budget, "{flags:?} -> {again:?}");
        }
    }

    #[test]
    fn the_agent_options_reach_the_command_the_dry_run_prints() {
        let flags = "--agent codex --agent-bin /opt/codex --agent-arg=--model --agent-arg=o3 \
                     --permission-mode acceptEdits --iteration-timeout 60s --idle-timeout 30s \
                     --retries 1 --retry-delay 2s --outage-wait 900s --limit-wait 600s \
                     --limit-margin 5s --no-limit-wait --sandbox \
                     --allow-host=registry.example.org";
        let given: Vec<String> = flags.split_whitespace().map(str::to_owned).collect();
        assert_eq!(
            agent_cli(&loop_args(&given).agent).join(" "),
            given.join(" ")
        );
    }

    /// Issue 31, item 4: the tuning the user did not give on the command line stays out of
    /// the printed command, which reads the same config when it runs.
    #[test]
    fn issue_31_the_dry_run_prints_only_the_tuning_flags_given() {
        let cli = agent_cli(&loop_args(&["--retries".to_owned(), "1".to_owned()]).agent);
        assert_eq!(
            cli.join(" "),
            "--agent claude --permission-mode acceptEdits --retries 1"
        );
    }

    #[test]
    fn the_budget_reaches_the_printed_command_in_a_form_it_parses_back() {
        let budget = pagent_engine::Budget {
            max_duration_secs: Some(5_400),
            max_tokens: Some(2_000_000),
            max_cost_microusd: Some(2_500_001),
        };
        let cli = budget_cli(&budget);
        assert_eq!(
            cli.join(" "),
            "--max-duration 5400s --max-tokens 2000000 --max-cost 2.500001"
        );
        assert_eq!(pagent_engine::budget::parse_duration(&cli[1]), Ok(5_400));
        assert_eq!(pagent_engine::budget::parse_tokens(&cli[3]), Ok(2_000_000));
        assert_eq!(pagent_engine::budget::parse_cost(&cli[5]), Ok(2_500_001));
        assert!(budget_cli(&pagent_engine::Budget::default()).is_empty());
        // Dollars as a person writes them, each parsing back to the same amount.
        for (micros, shown) in [(5_000_000, "5"), (2_500_000, "2.5"), (1, "0.000001")] {
            let cli = budget_cli(&pagent_engine::Budget {
                max_cost_microusd: Some(micros),
                ..pagent_engine::Budget::default()
            });
            assert_eq!(cli, ["--max-cost", shown]);
            assert_eq!(pagent_engine::budget::parse_cost(shown), Ok(micros));
        }
    }
}

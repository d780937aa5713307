//! One child loop: the `pagent loop --json --worktree NAME ralph ...` command line that
//! runs a task, and the threads that forward its output to the orchestrator.
//!
//! Every child gets the agent options `pagent parallel` was given ([`agent_cli`]), so all
//! tasks run the same agent the same way. Each pipe has its own reader thread feeding one
//! channel; the stdout reader's end is how the parent learns that a child is exiting.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::sync::mpsc;
use std::thread;

use anyhow::Context;

use super::tasks::Task;
use crate::cli::args::{AgentArgs, AgentName, ParallelArgs};
use crate::process::{Input, Launch, Program, Running, SearchPath, Streams};
use crate::store::project::Project;

pub(super) enum Msg {
    Line(usize, String),
    Stderr(usize, String),
    /// The child closed its stdout: it is ending.
    Exit(usize),
}

/// How a child takes up its task's worktree.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Mode {
    /// A new ralph loop for the task (`force`: replacing one that is active there).
    Start { force: bool },
    /// The loop active in the worktree continues: an interrupted task, or a conflict
    /// resolution the merge queue set up there.
    Resume,
}

#[allow(clippy::too_many_arguments)]
pub(super) fn spawn(
    exe: &Path,
    search: &SearchPath,
    project: &Project,
    args: &ParallelArgs,
    task: &Task,
    mode: Mode,
    i: usize,
    tx: &mpsc::Sender<Msg>,
) -> anyhow::Result<Running> {
    // In the terminal's process group: Ctrl-C reaches each loop, which stops cleanly.
    let mut command = Launch::new(Program::at(exe.to_path_buf()), &project.root, search)
        .in_callers_group()
        .arg("--project")
        .arg(&project.root)
        .args(["loop", "--json", "--worktree", &task.name])
        .args(agent_cli(&args.agent));
    if !args.no_checkpoint {
        command = command.arg("--checkpoint");
    }
    if let Mode::Start { force } = mode {
        let max = task
            .max_iterations
            .unwrap_or(args.max_iterations)
            .to_string();
        command = command.arg("ralph");
        if args.trust {
            command = command.arg("--trust");
        }
        if force {
            command = command.arg("--force");
        }
        command = command.args(budget_cli(&args.budget));
        command = command.args([
            "--max-iterations",
            &max,
            "--promise",
            task.promise.as_deref().unwrap_or("DONE"),
            "--",
            &task.task,
        ]);
    }
    let mut child = command
        .env(crate::cli::env::PAGENT_PARALLEL, "1")
        .spawn(Streams {
            stdin: Input::Null,
            output: true,
        })
        .with_context(|| format!("cannot start the loop for task {}", task.name))?;
    forward(child.take_stdout(), tx.clone(), i, Msg::Line, true);
    forward(child.take_stderr(), tx.clone(), i, Msg::Stderr, false);
    Ok(child)
}

/// Sends each line of `pipe`; the stdout reader also reports the exit when it closes.
fn forward(
    pipe: Option<impl Read + Send + 'static>,
    tx: mpsc::Sender<Msg>,
    i: usize,
    wrap: fn(usize, String) -> Msg,
    report_exit: bool,
) {
    let Some(pipe) = pipe else { return };
    thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if tx.send(wrap(i, format!("{line}\n"))).is_err() {
                return;
            }
        }
        if report_exit {
            let _ = tx.send(Msg::Exit(i));
        }
    });
}

/// The budget flags for a child's loop: each task gets the same limits.
pub fn budget_cli(budget: &crate::cli::args::BudgetArgs) -> Vec<String> {
    let mut out = Vec::new();
    if let Some(secs) = budget.max_duration {
        out.extend(["--max-duration".to_owned(), format!("{secs}s")]);
    }
    if let Some(tokens) = budget.max_tokens {
        out.extend(["--max-tokens".to_owned(), tokens.to_string()]);
    }
    if let Some(micros) = budget.max_cost {
        let cost = format!("{}.{:06}", micros / 1_000_000, micros % 1_000_000);
        out.extend(["--max-cost".to_owned(), cost]);
    }
    out
}

/// The loop command line for `args`, so every child runs the same agent the same way.
pub fn agent_cli(args: &AgentArgs) -> Vec<String> {
    let mut out = Vec::new();
    match &args.command {
        Some(line) => out.extend(["--command".to_owned(), line.clone()]),
        None => {
            let name = match args.agent {
                AgentName::Claude => "claude",
                AgentName::Codex => "codex",
                AgentName::Opencode => "opencode",
            };
            out.extend(["--agent".to_owned(), name.to_owned()]);
        }
    }
    if let Some(bin) = &args.agent_bin {
        out.extend(["--agent-bin".to_owned(), bin.display().to_string()]);
    }
    for arg in &args.agent_args {
        out.push(format!("--agent-arg={arg}"));
    }
    out.extend([
        "--permission-mode".to_owned(),
        args.permission_mode.clone(),
        "--iteration-timeout".to_owned(),
        format!("{}s", args.iteration_timeout.as_secs()),
        "--idle-timeout".to_owned(),
        format!("{}s", args.idle_timeout.as_secs()),
        "--retries".to_owned(),
        args.retries.to_string(),
        "--retry-delay".to_owned(),
        format!("{}s", args.retry_delay.as_secs()),
        "--limit-wait".to_owned(),
        format!("{}s", args.limit_wait.as_secs()),
        "--limit-margin".to_owned(),
        format!("{}s", args.limit_margin.as_secs()),
    ]);
    if args.no_limit_wait {
        out.push("--no-limit-wait".to_owned());
    }
    out
}

#[cfg(test)]
mod tests {
    use std::time::Duration;

    use super::*;

    #[test]
    fn the_agent_options_reach_every_child() {
        let args = AgentArgs {
            agent: AgentName::Codex,
            command: None,
            agent_bin: Some("/opt/codex".into()),
            agent_args: vec!["--model".into(), "o3".into()],
            permission_mode: "acceptEdits".into(),
            iteration_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(30),
            retries: 1,
            retry_delay: Duration::from_secs(2),
            limit_wait: Duration::from_secs(600),
            limit_margin: Duration::from_secs(5),
            no_limit_wait: true,
        };
        let cli = agent_cli(&args).join(" ");
        assert!(
            cli.starts_with(
                "--agent codex --agent-bin /opt/codex --agent-arg=--model --agent-arg=o3"
            ),
            "{cli}"
        );
        assert!(
            cli.contains("--iteration-timeout 60s --idle-timeout 30s --retries 1 --retry-delay 2s"),
            "{cli}"
        );
        assert!(
            cli.ends_with("--limit-wait 600s --limit-margin 5s --no-limit-wait"),
            "{cli}"
        );
    }

    #[test]
    fn the_budget_reaches_every_child_in_a_form_it_parses_back() {
        let budget = crate::cli::args::BudgetArgs {
            max_duration: Some(5_400),
            max_tokens: Some(2_000_000),
            max_cost: Some(2_500_001),
        };
        let cli = budget_cli(&budget);
        assert_eq!(
            cli.join(" "),
            "--max-duration 5400s --max-tokens 2000000 --max-cost 2.500001"
        );
        assert_eq!(pagent_engine::budget::parse_duration(&cli[1]), Ok(5_400));
        assert_eq!(pagent_engine::budget::parse_tokens(&cli[3]), Ok(2_000_000));
        assert_eq!(pagent_engine::budget::parse_cost(&cli[5]), Ok(2_500_001));
        assert!(budget_cli(&crate::cli::args::BudgetArgs::default()).is_empty());
    }
}

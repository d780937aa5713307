//! `pagent ralph TASK`: start a Ralph loop, one task re-prompted until the model writes
//! `<promise>TEXT</promise>`. The task comes from the arguments, from stdin, or (for the
//! slash command) from stdin with flags mixed in (`--stdin-args`); it is stored byte for
//! byte, whatever quotes, `$()`, backticks or newlines it holds.

#![allow(clippy::print_stdout)]

use anyhow::bail;
use pagent_engine::{Condition, Driver, SetupOptions, State};

use crate::args::{Global, RalphArgs};
use crate::cmd::{now, read_stdin_text};
use crate::env::Env;
use crate::exit::ExitStatus;
use crate::project::Project;
use crate::{fingerprint, setup, stdin_args};

pub fn run(global: &Global, env: &Env, args: RalphArgs) -> anyhow::Result<ExitStatus> {
    let slash = args.stdin_args;
    let (args, task) = resolve_task(args)?;
    let project = Project::resolve(global, env, None)?;
    let (state, notes) = build_state(&project, env, &args, task, Driver::Hook)?;
    let install = if slash {
        setup::install_state_from_slash
    } else {
        setup::install_state
    };
    let state = install(
        &project,
        env.config_dir.as_deref(),
        &state,
        args.force,
        "ralph",
    )?;

    let promise = state.current().exit_when.promise().unwrap_or("DONE");
    println!(
        "pagent: started a Ralph loop: up to {} iterations{}. {}",
        state.max_iterations,
        setup::no_progress_words(&state),
        setup::HOW_TO_STOP
    );
    println!(
        "Work on the task below. Each time you stop, pagent gives you the task again until your final message ends \
         with a line that holds nothing but <promise>{promise}</promise>. Write it only when the task is truly complete, \
         never just to leave the loop."
    );
    notes.print();
    println!();
    println!("{}", setup::header(&state));
    println!();
    println!("{}", state.current().prompt);
    Ok(ExitStatus::Success)
}

/// The arguments and the task, from argv, stdin, or slash-command text on stdin.
pub fn resolve_task(args: RalphArgs) -> anyhow::Result<(RalphArgs, String)> {
    let (args, task) = if args.stdin_args {
        let line = stdin_args::parse_ralph_line(&read_stdin_text()?);
        (
            stdin_args::parse_words("/pagent:ralph", line.flags)?,
            line.task,
        )
    } else if args.prompt.is_empty() {
        let text = read_stdin_text()?;
        (args, text.trim_end_matches(['\n', '\r']).to_owned())
    } else {
        let task = args.prompt.join(" ");
        (args, task)
    };
    if task.trim().is_empty() {
        bail!(
            "give the task, e.g. `pagent ralph \"Make the tests pass\"` (or /pagent:ralph Make the tests pass)"
        );
    }
    Ok((args, task))
}

/// A new ralph state for `task`, validated, not yet written.
pub fn build_state(
    project: &Project,
    env: &Env,
    args: &RalphArgs,
    task: String,
    driver: Driver,
) -> anyhow::Result<(State, setup::Notes)> {
    let promise = args.promise.trim().to_owned();
    // Validate the promise exactly as a workflow's would be.
    Condition::from_json(
        &serde_json::json!({ "promise_in_output": promise }),
        "--promise",
    )
    .map_err(|e| anyhow::anyhow!("--promise: {}", e.reason))?;
    let mut notes = setup::Notes::default();
    let backpressure = setup::consented_config(
        project,
        env.config_dir.as_deref(),
        None,
        args.trust,
        &mut notes,
    )?;
    let options = SetupOptions {
        max_iterations: args.max_iterations,
        no_progress_limit: args.no_progress_limit,
        session_id: if driver == Driver::Hook {
            env.session_id.clone()
        } else {
            None
        },
        backpressure,
        driver,
        ..SetupOptions::default()
    };
    let state = State::new_ralph(
        task,
        promise,
        options,
        fingerprint::fingerprint(project),
        now(),
    );
    Ok((state, notes))
}

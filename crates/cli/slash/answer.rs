//! The UserPromptExpansion hook's answer to each of pagent's slash commands (see the
//! module above for what each kind of answer does on screen).
//!
//! Every answer is decided here and worded here; an error is pagent's one sentence
//! (`pagent: error: ...`, then what was not done), shown on screen by the block itself.

use std::path::Path;

use pagent_engine::notice::By;
use pagent_engine::{State, Whose, whose_loop};

use super::start::{self, Origin};
use super::{Command, parallel_slash, ralph_slash, run_slash};
use crate::cli::args::ParallelArgs;
use crate::cli::env::Env;
use crate::cli::hint::Hinted;
use crate::cli::stdin_args::{self, Parsed};
use crate::cli::ui::Style;
use crate::session::control::{self, Resumed};
use crate::store::project::Project;
use crate::store::user::UserDir;
use crate::world::driven::Driven;
use crate::world::report;

/// What the hook prints.
#[derive(Debug, PartialEq, Eq)]
pub enum Answer {
    /// Block the command: the text is shown on screen, the model gets nothing and the
    /// command's body does not run.
    Show(String),
    /// Let the command expand (its `!` line runs, the model takes a turn), with a line on
    /// screen ("UserPromptExpansion says: ...") when there is one.
    Pass(Option<String>),
}

/// A slash command as the hook got it.
#[derive(Debug, Clone, Copy)]
pub struct Asked<'a> {
    pub command: Command,
    /// As typed, without its slash: `ralph`, `pagent:status`.
    pub name: &'a str,
    /// The text after the name.
    pub args: &'a str,
    /// The whole prompt as typed.
    pub prompt: &'a str,
    pub session: Option<&'a str>,
    pub transcript: Option<&'a Path>,
}

/// The answer to `asked`, in `project`, with `env` as the hook's (its session and folder
/// already the hook input's).
pub fn answer(project: &Project, env: &Env, asked: &Asked<'_>) -> Answer {
    let name = format!("/{}", asked.name);
    let result = match asked.command {
        Command::Ralph => start_ralph(project, env, &name, asked),
        Command::Run => start_run(project, env, &name, asked),
        Command::Parallel => plan_parallel(project, env, &name, asked.args),
        Command::Status | Command::Cancel | Command::Resume if asked.args.trim() == "--help" => {
            Ok(Answer::Show(help(asked.command, &name)))
        }
        Command::Status | Command::Cancel | Command::Resume if !asked.args.trim().is_empty() => {
            Err(Hinted::new(format!(
                "{name} takes no arguments (you gave: {})",
                asked.args.trim()
            ))
            .hint(format!("`{name} --help` says what it does"))
            .into())
        }
        Command::Status => Ok(status(project, env, asked)),
        Command::Cancel => control::cancel(project, env, by(asked.session), &mut |_: &str| {})
            .map(|done| Answer::Show(done.message(&project.root))),
        Command::Resume => resume(project, env, asked.session),
    };
    result.unwrap_or_else(|err| Answer::Show(error_text(asked.command, &err)))
}

/// `pagent: error: ...` with its causes, then what was not done.
pub fn error_text(command: Command, err: &anyhow::Error) -> String {
    let mut text = format!("pagent: error: {err}");
    for cause in err.chain().skip(1) {
        text.push_str(&format!("\n  caused by: {cause}"));
    }
    text.push('\n');
    text.push_str(match command {
        Command::Ralph | Command::Run | Command::Parallel => "Nothing was started.",
        Command::Cancel => "Nothing was cancelled.",
        Command::Resume => "Nothing was resumed.",
        Command::Status => "Nothing was changed.",
    });
    text
}

fn start_ralph(
    project: &Project,
    env: &Env,
    name: &str,
    asked: &Asked<'_>,
) -> anyhow::Result<Answer> {
    let (args, task) = match start::parse_ralph(ralph_slash(name), asked.args)? {
        Parsed::Help(help) => return Ok(Answer::Show(help)),
        Parsed::Args(parsed) => parsed,
    };
    let started = start::ralph(project, env, &args, task, &handoff(asked))?;
    Ok(Answer::Pass(Some(started.shown())))
}

fn start_run(
    project: &Project,
    env: &Env,
    name: &str,
    asked: &Asked<'_>,
) -> anyhow::Result<Answer> {
    let args = match start::parse_run(run_slash(name), asked.args)? {
        Parsed::Help(help) => return Ok(Answer::Show(help)),
        Parsed::Args(args) => args,
    };
    let started = start::run(project, env, &args, &handoff(asked))?;
    Ok(Answer::Pass(Some(started.shown())))
}

fn handoff(asked: &Asked<'_>) -> Origin {
    Origin {
        slash: true,
        handoff: Some(start::handoff_key(asked.args)),
        transcript: asked.transcript.map(Path::to_path_buf),
    }
}

/// `/pagent:parallel`: its help and its errors here; the plan and the run are the
/// command's own (its `!` line plans, the model starts the run in the background).
fn plan_parallel(project: &Project, env: &Env, name: &str, text: &str) -> anyhow::Result<Answer> {
    anyhow::ensure!(
        !text.trim().is_empty(),
        "name the tasks file, e.g. `{name} tasks.txt -j 3`"
    );
    let args: ParallelArgs =
        match stdin_args::parse_words(parallel_slash(name), stdin_args::values(text))? {
            Parsed::Help(help) => return Ok(Answer::Show(help)),
            Parsed::Args(args) => args,
        };
    anyhow::ensure!(
        crate::store::git::discover(&project.root).is_some(),
        "pagent parallel needs a git repository (each task gets a worktree)"
    );
    let Some(file) = &args.tasks else {
        anyhow::bail!("name the tasks file, e.g. `{name} tasks.txt -j 3`")
    };
    let cwd = env
        .current_dir
        .clone()
        .unwrap_or_else(|| project.root.clone());
    anyhow::ensure!(
        args.merge || args.merge_only || (args.into.is_none() && args.check.is_none()),
        "--into and --check go with --merge or --merge-only"
    );
    let (tasks, _) =
        crate::setup::tasks::read_tasks_and_bytes(&cwd.join(file), &project.root, args.format)?;
    Ok(Answer::Pass(Some(format!(
        "pagent parallel: {} from {}, {} at a time; Claude starts them in the background.",
        pagent_engine::count(tasks.len() as u64, "task"),
        file.display(),
        args.jobs
    ))))
}

/// The status. Shown by a block, unless the loop is this session's, running, and the user
/// sent the command at once while the model worked (2.1.330's send-now cuts the turn):
/// then the command expands and its `!` line sets the model going again, so asking never
/// stalls the loop. A status queued while the model worked and sent by Claude Code after
/// Esc is not that: Esc stays an interrupt, and the status is shown at rest.
fn status(project: &Project, env: &Env, asked: &Asked<'_>) -> Answer {
    let state = crate::store::read_state(project).ok().flatten();
    let at_work = state.as_ref().is_some_and(|state| {
        this_sessions_running_loop(project, env, state, asked.session)
            && asked.transcript.is_some_and(|t| {
                use crate::world::transcript::{SETTLE, sent_at_once};
                sent_at_once(t, asked.prompt, SETTLE).unwrap_or(false)
            })
    });
    let text = status_text(project, env);
    if at_work {
        return Answer::Pass(Some(text));
    }
    let idle = state
        .as_ref()
        .is_some_and(|s| this_sessions_running_loop(project, env, s, asked.session));
    if idle {
        return Answer::Show(format!(
            "{text}\nClaude is not working on it now: /pagent:resume sets it going again, \
             /pagent:cancel ends it."
        ));
    }
    Answer::Show(text)
}

/// An active, unpaused loop of the user's, owned by `session`.
fn this_sessions_running_loop(
    project: &Project,
    env: &Env,
    state: &State,
    session: Option<&str>,
) -> bool {
    state.is_active()
        && state.paused.is_none()
        && session.is_some()
        && whose_loop(state, session) == Whose::This
        && crate::store::ownership(project, &UserDir::of(env), state)
            == crate::store::Ownership::Own
}

/// The loop's status as `pagent status` prints it, without colour.
pub fn status_text(project: &Project, env: &Env) -> String {
    let Ok(Some(state)) = crate::store::read_state(project) else {
        return format!(
            "pagent: no loop in {} (start one with /pagent:run PRD or /pagent:ralph TASK).",
            crate::cli::ui::printable(&project.root.display().to_string(), false)
        );
    };
    let sealed =
        crate::store::ownership(project, &UserDir::of(env), &state) == crate::store::Ownership::Own;
    let mut out = Vec::new();
    let _ = report::print_human(
        &report::build(project, &UserDir::of(env), &state, sealed),
        Style::for_stdout(true, false),
        &mut out,
    );
    String::from_utf8_lossy(&out).trim_end().to_owned()
}

/// The status in one line, for a Stop that answers a `/pagent-status` typed while Claude
/// works: the report's headline and the current stage's row (the whole report would push
/// the re-prompt it comes with off an 80x24 screen).
pub fn status_line(project: &Project, env: &Env) -> String {
    let text = status_text(project, env);
    let mut lines = text.lines();
    let head = lines.next().unwrap_or_default().to_owned();
    let current = lines
        .find(|l| l.trim_start().starts_with("current"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "));
    match current {
        Some(row) => format!("{head} · {row}"),
        None => head,
    }
}

fn resume(project: &Project, env: &Env, session: Option<&str>) -> anyhow::Result<Answer> {
    let done = control::resume(project, env, by(session), &mut |_: &str| {})?;
    match &done {
        // The session's model takes the loop up: the command expands and hands it over.
        Resumed::Done {
            driven: Driven::Session,
            ..
        } => Ok(Answer::Pass(Some(done.message()))),
        // A runner's loop goes on in its runner: nothing for this session's model to do.
        Resumed::Done { .. } | Resumed::NoActiveLoop | Resumed::SessionGone { .. } => {
            Ok(Answer::Show(done.message()))
        }
        Resumed::OtherSession { .. } | Resumed::NotYours => anyhow::bail!("{}", done.message()),
    }
}

/// Who asks: the session that typed the command (a hook input always names one).
fn by(session: Option<&str>) -> By<'_> {
    session.map_or(By::Terminal, By::Session)
}

/// `--help` of the commands that take no arguments.
fn help(command: Command, name: &str) -> String {
    let what = match command {
        Command::Status => {
            "Show the pagent loop in this project: each stage, its progress, iterations and \
             outcome. It never pauses or changes the loop. Typed while Claude works, it is \
             answered at Claude's next stop and the loop goes on."
        }
        Command::Cancel => {
            "End the pagent loop in this project: Claude may stop again. Typed while Claude \
             works, it ends the loop at Claude's next stop."
        }
        _ => {
            "Set the pagent loop going again: after you wrote a message in its session (which \
             paused it), after `pagent pause`, or after Esc interrupted Claude."
        }
    };
    format!("{what}\n\nUsage: {name}")
}

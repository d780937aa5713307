//! Starting a loop from a slash command or a shell: the set-up, and its words for the user
//! and for the model, in one place for `/ralph`, `/pagent-run`, `pagent ralph` and
//! `pagent run`.
//!
//! A set-up's output has two readers. The user reads the start line (what was started,
//! its limits, how to stop it), a replaced loop's notice and set-up's notes: in Claude
//! Code the UserPromptExpansion hook shows them as its `systemMessage`. The model reads
//! how the loop works, where it is and its first prompt: the command's `!` line prints it.
//! A shell prints both.
//!
//! The hand-off: the hook sets the loop up and marks the state with a digest of the
//! command's text ([`handoff_key`]); the command's `!` line, which runs right after with
//! the same text, finds the mark ([`take_handoff`]), clears it and prints the model's part
//! instead of setting the loop up a second time. Without the mark (no hook ran) the `!`
//! line sets the loop up itself and asks the model to pass the start line on.

use pagent_engine::{Action, Condition, Driver, Kind, State};
use sha2::{Digest, Sha256};

use crate::cli::args::{RalphArgs, RunArgs};
use crate::cli::env::Env;
use crate::cli::stdin_args::{self, Parsed, Slash};
use crate::setup::{self, HOW_TO_STOP, Installed, no_progress_words};
use crate::store::project::Project;
use crate::store::user::UserDir;
use crate::world::FsWorld;

/// A loop just set up, and its words.
#[derive(Debug)]
pub struct Started {
    pub state: State,
    /// `pagent: replaced the active ...` when `--force` replaced an active loop.
    pub replaced: Option<String>,
    pub start_line: String,
    /// Set-up's notes: project files used, files trusted or ignored.
    pub notes: Vec<String>,
}

impl Started {
    /// What the user reads: the replaced loop, the start line, set-up's notes.
    pub fn shown(&self) -> String {
        self.replaced
            .iter()
            .chain(std::iter::once(&self.start_line))
            .chain(&self.notes)
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
    }
}

/// How a set-up came: from a slash command (which never replaces another session's loop),
/// with the hook's hand-off mark to leave for the command's `!` line, and the session's
/// transcript when the hook names it.
#[derive(Debug, Default, Clone)]
pub struct Origin {
    pub slash: bool,
    pub handoff: Option<String>,
    /// Where the transcript stands now is where the loop's usage begins: its first Stop
    /// reads only what the loop added ([`crate::world::usage::cursor_at_end`]).
    pub transcript: Option<std::path::PathBuf>,
}

impl Origin {
    /// `state` marked with what the set-up knows of its session: the hand-off, and
    /// where the transcript stands.
    fn mark(&self, state: &mut State) {
        state.slash_handoff.clone_from(&self.handoff);
        if let Some(cursor) = self
            .transcript
            .as_deref()
            .and_then(crate::world::usage::cursor_at_end)
        {
            state.usage.transcript = Some(cursor);
        }
    }
}

/// The slash command's text as ralph options and a task; or its help.
pub fn parse_ralph(slash: Slash<'_>, text: &str) -> anyhow::Result<Parsed<(RalphArgs, String)>> {
    let line = stdin_args::parse_ralph_line(text);
    let args: RalphArgs = match stdin_args::parse_words(slash, line.flags)? {
        Parsed::Help(help) => return Ok(Parsed::Help(help)),
        Parsed::Args(args) => args,
    };
    anyhow::ensure!(
        !line.task.trim().is_empty(),
        "give the task, e.g. `{} Make the tests pass`",
        slash.name
    );
    Ok(Parsed::Args((args, line.task)))
}

/// The slash command's text as `pagent run` options; or its help.
pub fn parse_run(slash: Slash<'_>, text: &str) -> anyhow::Result<Parsed<RunArgs>> {
    anyhow::ensure!(
        !text.trim().is_empty(),
        "name the PRD file, e.g. `{0} prd.md`, or a plan: `{0} --stories tasks.md`",
        slash.name
    );
    let parsed: Parsed<RunArgs> = stdin_args::parse_words(slash, stdin_args::values(text))?;
    if let Parsed::Args(args) = &parsed {
        anyhow::ensure!(!args.stdin_args, "--stdin-args cannot be given here");
    }
    Ok(parsed)
}

/// Sets up a Ralph loop over `task`.
pub fn ralph(
    project: &Project,
    env: &Env,
    args: &RalphArgs,
    task: String,
    origin: &Origin,
) -> anyhow::Result<Started> {
    let (mut state, notes) = setup::build::ralph(project, env, args, task, Driver::Hook)?;
    origin.mark(&mut state);
    let installed = install(project, env, &state, args.force, origin, Action::Ralph)?;
    let start_line = format!(
        "pagent: started a Ralph loop: up to {}{}. {HOW_TO_STOP}",
        pagent_engine::count(installed.state.max_iterations, "iteration"),
        no_progress_words(&installed.state),
    );
    Ok(started(installed, start_line, notes.lines()))
}

/// Sets up a pipeline over a PRD, or a stories loop over a plan (`--stories`).
pub fn run(
    project: &Project,
    env: &Env,
    args: &RunArgs,
    origin: &Origin,
) -> anyhow::Result<Started> {
    if let Some(spec) = setup::build::stories_spec_of(args, Driver::Hook)? {
        let (mut state, notes) = setup::stories::stories(project, env, &spec)?;
        origin.mark(&mut state);
        let installed = install(project, env, &state, args.force, origin, Action::Stories)?;
        let start_line = format!(
            "pagent: started the stories loop for {}: one story at a time (up to {}{}). {HOW_TO_STOP}",
            installed.state.prd_path.as_deref().unwrap_or_default(),
            pagent_engine::count(installed.state.max_iterations, "iteration"),
            no_progress_words(&installed.state),
        );
        return Ok(started(installed, start_line, notes.lines()));
    }
    let (mut state, notes) = setup::build::pipeline(project, env, args, Driver::Hook)?;
    origin.mark(&mut state);
    let installed = install(project, env, &state, args.force, origin, Action::Run)?;
    let state = &installed.state;
    let names: Vec<&str> = state.stages[..state.max_stages]
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    let start_line = format!(
        "pagent: started the {} pipeline ({}) for {}: {} (up to {} per stage{}). {HOW_TO_STOP}",
        state.workflow,
        notes.source,
        state.prd_path.as_deref().unwrap_or_default(),
        names.join(" → "),
        pagent_engine::count(state.max_iterations, "iteration"),
        no_progress_words(state),
    );
    Ok(started(installed, start_line, notes.lines()))
}

fn install(
    project: &Project,
    env: &Env,
    state: &State,
    force: bool,
    origin: &Origin,
    action: Action,
) -> anyhow::Result<Installed> {
    let install = if origin.slash {
        setup::install_state_from_slash
    } else {
        setup::install_state
    };
    // Set-up's own warnings (an unwritable log, say) are not the user's business here.
    install(
        project,
        &UserDir::of(env),
        state,
        force,
        action,
        &mut |_: &str| {},
    )
}

fn started(installed: Installed, start_line: String, notes: Vec<String>) -> Started {
    Started {
        state: installed.state,
        replaced: installed.replaced,
        start_line,
        notes,
    }
}

/// What the model reads when a loop starts: how the loop works, where it is, and the
/// current stage's prompt (a stories loop's one story).
pub fn for_model(project: &Project, state: &State) -> String {
    let guide = match state.kind {
        Kind::Ralph => format!(
            "Work on the task below. Each time you stop, pagent gives you the task again until your final \
             message ends with a line that holds nothing but <promise>{}</promise>. Write it only when the \
             task is truly complete, never just to leave the loop.",
            state.current().exit_when.promise().unwrap_or("DONE")
        ),
        Kind::Pipeline if is_stories(&state.current().exit_when) => {
            "Work on the one story below. When you stop, pagent runs the checks: when they pass it marks \
             the story done and gives you the next one; when they fail, the same story again with what failed."
                .to_owned()
        }
        Kind::Pipeline => "Work on one stage at a time. When you stop, pagent checks the stage's exit \
             condition and either gives you the next stage or tells you what is still missing."
            .to_owned(),
    };
    let mut world = FsWorld::read_only(project);
    let prompt = pagent_engine::stories::render_stage_prompt(state, state.stage, &mut world);
    format!(
        "{guide}\n\n{}\n\n{}",
        pagent_engine::prompt::current_header(state),
        prompt.trim_end()
    )
}

/// Whether a stage works through a plan's stories (`stories_pass`, alone or combined).
fn is_stories(condition: &Condition) -> bool {
    match condition {
        Condition::StoriesPass { .. } => true,
        Condition::All(items) | Condition::Any(items) => items.iter().any(is_stories),
        _ => false,
    }
}

/// What a `!` line that set the loop up itself prints: the user has not seen the start
/// line (no UserPromptExpansion hook ran), so the model is asked to pass it on.
pub fn unannounced(project: &Project, started: &Started) -> String {
    format!(
        "{}\n(pagent's UserPromptExpansion hook did not run, so the user has not seen the lines above: \
         begin your reply with them, exactly as written.)\n{}",
        started.shown(),
        for_model(project, &started.state)
    )
}

/// The hand-off mark for a slash command's text (`$ARGUMENTS`, as the hook's
/// `command_args` and the `!` line's stdin both carry it, give or take the line end).
pub fn handoff_key(text: &str) -> String {
    pagent_engine::seal::hex(&Sha256::digest(text.trim().as_bytes()))
}

/// For a `!` line with the slash command's text `text`: when the hook set this loop up
/// from the same text, clears the mark and returns what the model reads; `None` when the
/// `!` line must set the loop up itself.
pub fn take_handoff(project: &Project, env: &Env, text: &str) -> anyhow::Result<Option<String>> {
    let key = handoff_key(text);
    let session = env.session_id.as_deref();
    let taken = crate::session::change_own_loop(
        project,
        env,
        |state| {
            let ours = state.slash_handoff.as_deref() == Some(key.as_str())
                && (session.is_none() || state.session_id.as_deref() == session);
            ours.then(|| {
                let mut next = state.clone();
                next.slash_handoff = None;
                next
            })
        },
        &mut |_: &str| {},
    )?;
    Ok(taken.map(|state| for_model(project, &state)))
}

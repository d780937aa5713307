//! What `pagent run` and `pagent ralph` share: installing a new loop's state.
//!
//! One rule for replacing a loop, from a slash command and a shell alike: a finished loop
//! is replaced silently; an active one only with `--force`, whoever started it (a second
//! `/ralph` in the same session used to replace the running loop without a word). A
//! replacement is announced ([`Installed::replaced`], a line the caller shows) and logged
//! (a `cancel` line for the old loop, "replaced by a new loop"). On top of that a slash
//! command never replaces another Claude Code session's loop at all, `--force` or not: a
//! person typing in one session cannot see the other one's work. "Whose loop" is the
//! engine's one answer, `whose_loop`.

use anyhow::{Context, bail};
use pagent_engine::{Action, State, Whose, format_duration, whose_loop};

use crate::store::Warn;
use crate::store::eventlog::Event;
use crate::store::project::Project;
use crate::store::user::UserDir;
use crate::{store, store::exclude, store::register, store::secret};

pub mod build;
pub mod child_plan;
pub mod plan;
pub mod stories;
pub mod tasks;

/// A new loop's state as written, and the line announcing the active loop it replaced.
#[derive(Debug)]
pub struct Installed {
    pub state: State,
    /// `pagent: replaced the active ralph loop (...)`, when `--force` replaced one.
    pub replaced: Option<String>,
}

pub fn install_state(
    project: &Project,
    user_dir: &UserDir,
    state: &State,
    force: bool,
    action: Action,
    warn: &mut dyn Warn,
) -> anyhow::Result<Installed> {
    install(project, user_dir, state, force, false, action, warn)
}

/// [`install_state`] for a slash command: it never replaces a loop that another Claude
/// Code session owns, `--force` or not. A person typing in one session cannot see the
/// other one's work; ending it is that session's business, or a terminal's.
pub fn install_state_from_slash(
    project: &Project,
    user_dir: &UserDir,
    state: &State,
    force: bool,
    action: Action,
    warn: &mut dyn Warn,
) -> anyhow::Result<Installed> {
    install(project, user_dir, state, force, true, action, warn)
}

fn install(
    project: &Project,
    user_dir: &UserDir,
    state: &State,
    force: bool,
    slash: bool,
    action: Action,
    warn: &mut dyn Warn,
) -> anyhow::Result<Installed> {
    let secret = secret::read_or_create_secret(user_dir)?;
    let mut state = state.clone();
    let id: [u8; 8] = pagent_door::random_bytes().context("cannot read random bytes")?;
    state.loop_id = pagent_engine::seal::hex(&id);
    let _lock = store::lock_state(project)?;
    // A corrupt old file is simply replaced: it holds no loop anyone can continue.
    let old = store::read_state(project).ok().flatten().filter(|old| {
        old.is_active() && store::ownership(project, user_dir, old) == store::Ownership::Own
    });
    let whose = old
        .as_ref()
        .map(|old| whose_loop(old, state.session_id.as_deref()));
    if let Some(old) = &old {
        refuse_to_replace(old, &state, whose.as_ref(), force, slash)?;
    }
    let state = store::write_state_atomic(project, user_dir, &state, &secret, warn)?;
    let replaced = old
        .as_ref()
        .map(|old| log_replaced(project, old, &state, warn));
    let origin = match state.driver {
        pagent_engine::Driver::Hook => register::Origin::Session,
        pagent_engine::Driver::Loop => register::Origin::Loop,
    };
    register_loop(project, user_dir, &state, origin, warn);
    store::write_prompt_file(project, &state, warn);
    if let Err(err) = exclude::exclude_pagent_files(project) {
        warn.warn(&format!(
            "could not add pagent's files to .git/info/exclude: {err:#}"
        ));
    }
    log_started(project, &state, action, warn);
    Ok(Installed { state, replaced })
}

/// Refuses to replace the active loop `old` with `state`: always when a slash command
/// would replace another session's loop, and without `--force` otherwise.
fn refuse_to_replace(
    old: &State,
    state: &State,
    whose: Option<&Whose>,
    force: bool,
    slash: bool,
) -> anyhow::Result<()> {
    if let Some(Whose::Other(owner)) = whose
        && slash
    {
        bail!(
            "a {} loop of another Claude Code session ({owner}) is active in this project \
             ({}, started {} ago), and a slash command never replaces another session's loop; \
             end it from that session with /pagent:cancel, or run `pagent cancel` in a terminal",
            old.workflow,
            where_it_is(old),
            format_duration(state.started_at.since(old.started_at)),
        );
    }
    if !force {
        let owner = match whose {
            Some(Whose::This) => "this session's".to_owned(),
            Some(Whose::Runner) => "driven by `pagent loop`".to_owned(),
            Some(Whose::Other(owner)) => format!("session {owner}"),
            _ => "not yet claimed by a session".to_owned(),
        };
        bail!(
            "a {} loop is already active in this project ({}, {}, started {} ago); \
             end it first with /pagent:cancel (or `pagent cancel`), or add --force to replace it",
            old.workflow,
            owner,
            where_it_is(old),
            format_duration(state.started_at.since(old.started_at)),
        );
    }
    Ok(())
}

/// The replaced loop's last line in the event log, and the words that say so.
fn log_replaced(project: &Project, old: &State, state: &State, warn: &mut dyn Warn) -> String {
    let event = Event::at(
        old,
        Action::Cancel,
        "replaced by a new loop (--force)".to_owned(),
        state.started_at,
        state.session_id.as_deref(),
    );
    crate::session::log(project, &event, warn);
    format!(
        "pagent: replaced the active {} loop ({}, started {} ago).",
        old.workflow,
        where_it_is(old),
        format_duration(state.started_at.since(old.started_at)),
    )
}

/// The new loop's first line in the event log.
fn log_started(project: &Project, state: &State, action: Action, warn: &mut dyn Warn) {
    let detail = format!(
        "{} started: {}, up to {} each",
        state.workflow,
        pagent_engine::count(state.max_stages as u64, "stage"),
        pagent_engine::count(state.max_iterations, "iteration")
    );
    let event = Event::at(
        state,
        action,
        detail,
        state.started_at,
        state.session_id.as_deref(),
    );
    crate::session::log(project, &event, warn);
}

/// "stage qa, iteration 2 of 10", "iteration 3 of 25" for a ralph loop.
fn where_it_is(state: &State) -> String {
    let iteration = format!(
        "iteration {} of {}",
        state.iterations[state.stage],
        state.stage_limit(state.stage)
    );
    match state.kind {
        pagent_engine::Kind::Ralph => iteration,
        pagent_engine::Kind::Pipeline => {
            format!("stage {}, {iteration}", state.current().name)
        }
    }
}

/// Records the loop in the register of loops (`pagent status --all`, the dashboard); a
/// failure is a warning: the loop runs the same without it.
pub fn register_loop(
    project: &Project,
    user_dir: &UserDir,
    state: &State,
    origin: register::Origin,
    warn: &mut dyn Warn,
) {
    if let Err(err) = register::record(user_dir, &project.root, origin, state.started_at) {
        warn.warn(&format!(
            "cannot record the loop in pagent's register of loops: {err:#}"
        ));
    }
}

/// What set-up says about the project files it used, beside the loop's first prompt.
#[derive(Debug, Default)]
pub struct Notes {
    /// Where the workflow came from (pipelines).
    pub source: String,
    /// Every project-supplied file the loop uses (workflow, prompt overrides, config).
    pub used: Vec<String>,
    /// Notices: files ignored, files trusted.
    pub lines: Vec<String>,
}

impl Notes {
    /// The notes as lines for a person.
    pub fn lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        if !self.used.is_empty() {
            out.push(format!("From the project: {}.", self.used.join(", ")));
        }
        out.extend(self.lines.iter().map(|l| format!("pagent: {l}")));
        out
    }
}

/// The project's config for a new loop: read, consented to (with the workflow's own
/// command source, if any: `--trust` trusts both), and named in `notes`. Returns the
/// backpressure settings to seal into the state.
pub fn consented_config(
    project: &Project,
    user_dir: &UserDir,
    workflow: Option<crate::store::consent::Source>,
    trust: bool,
    notes: &mut Notes,
) -> anyhow::Result<Option<pagent_engine::backpressure::BackpressureConfig>> {
    let config = crate::store::config::project_backpressure(project)?;
    let sources: Vec<crate::store::consent::Source> = workflow
        .into_iter()
        .chain(
            config
                .as_ref()
                .and_then(|(b, c)| crate::store::consent::config_source(b, c.as_ref())),
        )
        .collect();
    notes.lines.extend(crate::store::consent::require(
        project,
        user_dir,
        &sources,
        trust,
        &crate::io::now().to_string(),
    )?);
    if config.is_some() {
        notes
            .used
            .push(format!("config {}", crate::store::project::CONFIG_FILE));
    }
    Ok(config.and_then(|(_, c)| c))
}

/// Adds to `notes` which account the first agent reviewer of `state` runs on, once.
pub fn note_reviewer_costs(state: &State, notes: &mut Notes) {
    let line = state
        .stages
        .iter()
        .filter_map(|stage| stage.exit_when.review())
        .find_map(|review| crate::cli::costs::reviewer(&review.reviewer));
    if let Some(line) = line {
        notes.lines.push(line);
    }
}

/// How the start line tells the user to stop a loop (the session's levers say it too).
pub use crate::session::control::HOW_TO_STOP;

/// The no-progress limit and the budget in words, for the start line (empty when
/// neither is set).
pub fn no_progress_words(state: &State) -> String {
    let mut words = match state.no_progress_limit {
        0 => String::new(),
        1 => ", giving up at the first turn that changes no file".to_owned(),
        n => format!(", giving up after {n} turns in a row that change no file"),
    };
    if !state.budget.is_empty() {
        words.push_str(&format!(
            ", or once it reaches its budget of {}",
            state.budget.describe()
        ));
    }
    words
}

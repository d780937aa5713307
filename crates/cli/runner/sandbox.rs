//! `--sandbox`: the walls a loop's agent runs inside, chosen once before the first
//! iteration from the loop's folders and the user's (the door's [`Containment`] builds
//! them and starts the agent inside). A loop asked to be contained that cannot be refuses
//! to start: it never runs its agent uncontained instead.

use std::path::Path;

use anyhow::anyhow;
use pagent_door::files;
use pagent_door::process::{Containment, SearchPath};

use crate::agent::{AgentSpec, Options};
use crate::cli::env::Env;
use crate::cli::sandbox as texts;
use crate::store::user::UserDir;

/// `agent`, contained when the options ask for it: writable only in `writable` (the
/// project, and the repository's git folder a worktree commits into).
pub(super) fn contain(
    agent: AgentSpec,
    options: &Options,
    env: &Env,
    writable: &[&Path],
    search: &SearchPath,
) -> anyhow::Result<AgentSpec> {
    if !options.sandbox {
        return Ok(agent);
    }
    // An agent CLI needs its API (the network) and writes its own configuration in HOME,
    // which the user's next uncontained run of it would read: not contained yet.
    if let AgentSpec::Known { kind, .. } = &agent {
        return Err(anyhow!(texts::uncontained_agent(*kind)));
    }
    let mut walls = Containment::find(search).map_err(|e| anyhow!(texts::refusal(&e)))?;
    let home = env.install.home.as_deref();
    let user_dir = UserDir::of(env);
    for dir in [
        home,
        user_dir.path(),
        env.install.claude_config_dir.as_deref(),
    ]
    .into_iter()
    .flatten()
    {
        // A project that holds a folder the walls hide (HOME itself) would bring it back
        // writable, or be hidden with it.
        if let Some(project) = writable.iter().find(|w| holds(w, dir)) {
            return Err(anyhow!(texts::holds_hidden(project, dir)));
        }
        walls = walls.hide(dir);
    }
    if let Some(home) = home {
        walls = walls.read_only(&home.join(".gitconfig"));
    }
    for dir in writable {
        walls = walls.writable(dir);
    }
    walls
        .check(search)
        .map_err(|e| anyhow!(texts::refusal(&e)))?;
    Ok(agent.contained(walls))
}

/// `pagent parallel --sandbox`: refused before any worktree is made where no task's loop
/// could contain its agent (each loop checks again, with its own folders).
pub(super) fn refuse_early(options: &Options, search: &SearchPath) -> anyhow::Result<()> {
    if !options.sandbox {
        return Ok(());
    }
    if options.command.is_none() {
        return Err(anyhow!(texts::uncontained_agent(options.agent)));
    }
    let walls = Containment::find(search).map_err(|e| anyhow!(texts::refusal(&e)))?;
    walls.check(search).map_err(|e| anyhow!(texts::refusal(&e)))
}

/// Whether the folder `outer` is `inner` or holds it, by their real paths.
fn holds(outer: &Path, inner: &Path) -> bool {
    match (files::canonical(outer), files::canonical(inner)) {
        (Ok(outer), Ok(inner)) => inner.starts_with(outer),
        _ => inner.starts_with(outer),
    }
}

//! Consent for a team's commands on this machine.
//!
//! A team's plan comes from the remote: its checks and any agent command, agent
//! arguments or permission mode are another machine's words. A worker runs them only
//! once this machine's user trusted exactly them (kept in the same consent store as a
//! project file's, keyed by the remote and the team, with a hash of the commands), or
//! when the user gave their own instead as flags of `pagent team work` (`--check`, the
//! agent options), which replace the plan's. `pagent team start` trusts the commands it
//! was given on the machine it runs on: they are that user's own flags.

use std::path::PathBuf;

use anyhow::bail;

use super::records::TeamPlan;
use crate::cli::env::Env;
use crate::io::now;
use crate::store::trust::{self, Verdict};
use crate::store::user::UserDir;

/// The consent store's key of a team's commands.
fn key(url: &str, team: &str) -> PathBuf {
    PathBuf::from(format!("pagent-team:{url}#{team}"))
}

fn bytes(commands: &[String]) -> Vec<u8> {
    serde_json::to_vec(commands).unwrap_or_default()
}

/// Trusts `commands` of the team on this machine.
pub fn trust_commands(env: &Env, url: &str, team: &str, commands: &[String]) -> anyhow::Result<()> {
    if commands.is_empty() {
        return Ok(());
    }
    trust::trust(
        &UserDir::of(env),
        &key(url, team),
        &bytes(commands),
        commands.to_vec(),
        &now().to_string(),
    )
}

/// Trusts the plan's commands here: the user who starts a team gave them.
pub fn trust_here(env: &Env, url: &str, plan: &TeamPlan) -> anyhow::Result<()> {
    trust_commands(env, url, &plan.team, &plan.commands())
}

/// Makes sure `commands` (what of the plan this worker would run) are trusted here:
/// trusts them when `trust_now` (`--trust`), else refuses with what they are and how to
/// trust them. Lines for the worker's output.
pub fn require(
    env: &Env,
    url: &str,
    team: &str,
    commands: &[String],
    trust_now: bool,
) -> anyhow::Result<Vec<String>> {
    if commands.is_empty() {
        return Ok(Vec::new());
    }
    let user_dir = UserDir::of(env);
    match trust::verdict(&user_dir, &key(url, team), &bytes(commands)) {
        Verdict::Trusted => Ok(Vec::new()),
        _ if trust_now => {
            trust_commands(env, url, team, commands)?;
            Ok(vec![format!(
                "trusted the team {team}'s commands (--trust)"
            )])
        }
        why => {
            let state = if why == Verdict::Changed {
                "changed since you trusted them"
            } else {
                "not trusted on this machine"
            };
            let mut text =
                format!("the team {team}'s plan would run these commands here ({state}):");
            for command in commands {
                text.push_str(&format!("\n  {command}"));
            }
            text.push_str(&format!(
                "\nRead them, then run `pagent team trust --team {team}` (or start the worker with --trust), or give your own with --check and the agent options."
            ));
            bail!(text)
        }
    }
}

//! What pagent says about `--sandbox`: why a loop refuses to start uncontained, and the
//! line a contained loop starts with. Never silently unsandboxed: each refusal is one
//! sentence naming what to install or what to do instead (docs/security.md says the rest).

use std::path::Path;

use pagent_door::process::ContainError;
use pagent_protocol::stream::AgentKind;

/// Why `--sandbox` cannot contain this loop's agent here.
pub fn refusal(err: &ContainError) -> String {
    match err {
        ContainError::Missing => "--sandbox runs the agent inside bubblewrap, which is not \
             installed: install it (Debian and Ubuntu: apt-get install bubblewrap; Fedora: dnf \
             install bubblewrap), or run without --sandbox"
            .to_owned(),
        ContainError::Platform => "--sandbox runs the agent inside bubblewrap, which only Linux \
             has: on this system, run without --sandbox"
            .to_owned(),
        ContainError::Broken { program, why } => format!(
            "--sandbox cannot start bubblewrap ({}) here: {why}; allow unprivileged user \
             namespaces (sysctl kernel.unprivileged_userns_clone=1), or run without --sandbox",
            program.display()
        ),
    }
}

/// Why `--sandbox` refuses an agent CLI it does not contain yet.
pub fn uncontained_agent(kind: AgentKind) -> String {
    format!(
        "--sandbox does not contain {} yet (it contains Claude Code and --command agents): use \
         --agent claude or --command, or run without --sandbox",
        kind.name()
    )
}

/// Why a contained loop refuses a reviewer agent CLI it does not contain yet.
pub fn uncontained_reviewer(kind: AgentKind) -> String {
    format!(
        "--sandbox does not contain {} as a reviewer yet (it contains Claude Code reviewers and \
         reviewer commands): use --reviewer claude or --reviewer-command, or run without \
         --sandbox",
        kind.name()
    )
}

/// Why Claude Code's sandbox cannot run on this system.
pub fn claude_platform() -> String {
    "--sandbox runs Claude Code inside its own sandbox, which this system does not have (it \
     has one on Linux and macOS): run without --sandbox"
        .to_owned()
}

/// Why Claude Code's sandbox cannot run here: socat is missing.
pub fn claude_needs_socat() -> String {
    "--sandbox runs Claude Code inside its own sandbox, which needs socat on Linux and it is not \
     installed: install it (Debian and Ubuntu: apt-get install socat; Fedora: dnf install \
     socat), or run without --sandbox"
        .to_owned()
}

/// Why `--sandbox` refuses a Claude Code argument that would let commands out.
pub fn claude_escape(arg: &str) -> String {
    format!(
        "--sandbox keeps Claude Code's commands inside its sandbox, and {arg} would take them \
         out or replace its settings: drop {arg}, or run without --sandbox"
    )
}

/// Why `--allow-host` is refused for an agent whose sandbox has no network at all.
pub fn hosts_without_filter() -> String {
    "--allow-host opens hosts in Claude Code's sandbox; a --command agent under --sandbox has \
     no network at all: drop --allow-host, or run the loop with --agent claude"
        .to_owned()
}

/// Why `--sandbox` refuses a project that is (or holds) a folder it hides: HOME itself.
pub fn holds_hidden(project: &Path, hidden: &Path) -> String {
    format!(
        "--sandbox hides HOME and pagent's config folder from the agent, and the project {} \
         is {} or holds it: run the loop in a project folder of its own (one inside HOME is \
         fine)",
        project.display(),
        hidden.display()
    )
}

/// Why `pagent team start --allow-host` is refused: hosts are each worker's own.
pub fn team_hosts() -> String {
    "--allow-host is each worker's own choice, never the team plan's: give it to `pagent team \
     work --sandbox` on the machine that runs the agents"
        .to_owned()
}

/// The line a contained loop starts with: pagent's walls for the agent (`walls`), else
/// Claude Code's own sandbox with these allowed hosts, its checks inside pagent's walls
/// where there are some (`checks_walled`).
pub fn started(walls: bool, checks_walled: bool, hosts: &[String]) -> String {
    if walls {
        return "the agent and the loop's checks run contained (bubblewrap): they write only in \
                the project and a private /tmp, their HOME is empty, they have no network, and \
                they see no other process"
            .to_owned();
    }
    let network = if hosts.is_empty() {
        "no network".to_owned()
    } else {
        format!("no network but {}", hosts.join(", "))
    };
    let checks = if checks_walled {
        "the loop's checks run inside bubblewrap, with no network"
    } else {
        "the loop's checks run uncontained (pagent contains them with bubblewrap, which only \
         Linux has)"
    };
    format!(
        "the agent runs contained (Claude Code's sandbox): its commands write only in the \
         project and a temporary folder, cannot read HOME, reach {network}, and see no other \
         process; its own file tools stay in the project; {checks}"
    )
}

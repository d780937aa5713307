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
        "--sandbox does not contain {} yet (it contains --command agents): use --command, or \
         run without --sandbox",
        kind.name()
    )
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

/// The line a contained loop starts with.
pub fn started() -> &'static str {
    "the agent runs contained (bubblewrap): it writes only in the project and a private /tmp, \
     its HOME is empty, it has no network, and it sees no other process"
}

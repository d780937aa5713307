//! What pagent says about `--sandbox`: why a loop refuses to start uncontained, and the
//! line a contained loop starts with. Never silently unsandboxed: each refusal is one
//! sentence naming what to install or what to do instead (docs/security.md says the rest).

use std::path::Path;

use pagent_door::process::ContainError;
use pagent_door::process::proxy::Refusal;
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

/// Why a contained loop refuses a reviewer agent CLI it does not contain yet.
pub fn uncontained_reviewer(kind: AgentKind) -> String {
    format!(
        "--sandbox does not contain {} as a reviewer yet (it contains Claude Code reviewers and \
         reviewer commands): use --reviewer claude or --reviewer-command, or run without \
         --sandbox",
        kind.name()
    )
}

/// Why a contained OpenCode loop cannot start: no API host to let it reach.
pub fn opencode_no_api_host() -> String {
    "--sandbox lets OpenCode reach only its API host, and pagent found none in your OpenCode \
     configuration (a provider's options.baseURL, or a model of anthropic or openai): give \
     the host with --allow-host, or run without --sandbox"
        .to_owned()
}

/// Why a contained OpenCode loop cannot start: its private configuration folder.
pub fn opencode_private_failed(err: &std::io::Error) -> String {
    format!("--sandbox could not make OpenCode's private configuration folder: {err}")
}

/// Why a contained Codex loop cannot start: no API host to let it reach.
pub fn codex_no_api_host() -> String {
    "--sandbox lets Codex reach only its API host, and pagent found none in your Codex \
     configuration (the chosen model_provider's base_url, or OpenAI's own provider): give \
     the host with --allow-host, or run without --sandbox"
        .to_owned()
}

/// Why a contained Codex loop cannot start: the user's Codex configuration is there but
/// could not be read (its API hosts come from it).
pub fn codex_config_unread(path: &Path, why: &str) -> String {
    format!(
        "--sandbox reads Codex's API hosts from your Codex configuration, and {} could not be \
         read ({why}): fix it, or run without --sandbox",
        path.display()
    )
}

/// Why `--sandbox` refuses a Codex argument that Codex does not take beside the
/// `--sandbox danger-full-access` a contained Codex is started with.
pub fn codex_own_sandbox(arg: &str) -> String {
    format!(
        "--sandbox starts Codex with its own sandbox off (`codex exec --sandbox \
         danger-full-access`: pagent's walls are its sandbox), and Codex does not take {arg} \
         beside that: drop that --agent-arg, or run without --sandbox"
    )
}

/// Why a contained Codex loop cannot start: its private home.
pub fn codex_private_failed(err: &std::io::Error) -> String {
    format!("--sandbox could not make Codex's private home (CODEX_HOME): {err}")
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

/// Why `--allow-host HOST:PORT` is refused for Claude Code: its sandbox allows names.
pub fn claude_host_port(host: &str) -> String {
    format!(
        "--allow-host {host} names a port, and Claude Code's sandbox allows hosts by name \
         only: drop the port, or run the agent with --command"
    )
}

/// Why a contained loop with `--allow-host` cannot start: its proxy did not.
pub fn proxy_failed(err: &std::io::Error) -> String {
    format!("--sandbox could not start its network proxy for --allow-host: {err}")
}

/// What pagent's sandbox proxy answers a contained child it refuses (the body of the
/// HTTP answer: the child's tool shows it, and the loop's feedback carries it), in a loop
/// whose `--allow-host` takes ports (a `--command` agent's; `pagent loop`, `parallel` and
/// `team work` all take the flag, so the text names no command).
pub fn proxy_refusal(refusal: &Refusal) -> String {
    refusal_text(refusal, true)
}

/// [`proxy_refusal`] for a loop whose agent is Claude Code (its checks go through the
/// proxy): its `--allow-host` takes names only, on ports 80 and 443.
pub fn claude_proxy_refusal(refusal: &Refusal) -> String {
    refusal_text(refusal, false)
}

fn refusal_text(refusal: &Refusal, ports: bool) -> String {
    use pagent_door::process::proxy::{HEAD_LIMIT, HEAD_TIME, MAX_CONNECTIONS};
    match refusal {
        Refusal::NotAllowed { host, port } => not_allowed(host, *port, ports),
        Refusal::Local { host, port } => format!(
            "pagent's sandbox refused {host}:{port}: the name leads to this machine (loopback \
             or another of its addresses) or to a cloud's metadata server; the sandbox reaches \
             this machine only when asked for as localhost or 127.0.0.1, named so by \
             --allow-host, and a metadata server never"
        ),
        Refusal::BadRequest => "pagent's sandbox proxy refused a request it does not take: it \
             takes CONNECT HOST:PORT and http:// URLs, whose host is a name (letters, digits, \
             dots, dashes) or an IP address"
            .to_owned(),
        Refusal::TooLarge => format!(
            "pagent's sandbox proxy refused a request whose head is over {} KiB",
            HEAD_LIMIT / 1024
        ),
        Refusal::TooSlow => format!(
            "pagent's sandbox proxy closed a request whose head did not arrive within {} seconds",
            HEAD_TIME.as_secs()
        ),
        Refusal::Busy => format!(
            "pagent's sandbox proxy has {MAX_CONNECTIONS} connections open already: close some \
             and try again"
        ),
        Refusal::Unreachable { host, port, why } => {
            format!("pagent's sandbox proxy could not reach {host}:{port}: {why}")
        }
    }
}

/// Why `host:port` is not let through, and the `--allow-host` that would let it, where
/// there is one the loop takes.
fn not_allowed(host: &str, port: u16, ports: bool) -> String {
    let refused = format!("pagent's sandbox refused {host}:{port}: it is not an allowed host");
    let usual = [80, 443].contains(&port);
    if host.starts_with('[') {
        format!(
            "{refused}, and --allow-host names no IPv6 address: ask for the host by a name, \
             and allow that name"
        )
    } else if usual || ports {
        let entry = if usual {
            host.to_owned()
        } else {
            format!("{host}:{port}")
        };
        format!("{refused}; --allow-host {entry} allows it")
    } else {
        format!(
            "{refused}, and this loop's --allow-host takes hosts on ports 80 and 443 only \
             (Claude Code's sandbox allows hosts by name): run the agent with --command to \
             allow another port"
        )
    }
}

/// Why `--sandbox` refuses a project that is (or holds) a folder it hides: HOME itself,
/// or a config folder (pagent's, Claude Code's, Codex's) set elsewhere.
pub fn holds_hidden(project: &Path, hidden: &Path) -> String {
    format!(
        "--sandbox hides HOME and the config folders of pagent and the agent CLIs from the \
         agent, and the project {} \
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
    let network = if hosts.is_empty() {
        "no network".to_owned()
    } else {
        format!("no network but {}", hosts.join(", "))
    };
    if walls {
        let network = if hosts.is_empty() {
            "have no network".to_owned()
        } else {
            format!("reach {network} (through pagent's proxy)")
        };
        return format!(
            "the agent and the loop's checks run contained (bubblewrap): they write only in \
             the project and a private /tmp, their HOME is empty, they {network}, and they see \
             no other process"
        );
    }
    let checks = match (checks_walled, hosts.is_empty()) {
        (true, true) => "the loop's checks run inside bubblewrap, with no network",
        (true, false) => "the loop's checks run inside bubblewrap, with the same hosts",
        (false, _) => {
            "the loop's checks run uncontained (pagent contains them with bubblewrap, which \
             only Linux has)"
        }
    };
    format!(
        "the agent runs contained (Claude Code's sandbox): its commands write only in the \
         project and a temporary folder, cannot read HOME, reach {network}, and see no other \
         process; its own file tools stay in the project; {checks}"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Review L1: a refusal's `--allow-host` is one the loop it is said in takes (a
    /// Claude Code loop takes no port), and an IPv6 address, which no entry names, gets
    /// none.
    #[test]
    fn every_allow_host_a_refusal_suggests_is_one_the_loop_takes() {
        let cases = [("localhost", 8081), ("localhost", 443), ("[::1]", 8081)];
        let cases = cases.iter().chain(&[("[::ffff:127.0.0.1]", 80)]);
        for (host, port) in cases {
            let refusal = Refusal::NotAllowed {
                host: (*host).into(),
                port: *port,
            };
            for (text, ports) in [
                (proxy_refusal(&refusal), true),
                (claude_proxy_refusal(&refusal), false),
            ] {
                let Some((_, entry)) = text.rsplit_once("--allow-host ") else {
                    continue;
                };
                let entry = entry.split(' ').next().unwrap();
                assert!(crate::cli::agent_args::parse_host(entry).is_ok(), "{text}");
                assert!(ports || !entry.contains(':'), "{text}");
            }
        }
    }

    /// Every answer pagent's sandbox proxy gives a contained agent it refuses, and the
    /// refusals of `--allow-host` around it.
    #[test]
    fn the_sandbox_proxys_refusals_say_what_was_refused_and_how_to_allow_it() {
        let host = |host: &str, port| (host.to_owned(), port);
        let (h, p) = host("registry.example.org", 443);
        let texts = [
            proxy_refusal(&Refusal::NotAllowed {
                host: h.clone(),
                port: p,
            }),
            proxy_refusal(&Refusal::NotAllowed {
                host: "localhost".into(),
                port: 8081,
            }),
            claude_proxy_refusal(&Refusal::NotAllowed {
                host: "localhost".into(),
                port: 8081,
            }),
            proxy_refusal(&Refusal::NotAllowed {
                host: "[::1]".into(),
                port: 8081,
            }),
            proxy_refusal(&Refusal::Local {
                host: h.clone(),
                port: p,
            }),
            proxy_refusal(&Refusal::BadRequest),
            proxy_refusal(&Refusal::TooLarge),
            proxy_refusal(&Refusal::TooSlow),
            proxy_refusal(&Refusal::Busy),
            proxy_refusal(&Refusal::Unreachable {
                host: h,
                port: p,
                why: "connection refused".into(),
            }),
            claude_host_port("localhost:8080"),
            proxy_failed(&std::io::Error::other("no space left on device")),
            started(
                true,
                true,
                &["localhost:8080".into(), "*.example.org".into()],
            ),
            started(false, true, &["registry.example.org".into()]),
            codex_no_api_host(),
            codex_own_sandbox("--sandbox"),
            codex_config_unread(Path::new("/home/u/.codex/config.toml"), "it is not TOML"),
            codex_private_failed(&std::io::Error::other("no space left on device")),
            opencode_no_api_host(),
            opencode_private_failed(&std::io::Error::other("no space left on device")),
        ];
        insta::assert_snapshot!(texts.join("\n"));
    }
}

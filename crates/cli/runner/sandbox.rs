//! `--sandbox`: how a loop's agent is kept to its project, chosen once before the first
//! iteration from the loop's folders and the user's. A Claude Code agent runs inside
//! Claude Code's own sandbox (its `sandbox` settings, handed with `--settings`); a
//! `--command` agent, OpenCode and Codex inside pagent's walls (the door's
//! [`Containment`], bubblewrap), whose network is pagent's proxy for their API hosts and
//! the `--allow-host` hosts when there are some. The loop's checks run inside pagent's
//! walls whichever the agent (on Linux; a Claude Code loop on macOS says its checks run
//! uncontained). A loop asked to be contained that cannot be refuses to start: it never
//! runs its agent uncontained instead.

use std::path::{Path, PathBuf};

use anyhow::anyhow;
use pagent_door::files;
use pagent_door::process::proxy::{AllowList, Proxy, Wording};
use pagent_door::process::{Containment, Program, SearchPath};
use pagent_protocol::stream::AgentKind;
use serde_json::json;

use crate::agent::review::ReviewSandbox;
use crate::agent::{AgentSpec, Options, Sandbox};
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
    let hidden = hidden_folders(env);
    // A project that holds a folder the sandbox hides (HOME itself) would bring it back
    // writable, or be hidden with it; one that holds an agent's or pagent's config folder
    // (a default one inside HOME too) would let the agent write what the user's next
    // uncontained run obeys.
    for dir in hidden.iter().chain(&config_folders(env)) {
        if let Some(project) = writable.iter().find(|w| holds(w, dir)) {
            return Err(anyhow!(texts::holds_hidden(project, dir)));
        }
    }
    match &agent {
        AgentSpec::Known {
            kind: AgentKind::Claude,
            permission_mode,
            extra_args,
            ..
        } => {
            refuse_escapes(permission_mode, extra_args)?;
            refuse_host_ports(&options.allow_hosts)?;
            claude_code_ready(search)?;
            let home = env.install.home.as_deref();
            let settings = claude_settings(home, &hidden, writable, &options.allow_hosts);
            // Claude Code's sandbox holds only its agent's commands: the loop's checks get
            // pagent's walls, which exist where bubblewrap does, with the same hosts.
            let checks = if cfg!(target_os = "linux") {
                let walls = walls(env, &hidden, writable, search)?;
                let worded = texts::claude_proxy_refusal;
                Some(with_worded_network(
                    walls,
                    env,
                    &options.allow_hosts,
                    search,
                    worded,
                )?)
            } else {
                None
            };
            Ok(agent.contained(Sandbox::ClaudeCode { settings, checks }))
        }
        AgentSpec::Known {
            kind: AgentKind::Opencode,
            program,
            ..
        } => {
            let walls = opencode(env, options, (&hidden, writable), program, search)?;
            Ok(agent.contained(Sandbox::Walls(walls)))
        }
        AgentSpec::Known {
            kind: AgentKind::Codex,
            program,
            extra_args,
            ..
        } => {
            refuse_codex_sandbox(extra_args)?;
            let walls = codex(env, options, (&hidden, writable), program, search)?;
            Ok(agent.contained(Sandbox::Walls(walls)))
        }
        AgentSpec::Command { .. } => {
            let walls = walls(env, &hidden, writable, search)?;
            let walls = with_network(walls, env, &options.allow_hosts, search)?;
            Ok(agent.contained(Sandbox::Walls(walls)))
        }
    }
}

/// OpenCode's walls: its private configuration (see `opencode_walls.rs`), its program put
/// back where HOME hides it, and the network to its API hosts and `--allow-host`'s.
fn opencode(
    env: &Env,
    options: &Options,
    (hidden, writable): (&[PathBuf], &[&Path]),
    program: &Program,
    search: &SearchPath,
) -> anyhow::Result<Containment> {
    let private = super::opencode_walls::prepare(env)?;
    let hosts = api_hosts(private.hosts, options, texts::opencode_no_api_host)?;
    let mut walls = walls(env, hidden, writable, search)?.read_only(program.path());
    for (var, dir) in private.vars {
        walls = walls.setenv(var, dir);
    }
    with_network(walls.private(private.dir), env, &hosts, search)
}

/// Codex's walls: its private home (see `codex_walls.rs`), its program put back where
/// HOME hides it, and the network to its API hosts and `--allow-host`'s.
fn codex(
    env: &Env,
    options: &Options,
    (hidden, writable): (&[PathBuf], &[&Path]),
    program: &Program,
    search: &SearchPath,
) -> anyhow::Result<Containment> {
    let private = super::codex_walls::prepare(env)?;
    let hosts = api_hosts(private.hosts, options, texts::codex_no_api_host)?;
    let walls = walls(env, hidden, writable, search)?.read_only(program.path());
    // Seen inside as `~/.codex` (HOME is hidden, so nothing of the user's is there):
    // Codex makes no helper commands (`apply_patch` on its PATH) in a home under /tmp.
    let home = env.install.home.as_deref().map(files::canonical);
    let walls = match home {
        Some(Ok(home)) => {
            let inside = home.join(".codex");
            walls
                .setenv("CODEX_HOME", &inside)
                .private_at(private.dir, &inside)
        }
        _ => {
            let inside = private.dir.path().to_path_buf();
            walls.setenv("CODEX_HOME", inside).private(private.dir)
        }
    };
    with_network(walls, env, &hosts, search)
}

/// An agent's API hosts (from the user's configuration) and the `--allow-host` ones; with
/// none, the refusal `none` words.
fn api_hosts(
    mut hosts: Vec<String>,
    options: &Options,
    none: fn() -> String,
) -> anyhow::Result<Vec<String>> {
    hosts.extend(options.allow_hosts.iter().cloned());
    hosts.dedup();
    if hosts.is_empty() {
        return Err(anyhow!(none()));
    }
    Ok(hosts)
}

/// `walls` with pagent's proxy for `hosts` as their network (none without hosts: no
/// network at all), checked by starting an empty sandbox through it once.
pub(crate) fn with_network(
    walls: Containment,
    env: &Env,
    hosts: &[String],
    search: &SearchPath,
) -> anyhow::Result<Containment> {
    with_worded_network(walls, env, hosts, search, texts::proxy_refusal)
}

/// [`with_network`], the proxy's refusals worded by `wording` (one that suggests only an
/// `--allow-host` the loop takes).
fn with_worded_network(
    walls: Containment,
    env: &Env,
    hosts: &[String],
    search: &SearchPath,
    wording: Wording,
) -> anyhow::Result<Containment> {
    if hosts.is_empty() {
        return Ok(walls);
    }
    let list = AllowList::parse(hosts).map_err(|e| anyhow!(e))?;
    let proxy = Proxy::start(list, wording).map_err(|e| anyhow!(texts::proxy_failed(&e)))?;
    let exe = env
        .pagent_exe()
        .map_err(|e| anyhow!(texts::proxy_failed(&e)))?;
    let walls = walls.network(proxy, &exe);
    walls
        .check(search)
        .map_err(|e| anyhow!(texts::refusal(&e)))?;
    Ok(walls)
}

/// `--allow-host HOST:PORT` for Claude Code, whose sandbox allows hosts by name only.
fn refuse_host_ports(hosts: &[String]) -> anyhow::Result<()> {
    match hosts.iter().find(|h| h.contains(':')) {
        Some(host) => Err(anyhow!(texts::claude_host_port(host))),
        None => Ok(()),
    }
}

/// The folders the agent must not read: HOME as the environment says and as the password
/// database does (a project's settings can set HOME, or unset it), pagent's config folder,
/// Claude Code's and Codex's (which hold credentials wherever they are).
fn hidden_folders(env: &Env) -> Vec<PathBuf> {
    let user_dir = UserDir::of(env);
    let homes = [env.install.home.clone(), files::passwd_home()];
    let codex = super::codex_walls::hidden(env, &homes);
    let mut hidden: Vec<PathBuf> = homes.iter().flatten().cloned().collect();
    hidden.extend(
        [
            user_dir.path(),
            env.install.claude_config_dir.as_deref(),
            codex.as_deref(),
        ]
        .into_iter()
        .flatten()
        .map(Path::to_path_buf),
    );
    hidden.dedup();
    hidden
}

/// Where pagent and the agent CLIs keep their configuration, wherever that is (the
/// defaults in HOME included): pagent's config folder, Claude Code's (`~/.claude`),
/// Codex's home (`~/.codex`) and OpenCode's config folder. A contained agent must not
/// be able to write there, so a project may not be or hold one of them.
fn config_folders(env: &Env) -> Vec<PathBuf> {
    let install = &env.install;
    let home = install.home.as_deref();
    let in_home = |rel: &str| home.map(|h| h.join(rel));
    let xdg_config = install
        .xdg_config_home
        .clone()
        .or_else(|| in_home(".config"));
    [
        UserDir::of(env).path().map(Path::to_path_buf),
        install
            .claude_config_dir
            .clone()
            .or_else(|| in_home(".claude")),
        super::codex_walls::user_home(env),
        xdg_config.map(|c| c.join("opencode")),
    ]
    .into_iter()
    .flatten()
    .collect()
}

/// pagent's own walls (bubblewrap), checked by starting an empty sandbox once.
fn walls(
    env: &Env,
    hidden: &[PathBuf],
    writable: &[&Path],
    search: &SearchPath,
) -> anyhow::Result<Containment> {
    let mut walls = Containment::find(search).map_err(|e| anyhow!(texts::refusal(&e)))?;
    for dir in hidden {
        walls = walls.hide(dir);
    }
    if let Some(home) = env.install.home.as_deref() {
        walls = walls.read_only(&home.join(".gitconfig"));
    }
    for dir in writable {
        walls = walls.writable(dir);
    }
    walls
        .check(search)
        .map_err(|e| anyhow!(texts::refusal(&e)))?;
    Ok(walls)
}

/// Claude Code's sandbox can start here: on Linux it runs commands inside bubblewrap
/// (which must work: user namespaces on) with socat for its network proxy; on macOS
/// inside Seatbelt, which the system has; elsewhere there is none.
fn claude_code_ready(search: &SearchPath) -> anyhow::Result<()> {
    if cfg!(target_os = "macos") {
        return Ok(());
    }
    if !cfg!(target_os = "linux") {
        return Err(anyhow!(texts::claude_platform()));
    }
    let bwrap = Containment::find(search).map_err(|e| anyhow!(texts::refusal(&e)))?;
    if Program::named("socat", search).is_err() {
        return Err(anyhow!(texts::claude_needs_socat()));
    }
    bwrap.check(search).map_err(|e| anyhow!(texts::refusal(&e)))
}

/// A Claude Code argument of the user's that would take commands out of the sandbox or
/// replace its settings: refused rather than let the loop run less contained than it says.
fn refuse_escapes(permission_mode: &str, extra_args: &[String]) -> anyhow::Result<()> {
    if permission_mode == "bypassPermissions" {
        return Err(anyhow!(texts::claude_escape(
            "--permission-mode bypassPermissions"
        )));
    }
    for arg in extra_args {
        let name = arg.split('=').next().unwrap_or(arg);
        if [
            "--settings",
            "--dangerously-skip-permissions",
            "--permission-mode",
        ]
        .contains(&name)
        {
            return Err(anyhow!(texts::claude_escape(name)));
        }
    }
    Ok(())
}

/// A Codex argument of the user's that Codex refuses beside the `--sandbox
/// danger-full-access` a contained Codex runs with (Codex 0.169.0 and 0.171.0, checked
/// 2026-11-27: `--sandbox` or `-s` a second time, `--approve-for-me`): refused before the
/// loop starts rather than failing every iteration. Arguments Codex accepts there (its
/// `--dangerously-bypass-approvals-and-sandbox`, a `-c sandbox_mode=...`) act only inside
/// pagent's walls.
fn refuse_codex_sandbox(extra_args: &[String]) -> anyhow::Result<()> {
    let clashes = |arg: &str| {
        let name = arg.split('=').next().unwrap_or(arg);
        name == "--sandbox"
            || name == "--approve-for-me"
            || (arg.starts_with("-s") && !arg.starts_with("--"))
    };
    let name = |arg: &str| match arg.split('=').next().unwrap_or(arg) {
        short if short.starts_with("-s") && !short.starts_with("--") => "-s".to_owned(),
        long => long.to_owned(),
    };
    match extra_args.iter().find(|a| clashes(a)) {
        Some(arg) => Err(anyhow!(texts::codex_own_sandbox(&name(arg)))),
        None => Ok(()),
    }
}

/// Claude Code's `sandbox` settings (the schema of the Agent SDK's `sdk.d.ts`, 0.3.197 and
/// 0.3.332): on, failing to start rather than running commands unsandboxed, Bash allowed
/// without asking when sandboxed, no command let out (`allowUnsandboxedCommands: false`,
/// which also makes the project's own settings unable to widen these), reads of HOME and
/// the config folders denied but the project's and `~/.gitconfig` allowed back, writes in
/// the project (and the git folder a worktree commits into), and the network only to the
/// `hosts` the user allows (`strictAllowlist`: others refused, not asked about; 2.1.332
/// knows it, and 2.1.197 refuses an unlisted host in print mode anyway).
fn claude_settings(
    home: Option<&Path>,
    hidden: &[PathBuf],
    writable: &[&Path],
    hosts: &[String],
) -> String {
    claude_settings_value(home, hidden, writable, hosts).to_string()
}

fn claude_settings_value(
    home: Option<&Path>,
    hidden: &[PathBuf],
    writable: &[&Path],
    hosts: &[String],
) -> serde_json::Value {
    let real = |p: &Path| files::canonical(p).unwrap_or_else(|_| p.to_path_buf());
    let shown = |p: PathBuf| p.to_string_lossy().into_owned();
    let writable: Vec<String> = writable.iter().map(|w| shown(real(w))).collect();
    let mut readable = writable.clone();
    // Put back only if it is there (its real path, which exists).
    if let Some(gitconfig) = home.and_then(|h| files::canonical(&h.join(".gitconfig")).ok()) {
        readable.push(shown(gitconfig));
    }
    let denied: Vec<String> = hidden.iter().map(|h| shown(real(h))).collect();
    json!({
        "sandbox": {
            "enabled": true,
            "failIfUnavailable": true,
            "autoAllowBashIfSandboxed": true,
            "allowUnsandboxedCommands": false,
            "network": { "allowedDomains": hosts, "strictAllowlist": true },
            "filesystem": {
                "allowWrite": writable,
                "denyRead": denied,
                "allowRead": readable,
            },
        }
    })
}

/// What a contained loop's reviewer runs inside (`None` for an uncontained loop): a
/// reviewer command inside the checks' walls, a Claude Code reviewer inside Claude Code's
/// own sandbox with the agent's settings made read-only ([`reviewer_settings`]).
pub(super) fn reviewer(agent: &AgentSpec, env: &Env, project: &[&Path]) -> Option<ReviewSandbox> {
    let sandbox = agent.sandbox()?;
    let hidden = hidden_folders(env);
    Some(ReviewSandbox {
        walls: sandbox.check_walls().cloned(),
        claude_settings: reviewer_settings(env.install.home.as_deref(), &hidden, project),
    })
}

/// A reviewer's sandbox settings: the agent's reads (the `project` folders, not HOME),
/// but its commands write nowhere (`denyWrite` on the project: Claude Code's sandbox
/// otherwise lets a command write its working folder), reach no host, and are allowed
/// only by the reviewer's own allowed tools, never for being sandboxed.
fn reviewer_settings(home: Option<&Path>, hidden: &[PathBuf], project: &[&Path]) -> String {
    let mut settings = claude_settings_value(home, hidden, project, &[]);
    let sandbox = &mut settings["sandbox"];
    sandbox["autoAllowBashIfSandboxed"] = json!(false);
    let project = sandbox["filesystem"]["allowWrite"].take();
    sandbox["filesystem"]["allowWrite"] = json!([]);
    sandbox["filesystem"]["denyWrite"] = project;
    settings.to_string()
}

/// `pagent parallel --sandbox`: refused before any worktree is made where no task's loop
/// could contain its agent (each loop checks again, with its own folders).
pub(super) fn refuse_early(options: &Options, search: &SearchPath) -> anyhow::Result<()> {
    if !options.sandbox {
        return Ok(());
    }
    match (&options.command, options.agent) {
        (None, AgentKind::Claude) => {
            refuse_escapes(&options.permission_mode, &options.agent_args)?;
            refuse_host_ports(&options.allow_hosts)?;
            claude_code_ready(search)
        }
        (None, AgentKind::Codex) => {
            refuse_codex_sandbox(&options.agent_args)?;
            let walls = Containment::find(search).map_err(|e| anyhow!(texts::refusal(&e)))?;
            walls.check(search).map_err(|e| anyhow!(texts::refusal(&e)))
        }
        (None, AgentKind::Opencode) | (Some(_), _) => {
            let walls = Containment::find(search).map_err(|e| anyhow!(texts::refusal(&e)))?;
            walls.check(search).map_err(|e| anyhow!(texts::refusal(&e)))
        }
    }
}

/// The walls a contained team worker's landing checks run inside (the team's checks on
/// the merged tree, which is the project's code): pagent's walls with nothing writable
/// yet (each landing adds its worktree), checked once when the worker starts. `None`
/// when the worker's agents are not contained, or where a Claude Code loop's checks run
/// uncontained too (macOS, which has no bubblewrap; each story's loop says so). An agent
/// that cannot be contained refuses the worker here, before it claims anything.
pub(super) fn landing_walls(
    options: &Options,
    env: &Env,
    project: &Path,
    search: &SearchPath,
) -> anyhow::Result<Option<Containment>> {
    if !options.sandbox {
        return Ok(None);
    }
    refuse_early(options, search)?;
    if options.command.is_none() && !cfg!(target_os = "linux") {
        return Ok(None);
    }
    let hidden = hidden_folders(env);
    let config = config_folders(env);
    if let Some(dir) = hidden.iter().chain(&config).find(|dir| holds(project, dir)) {
        return Err(anyhow!(texts::holds_hidden(project, dir)));
    }
    walls(env, &hidden, &[], search).map(Some)
}

/// Whether the folder `outer` is `inner` or holds it, by their real paths.
fn holds(outer: &Path, inner: &Path) -> bool {
    match (files::canonical(outer), files::canonical(inner)) {
        (Ok(outer), Ok(inner)) => inner.starts_with(outer),
        _ => inner.starts_with(outer),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(vars: &[(&str, &Path)]) -> Env {
        let vars: Vec<(String, std::ffi::OsString)> = vars
            .iter()
            .map(|(k, v)| ((*k).to_owned(), v.as_os_str().to_owned()))
            .collect();
        Env::from_vars(
            |name| vars.iter().find(|(k, _)| k == name).map(|(_, v)| v.clone()),
            None,
        )
    }

    #[test]
    fn issue_35_codex_arguments_that_clash_with_the_walls_are_refused_with_their_reason() {
        let refused = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
            refuse_codex_sandbox(&args).err().map(|e| e.to_string())
        };
        // What Codex 0.171.0 refuses beside `--sandbox danger-full-access`.
        for (arg, named) in [
            ("--sandbox", "--sandbox"),
            ("--sandbox=read-only", "--sandbox"),
            ("-s", "-s"),
            ("-sread-only", "-s"),
            ("--approve-for-me", "--approve-for-me"),
        ] {
            let text = refused(&["--model", "m", arg]).unwrap_or_else(|| panic!("{arg}"));
            assert!(
                text.contains(&format!("does not take {named} beside")),
                "{text}"
            );
        }
        // What it takes there acts only inside the walls.
        for arg in [
            "--dangerously-bypass-approvals-and-sandbox",
            "-c",
            "sandbox_mode=read-only",
            "--skip-git-repo-check",
        ] {
            assert_eq!(refused(&[arg]), None, "{arg}");
        }
    }

    #[test]
    fn issue_35_the_walls_hide_the_password_databases_home_when_home_is_set_elsewhere() {
        let elsewhere = tempfile::tempdir().unwrap();
        let real = files::passwd_home().expect("a home in the password database");
        let hidden = hidden_folders(&env_with(&[("HOME", elsewhere.path())]));
        assert!(hidden.contains(&real), "{hidden:?}");
        assert!(
            hidden.contains(&elsewhere.path().to_path_buf()),
            "{hidden:?}"
        );
        // And with HOME unset, too.
        assert!(hidden_folders(&env_with(&[])).contains(&real));
    }

    #[test]
    #[allow(
        clippy::disallowed_methods,
        reason = "a fake HOME and its folders, no project's"
    )]
    fn issue_35_a_codex_home_linked_outside_home_is_hidden_by_its_real_path() {
        let root = tempfile::tempdir().unwrap();
        let root = files::canonical(root.path()).unwrap();
        let (home, outside) = (root.join("home"), root.join("dotfiles/codex"));
        std::fs::create_dir_all(&home).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        #[cfg(unix)]
        std::os::unix::fs::symlink(&outside, home.join(".codex")).unwrap();
        #[cfg(unix)]
        assert!(hidden_folders(&env_with(&[("HOME", &home)])).contains(&home.join(".codex")));
        // A Codex home inside HOME, spelled otherwise, is hidden with HOME, not over it
        // (a read-only folder laid over the contained Codex's own home).
        let inside = home.join("codex-elsewhere");
        std::fs::create_dir_all(&inside).unwrap();
        let spelled = root.join("home/../home/codex-elsewhere");
        let env = env_with(&[("HOME", &home), ("CODEX_HOME", &spelled)]);
        assert!(
            !hidden_folders(&env).contains(&inside),
            "{:?}",
            hidden_folders(&env)
        );
    }

    #[test]
    fn claude_codes_sandbox_settings_keep_commands_in_and_let_none_out() {
        let settings = claude_settings(
            None,
            &[PathBuf::from("/no/home")],
            &[Path::new("/no/project")],
            &["registry.example.org".to_owned()],
        );
        let v: serde_json::Value = serde_json::from_str(&settings).unwrap();
        let s = &v["sandbox"];
        assert_eq!(s["enabled"], true);
        assert_eq!(s["failIfUnavailable"], true);
        assert_eq!(s["autoAllowBashIfSandboxed"], true);
        assert_eq!(s["allowUnsandboxedCommands"], false);
        assert_eq!(
            s["network"]["allowedDomains"],
            json!(["registry.example.org"])
        );
        assert_eq!(s["network"]["strictAllowlist"], true);
        assert_eq!(s["filesystem"]["denyRead"], json!(["/no/home"]));
        assert_eq!(s["filesystem"]["allowWrite"], json!(["/no/project"]));
        assert_eq!(s["filesystem"]["allowRead"], json!(["/no/project"]));
    }

    #[test]
    fn issue_35_a_reviewers_sandbox_settings_write_nowhere_and_reach_no_host() {
        let settings = reviewer_settings(
            None,
            &[PathBuf::from("/no/home")],
            &[Path::new("/no/project"), Path::new("/no/repo/.git")],
        );
        let v: serde_json::Value = serde_json::from_str(&settings).unwrap();
        let s = &v["sandbox"];
        assert_eq!(s["enabled"], true);
        assert_eq!(s["failIfUnavailable"], true);
        assert_eq!(s["allowUnsandboxedCommands"], false);
        assert_eq!(s["autoAllowBashIfSandboxed"], false);
        assert_eq!(s["network"]["allowedDomains"], json!([]));
        assert_eq!(s["filesystem"]["allowWrite"], json!([]));
        assert_eq!(
            s["filesystem"]["denyWrite"],
            json!(["/no/project", "/no/repo/.git"])
        );
        assert_eq!(s["filesystem"]["denyRead"], json!(["/no/home"]));
        assert_eq!(
            s["filesystem"]["allowRead"],
            json!(["/no/project", "/no/repo/.git"])
        );
    }

    #[test]
    fn an_argument_that_would_let_claude_codes_commands_out_is_refused() {
        assert!(refuse_escapes("acceptEdits", &["--model".into(), "opus".into()]).is_ok());
        assert!(refuse_escapes("bypassPermissions", &[]).is_err());
        for arg in [
            "--settings",
            "--settings=x.json",
            "--dangerously-skip-permissions",
        ] {
            assert!(
                refuse_escapes("acceptEdits", &[arg.to_owned()]).is_err(),
                "{arg}"
            );
        }
    }
}

//! Every environment variable pagent reads, captured once at start-up.
//!
//! Reading the environment in one place keeps the rest of the binary a function of its
//! arguments (tests pass an `Env` they built) and documents the whole surface here.

use std::ffi::OsString;
use std::path::PathBuf;

use pagent_engine::Driver;

/// The project root Claude Code sets for hooks and `!` lines.
pub const CLAUDE_PROJECT_DIR: &str = "CLAUDE_PROJECT_DIR";
/// The current Claude Code session, set for hooks and `!` lines.
pub const CLAUDE_CODE_SESSION_ID: &str = "CLAUDE_CODE_SESSION_ID";
/// `loop` in agent processes started by `pagent loop`: their Stop hook stands aside.
pub const PAGENT_DRIVER: &str = "PAGENT_DRIVER";
/// `1` for the `pagent loop`s that `pagent parallel` starts: the register of loops calls
/// them parallel.
pub const PAGENT_PARALLEL: &str = "PAGENT_PARALLEL";
/// The launcher script's loop guard (`scripts/pagent`), for a chain of launchers; removed
/// for `pagent loop`'s agents, whose hooks start afresh.
pub const PAGENT_LAUNCHER_SEEN: &str = "PAGENT_LAUNCHER_SEEN";

// What pagent sets for the programs it starts (never read back here).

/// For a `pagent loop --command` agent: the file holding the iteration's prompt.
pub const PAGENT_PROMPT_FILE: &str = "PAGENT_PROMPT_FILE";
/// For agents and check commands: the loop's current stage.
pub const PAGENT_STAGE: &str = "PAGENT_STAGE";
/// For agents: the stage's iteration.
pub const PAGENT_ITERATION: &str = "PAGENT_ITERATION";
/// For agents and check commands: the project root.
pub const PAGENT_PROJECT_DIR: &str = "PAGENT_PROJECT_DIR";
/// For a PostToolUse check command: the edited file.
pub const PAGENT_FILE: &str = "PAGENT_FILE";
/// `1` in a reviewer agent's environment, so its own programs can tell it from a worker.
pub const PAGENT_REVIEW: &str = "PAGENT_REVIEW";
/// Where pagent keeps its per-user secret (default: `$XDG_CONFIG_HOME/pagent`, else
/// `~/.config/pagent`).
pub const PAGENT_CONFIG_DIR: &str = "PAGENT_CONFIG_DIR";
pub const XDG_CONFIG_HOME: &str = "XDG_CONFIG_HOME";
pub const HOME: &str = "HOME";
/// Windows: the user's roaming application data folder, where pagent's config folder is
/// (`%APPDATA%\pagent`) unless `PAGENT_CONFIG_DIR` says otherwise.
pub const APPDATA: &str = "APPDATA";
/// Windows: the user's profile folder, which Claude Code takes as the home folder there
/// (Node's and Bun's `os.homedir()`): `pagent install` puts `.claude` in it, as Claude Code
/// looks for it. `HOME` is Git Bash's, and unset in PowerShell and cmd.
pub const USERPROFILE: &str = "USERPROFILE";
/// Windows: the user's local application data folder, where `pagent install` stages the
/// plugin (`%LOCALAPPDATA%\pagent\marketplace`) unless `PAGENT_MARKETPLACE_DIR` or
/// `XDG_DATA_HOME` say otherwise.
pub const LOCALAPPDATA: &str = "LOCALAPPDATA";
/// Where check programs are looked up.
pub const PATH: &str = "PATH";
/// Claude Code's config folder (default `~/.claude`): where `pagent install` puts the
/// binary copy and the short command names.
pub const CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
/// Where `pagent install` stages the plugin's files (default
/// `$XDG_DATA_HOME/pagent/marketplace`, else `~/.local/share/pagent/marketplace`; on
/// Windows `%LOCALAPPDATA%\pagent\marketplace`).
pub const PAGENT_MARKETPLACE_DIR: &str = "PAGENT_MARKETPLACE_DIR";
pub const XDG_DATA_HOME: &str = "XDG_DATA_HOME";
/// The plugin folder `pagent install` installs from; the npm package's launcher sets it to
/// its own folder.
pub const PAGENT_PLUGIN_SOURCE: &str = "PAGENT_PLUGIN_SOURCE";
/// The program a `review` condition's reviewer runs (default: `claude`, `codex` or
/// `opencode` on `PATH`, as the review names).
pub const PAGENT_REVIEWER_BIN: &str = "PAGENT_REVIEWER_BIN";
/// `pagent dashboard`'s token when you choose it (needed to listen beyond loopback). A
/// secret: the process door removes it from every child's environment (see the test
/// below: every secret read here is in `process::SECRET_VARIABLES`).
pub const PAGENT_DASHBOARD_TOKEN: &str = "PAGENT_DASHBOARD_TOKEN";
/// `git -c` settings of the command that started pagent (git sets it for its aliases and
/// hooks): kept for the git processes pagent starts, before pagent's own settings.
pub const GIT_CONFIG_PARAMETERS: &str = "GIT_CONFIG_PARAMETERS";
/// What points git at another repository than the folder it runs in: removed for the git
/// processes pagent starts, which act on the repository whose configuration was checked.
pub const GIT_REPOSITORY_VARIABLES: &[&str] = &[
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_INDEX_FILE",
    "GIT_OBJECT_DIRECTORY",
    "GIT_ALTERNATE_OBJECT_DIRECTORIES",
    "GIT_NAMESPACE",
];
/// A token for the team's remote (what a GitHub Actions job gives pagent): handed to the
/// team's own `git fetch` and `git push` as an HTTP header, and removed from every other
/// child's environment. A secret.
pub const PAGENT_GIT_TOKEN: &str = "PAGENT_GIT_TOKEN";
/// The machine's name, for a team's status (`HOSTNAME` when exported, `COMPUTERNAME` on
/// Windows; else the kernel's).
pub const HOSTNAME: &str = "HOSTNAME";
pub const COMPUTERNAME: &str = "COMPUTERNAME";
/// A graphical session to open the dashboard in (X11 or Wayland).
pub const DISPLAY: &str = "DISPLAY";
pub const WAYLAND_DISPLAY: &str = "WAYLAND_DISPLAY";
/// Any value turns colour off (<https://no-color.org>).
pub const NO_COLOR: &str = "NO_COLOR";
/// The machine's time zone and zone database, for an agent's usage-limit reset time.
pub const TZ: &str = "TZ";
pub const TZDIR: &str = "TZDIR";
/// Set by Claude Code for its hooks and tools, with its version:
/// `claude-code_2-1-197_harness` (observed on 2.1.197, 2.1.330 and 2.1.332, in `-p` mode
/// and the terminal UI alike). Hook inputs carry no version.
pub const AI_AGENT: &str = "AI_AGENT";
/// The terminal's width and height when it cannot be asked (see `cli::screen`).
pub const COLUMNS: &str = "COLUMNS";
pub const LINES: &str = "LINES";

#[derive(Debug, Clone, Default)]
pub struct Env {
    pub project_dir: Option<PathBuf>,
    pub session_id: Option<String>,
    /// Who drives this process's loop: `Some(Driver::Loop)` inside `pagent loop`'s agents.
    pub driver: Option<Driver>,
    /// True in a `pagent loop` that `pagent parallel` started.
    pub parallel: bool,
    pub config_dir: Option<PathBuf>,
    pub no_color: bool,
    pub current_dir: Option<PathBuf>,
    pub path: Option<OsString>,
    pub reviewer_bin: Option<PathBuf>,
    /// `PAGENT_DASHBOARD_TOKEN`: the user's own dashboard token.
    pub dashboard_token: Option<String>,
    /// `GIT_CONFIG_PARAMETERS`, as inherited.
    pub git_config_parameters: Option<OsString>,
    /// `PAGENT_GIT_TOKEN`: a token for a team's remote.
    pub git_token: Option<String>,
    /// `HOSTNAME` or `COMPUTERNAME`, when set.
    pub host_name: Option<String>,
    /// Whether a graphical session is there to open a browser in (`DISPLAY` or
    /// `WAYLAND_DISPLAY` set; always on macOS).
    pub has_display: bool,
    /// `COLUMNS` and `LINES`: the terminal's size when no terminal answers the question.
    pub columns: Option<u16>,
    pub lines: Option<u16>,
    /// The pagent binary that `pagent parallel` starts and `pagent install` copies: `None`
    /// means this process's own. A test running [`crate::run`] in-process names the built
    /// binary here (its own executable is the test harness).
    pub exe: Option<PathBuf>,
    pub install: InstallEnv,
    /// `TZ` (set, even empty: empty means UTC) and `TZDIR`.
    pub tz: Option<OsString>,
    pub tzdir: Option<OsString>,
    /// The Claude Code version a hook runs under (`2.1.197`), from [`AI_AGENT`].
    pub claude_version: Option<String>,
}

/// What `pagent install` and `pagent uninstall` read: the user's own folders.
#[derive(Debug, Clone, Default)]
pub struct InstallEnv {
    pub home: Option<PathBuf>,
    pub claude_config_dir: Option<PathBuf>,
    pub marketplace_dir: Option<PathBuf>,
    pub xdg_data_home: Option<PathBuf>,
    pub plugin_source: Option<PathBuf>,
}

impl Env {
    /// The process's own environment and working directory.
    pub fn capture() -> Env {
        Env::from_vars(|name| std::env::var_os(name), std::env::current_dir().ok())
    }

    /// An environment read through `var` (the process's, or a test's map), with
    /// `current_dir` as the working directory.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>, current_dir: Option<PathBuf>) -> Env {
        let non_empty = |name: &str| var(name).filter(|v| !v.is_empty());
        let string = |name: &str| non_empty(name).and_then(|v| v.into_string().ok());
        let config_dir = Env::config_dir_from(&non_empty);
        Env {
            project_dir: non_empty(CLAUDE_PROJECT_DIR).map(PathBuf::from),
            session_id: string(CLAUDE_CODE_SESSION_ID),
            driver: string(PAGENT_DRIVER).as_deref().and_then(parse_driver),
            parallel: string(PAGENT_PARALLEL).as_deref() == Some("1"),
            config_dir,
            no_color: non_empty(NO_COLOR).is_some(),
            current_dir,
            path: var(PATH),
            reviewer_bin: non_empty(PAGENT_REVIEWER_BIN).map(PathBuf::from),
            dashboard_token: string(PAGENT_DASHBOARD_TOKEN),
            git_config_parameters: non_empty(GIT_CONFIG_PARAMETERS),
            git_token: string(PAGENT_GIT_TOKEN),
            host_name: string(HOSTNAME).or_else(|| string(COMPUTERNAME)),
            has_display: cfg!(target_os = "macos")
                || non_empty(DISPLAY).is_some()
                || non_empty(WAYLAND_DISPLAY).is_some(),
            columns: string(COLUMNS)
                .and_then(|v| v.trim().parse().ok())
                .filter(|n| *n > 0),
            lines: string(LINES)
                .and_then(|v| v.trim().parse().ok())
                .filter(|n| *n > 0),
            exe: None,
            install: InstallEnv {
                home: if cfg!(windows) {
                    non_empty(USERPROFILE).or_else(|| non_empty(HOME))
                } else {
                    non_empty(HOME)
                }
                .map(PathBuf::from),
                claude_config_dir: non_empty(CLAUDE_CONFIG_DIR).map(PathBuf::from),
                marketplace_dir: non_empty(PAGENT_MARKETPLACE_DIR).map(PathBuf::from),
                xdg_data_home: if cfg!(windows) {
                    non_empty(XDG_DATA_HOME).or_else(|| non_empty(LOCALAPPDATA))
                } else {
                    non_empty(XDG_DATA_HOME)
                }
                .map(PathBuf::from),
                plugin_source: non_empty(PAGENT_PLUGIN_SOURCE).map(PathBuf::from),
            },
            tz: var(TZ),
            tzdir: non_empty(TZDIR),
            claude_version: string(AI_AGENT).as_deref().and_then(claude_version),
        }
    }

    /// pagent's config folder: `PAGENT_CONFIG_DIR`, else `$XDG_CONFIG_HOME/pagent`, else
    /// `~/.config/pagent` (on Windows `%APPDATA%\pagent`).
    pub fn capture_config_dir() -> Option<PathBuf> {
        Env::config_dir_from(&|name: &str| std::env::var_os(name).filter(|v| !v.is_empty()))
    }

    fn config_dir_from(non_empty: &dyn Fn(&str) -> Option<OsString>) -> Option<PathBuf> {
        let explicit = non_empty(PAGENT_CONFIG_DIR).map(PathBuf::from);
        if cfg!(windows) {
            return explicit
                .or_else(|| non_empty(APPDATA).map(|a| PathBuf::from(a).join("pagent")));
        }
        explicit.or_else(|| {
            non_empty(XDG_CONFIG_HOME)
                .map(|x| PathBuf::from(x).join("pagent"))
                .or_else(|| {
                    non_empty(HOME).map(|h| PathBuf::from(h).join(".config").join("pagent"))
                })
        })
    }

    /// The pagent binary to start or copy: [`Env::exe`], else this process's own.
    pub fn pagent_exe(&self) -> std::io::Result<PathBuf> {
        self.exe.clone().map_or_else(std::env::current_exe, Ok)
    }

    /// True inside an agent process started by `pagent loop`.
    pub fn driven_by_loop(&self) -> bool {
        self.driver == Some(Driver::Loop)
    }
}

/// The version in [`AI_AGENT`]'s value (`claude-code_2-1-197_harness` gives `2.1.197`);
/// `None` for any other agent or shape.
pub fn claude_version(value: &str) -> Option<String> {
    let rest = value.strip_prefix("claude-code_")?;
    let version = rest.split('_').next()?;
    let parts: Vec<&str> = version.split('-').collect();
    let numbers = parts.len() == 3
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.len() <= 6 && p.bytes().all(|b| b.is_ascii_digit()));
    numbers.then(|| parts.join("."))
}

/// `PAGENT_DRIVER`'s value: `loop` or `hook`; anything else names no driver.
pub fn parse_driver(value: &str) -> Option<Driver> {
    match value {
        "loop" => Some(Driver::Loop),
        "hook" => Some(Driver::Hook),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_secret_pagent_reads_is_kept_from_its_children() {
        let secrets = [PAGENT_DASHBOARD_TOKEN, PAGENT_GIT_TOKEN];
        assert_eq!(crate::process::SECRET_VARIABLES, secrets);
    }

    #[test]
    fn only_the_drivers_own_names_name_a_driver() {
        assert_eq!(parse_driver("loop"), Some(Driver::Loop));
        assert_eq!(parse_driver("hook"), Some(Driver::Hook));
        for other in ["", "Loop", "loop ", "1"] {
            assert_eq!(parse_driver(other), None, "{other:?}");
        }
    }

    /// Issue 30, §4: the client a hook runs under, as Claude Code 2.1.197 and 2.1.332 name
    /// themselves to their hooks.
    #[test]
    fn issue_30_the_claude_code_version_comes_from_ai_agent() {
        for (value, version) in [
            ("claude-code_2-1-197_harness", Some("2.1.197")),
            ("claude-code_2-1-332_harness", Some("2.1.332")),
            ("claude-code_3-0-0", Some("3.0.0")),
            ("codex_0-171-0", None),
            ("claude-code_2-1_harness", None),
            ("claude-code_2-1-x_harness", None),
            ("claude-code_", None),
            ("", None),
        ] {
            assert_eq!(claude_version(value).as_deref(), version, "{value:?}");
        }
    }
}

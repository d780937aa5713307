//! Every environment variable pagent reads, captured once at start-up.
//!
//! Reading the environment in one place keeps the rest of the binary a function of its
//! arguments (tests pass an `Env` they built) and documents the whole surface here:
//! clippy's `disallowed-methods` (the root `clippy.toml`) bans `std::env::var` and its
//! friends everywhere else, and [`READ`] lists every name read, kept whole by a test that
//! watches [`Env::from_vars`] ask. The hooks' fast path reads its two or three variables
//! through the `capture_*` functions below, before the whole `Env` is worth capturing.
//! The one read outside this file is the door's `std::env::temp_dir` (`TMPDIR`; Windows
//! asks the system), where a checker's private scratch folder is made.

use std::ffi::OsString;
use std::path::PathBuf;

use pagent_engine::Driver;

/// The project root Claude Code sets for hooks and `!` lines.
pub const CLAUDE_PROJECT_DIR: &str = "CLAUDE_PROJECT_DIR";
/// The current Claude Code session, set for hooks and `!` lines.
pub const CLAUDE_CODE_SESSION_ID: &str = "CLAUDE_CODE_SESSION_ID";
/// Claude Code's cap on a turn's continuations in a row without a tool call (default 8,
/// 0 none), in the environment Claude Code gives its hooks (see `pagent_engine::block_cap`).
pub const CLAUDE_CODE_STOP_HOOK_BLOCK_CAP: &str = "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP";
/// `loop` in agent processes started by `pagent loop`: their Stop hook stands aside.
pub const PAGENT_DRIVER: &str = "PAGENT_DRIVER";
/// `1` for the `pagent loop`s that `pagent parallel` starts: the register of loops calls
/// them parallel.
pub const PAGENT_PARALLEL: &str = "PAGENT_PARALLEL";
/// The launcher script's loop guard (`scripts/pagent`), for a chain of launchers; removed
/// for `pagent loop`'s agents, whose hooks start afresh.
pub const PAGENT_LAUNCHER_SEEN: &str = "PAGENT_LAUNCHER_SEEN";
/// The pagent to run instead of the installed one (tests, a custom build): the launcher
/// runs it first, and so does the binary `pagent install` staged in the launcher's place.
pub const PAGENT_BIN: &str = "PAGENT_BIN";

/// What the binary `pagent install` staged in the launcher's place hands over to: the
/// program `PAGENT_BIN` names, when this process was started as `.../scripts/pagent` (by
/// a hook) and no launcher passed this way yet.
#[derive(Debug)]
pub struct StandIn {
    pub bin: PathBuf,
    /// The name this process was started by (the mark the stand-in gets).
    pub started_as: OsString,
    pub path: Option<OsString>,
    pub cwd: PathBuf,
}

/// Whether a test may rewrite the docs file it holds to the code (`PAGENT_BLESS_DOCS=1`).
#[cfg(test)]
#[allow(
    clippy::disallowed_methods,
    reason = "the one place the environment is read"
)]
pub fn bless_docs() -> bool {
    std::env::var_os("PAGENT_BLESS_DOCS").is_some()
}

/// [`StandIn`], read before anything else on the hooks' hot path: one lookup of an unset
/// variable in the common case.
#[allow(
    clippy::disallowed_methods,
    reason = "the one place the environment is read"
)]
pub fn staged_hook_stand_in() -> Option<StandIn> {
    let bin = std::env::var_os(PAGENT_BIN).filter(|b| !b.is_empty())?;
    if std::env::var_os(PAGENT_LAUNCHER_SEEN).is_some_and(|s| !s.is_empty()) {
        return None;
    }
    let started_as = std::env::args_os().next()?;
    let name = std::path::Path::new(&started_as);
    let staged = name.file_name() == Some(std::ffi::OsStr::new("pagent"))
        && name.parent().and_then(|p| p.file_name()) == Some(std::ffi::OsStr::new("scripts"));
    staged.then(|| StandIn {
        bin: PathBuf::from(bin),
        path: std::env::var_os(PATH),
        cwd: std::env::current_dir().unwrap_or_else(|_| PathBuf::from(".")),
        started_as,
    })
}

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
/// Codex's configuration folder (default `~/.codex`), copied for a contained Codex.
pub const CODEX_HOME: &str = "CODEX_HOME";
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

/// Every variable pagent reads (through this file), on the platform it was built for:
/// `docs/surface.md` counts them, and a test holds `Env` to the list.
pub const READ: &[&str] = &[
    CLAUDE_PROJECT_DIR,
    CLAUDE_CODE_SESSION_ID,
    PAGENT_DRIVER,
    PAGENT_PARALLEL,
    PAGENT_CONFIG_DIR,
    #[cfg(windows)]
    APPDATA,
    #[cfg(not(windows))]
    XDG_CONFIG_HOME,
    #[cfg(windows)]
    USERPROFILE,
    HOME,
    NO_COLOR,
    PATH,
    PAGENT_REVIEWER_BIN,
    PAGENT_DASHBOARD_TOKEN,
    GIT_CONFIG_PARAMETERS,
    #[cfg(not(target_os = "macos"))]
    DISPLAY,
    #[cfg(not(target_os = "macos"))]
    WAYLAND_DISPLAY,
    COLUMNS,
    LINES,
    CLAUDE_CONFIG_DIR,
    PAGENT_MARKETPLACE_DIR,
    XDG_DATA_HOME,
    #[cfg(windows)]
    LOCALAPPDATA,
    PAGENT_PLUGIN_SOURCE,
    CODEX_HOME,
    TZ,
    TZDIR,
    AI_AGENT,
    CLAUDE_CODE_STOP_HOOK_BLOCK_CAP,
    PAGENT_GIT_TOKEN,
    HOSTNAME,
    COMPUTERNAME,
    // Read by the staged binary before anything else ([`staged_hook_stand_in`]), not by `Env`.
    PAGENT_BIN,
    PAGENT_LAUNCHER_SEEN,
];

/// The names of [`READ`] that [`staged_hook_stand_in`] reads, before any `Env` exists.
#[cfg(test)]
const READ_BY_THE_STAND_IN: &[&str] = &[PAGENT_BIN, PAGENT_LAUNCHER_SEEN];

#[derive(Debug, Clone, Default)]
pub struct Env {
    pub project_dir: Option<PathBuf>,
    pub session_id: Option<String>,
    /// `CLAUDE_CODE_STOP_HOOK_BLOCK_CAP` as Claude Code set it for the hook, unparsed.
    pub stop_hook_block_cap: Option<String>,
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
    /// `XDG_CONFIG_HOME` (where OpenCode keeps its configuration, for `--sandbox`).
    pub xdg_config_home: Option<PathBuf>,
    /// `CODEX_HOME` (where Codex keeps its configuration, for `--sandbox`).
    pub codex_home: Option<PathBuf>,
    pub plugin_source: Option<PathBuf>,
}

impl Env {
    /// The process's own environment and working directory.
    #[allow(
        clippy::disallowed_methods,
        reason = "the one place the environment is read"
    )]
    pub fn capture() -> Env {
        Env::from_vars(|name| std::env::var_os(name), std::env::current_dir().ok())
    }

    /// An environment read through `var` (the process's, or a test's map), with
    /// `current_dir` as the working directory.
    pub fn from_vars(var: impl Fn(&str) -> Option<OsString>, current_dir: Option<PathBuf>) -> Env {
        let non_empty = |name: &str| var(name).filter(|v| !v.is_empty());
        let string = |name: &str| non_empty(name).and_then(|v| v.into_string().ok());
        let size = |name: &str| {
            string(name)
                .and_then(|v| v.trim().parse().ok())
                .filter(|n| *n > 0)
        };
        let config_dir = Env::config_dir_from(&non_empty);
        Env {
            project_dir: non_empty(CLAUDE_PROJECT_DIR).map(PathBuf::from),
            session_id: string(CLAUDE_CODE_SESSION_ID),
            stop_hook_block_cap: string(CLAUDE_CODE_STOP_HOOK_BLOCK_CAP),
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
            columns: size(COLUMNS),
            lines: size(LINES),
            exe: None,
            install: InstallEnv::from_vars(&non_empty),
            tz: var(TZ),
            tzdir: non_empty(TZDIR),
            claude_version: string(AI_AGENT).as_deref().and_then(claude_version),
        }
    }

    /// pagent's config folder: `PAGENT_CONFIG_DIR`, else `$XDG_CONFIG_HOME/pagent`, else
    /// `~/.config/pagent` (on Windows `%APPDATA%\pagent`). For the hooks' fast path.
    #[allow(
        clippy::disallowed_methods,
        reason = "the one place the environment is read"
    )]
    pub fn capture_config_dir() -> Option<PathBuf> {
        Env::config_dir_from(&|name: &str| std::env::var_os(name).filter(|v| !v.is_empty()))
    }

    /// `PAGENT_DRIVER` as [`Env::driver`] reads it. For the hooks' fast path.
    #[allow(
        clippy::disallowed_methods,
        reason = "the one place the environment is read"
    )]
    pub fn capture_driver() -> Option<Driver> {
        std::env::var(PAGENT_DRIVER)
            .ok()
            .as_deref()
            .and_then(parse_driver)
    }

    /// `CLAUDE_PROJECT_DIR` as [`Env::project_dir`] reads it. For the hooks' fast path.
    #[allow(
        clippy::disallowed_methods,
        reason = "the one place the environment is read"
    )]
    pub fn capture_project_dir() -> Option<PathBuf> {
        std::env::var_os(CLAUDE_PROJECT_DIR)
            .filter(|r| !r.is_empty())
            .map(PathBuf::from)
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

impl InstallEnv {
    fn from_vars(non_empty: &dyn Fn(&str) -> Option<OsString>) -> InstallEnv {
        let first = |names: &[&str]| names.iter().find_map(|name| non_empty(name));
        // Claude Code's home on Windows is the profile folder (`HOME` is Git Bash's), and
        // the staging folder there is the local application data.
        let (home, data) = if cfg!(windows) {
            (&[USERPROFILE, HOME][..], &[XDG_DATA_HOME, LOCALAPPDATA][..])
        } else {
            (&[HOME][..], &[XDG_DATA_HOME][..])
        };
        InstallEnv {
            home: first(home).map(PathBuf::from),
            claude_config_dir: non_empty(CLAUDE_CONFIG_DIR).map(PathBuf::from),
            marketplace_dir: non_empty(PAGENT_MARKETPLACE_DIR).map(PathBuf::from),
            xdg_data_home: first(data).map(PathBuf::from),
            xdg_config_home: non_empty(XDG_CONFIG_HOME).map(PathBuf::from),
            codex_home: non_empty(CODEX_HOME).map(PathBuf::from),
            plugin_source: non_empty(PAGENT_PLUGIN_SOURCE).map(PathBuf::from),
        }
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
        assert_eq!(pagent_door::process::SECRET_VARIABLES, secrets);
    }

    /// Issue 31, item 4: [`READ`] is every variable `Env` asks for: with none set, every
    /// fallback is asked too, so the names asked are all the names there are.
    #[test]
    fn issue_31_every_variable_read_is_listed_once() {
        let asked = std::cell::RefCell::new(std::collections::BTreeSet::new());
        let _ = Env::from_vars(
            |name| {
                asked.borrow_mut().insert(name.to_owned());
                None
            },
            None,
        );
        let listed: std::collections::BTreeSet<String> = READ
            .iter()
            .filter(|n| !READ_BY_THE_STAND_IN.contains(n))
            .map(|n| (*n).to_owned())
            .collect();
        assert_eq!(
            listed.len() + READ_BY_THE_STAND_IN.len(),
            READ.len(),
            "a name listed twice"
        );
        assert_eq!(asked.into_inner(), listed);
        for fast in [PAGENT_DRIVER, CLAUDE_PROJECT_DIR, PAGENT_CONFIG_DIR, HOME] {
            assert!(READ.contains(&fast), "{fast}");
        }
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

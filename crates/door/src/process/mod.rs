//! The one door to processes: every child pagent starts (a check, a reviewer, an agent,
//! the notifier, `git push`, `claude plugin`, `pagent parallel`'s loops) is started here,
//! and nothing else in pagent may create a process (the root `clippy.toml` bans
//! `std::process::Command::new` outside this crate, as it bans `std::fs` outside the
//! file door).
//!
//! A cloned repository is hostile, and a process is the easiest way in: a program found
//! through a `PATH` entry such as `.` or the empty one is the project's `./sh`; a Python
//! started in the project imports the project's `py_compile.py` before the standard one;
//! a check whose child calls `setsid` leaves the group and keeps the output pipe open. So
//! the rules, each kept here once:
//!
//! - **A program is an absolute path** ([`Program`]). A bare name is looked up in a
//!   [`SearchPath`]: `PATH` without its empty and relative entries and without any entry
//!   inside the project, so a name never resolves to a file of the project. A program of
//!   the project's own runs only when the caller has the user's consent for it and says
//!   so ([`Program::trusted_in_project`]). Every child gets that cleaned `PATH`, so a
//!   child's own lookups (a shell's, `go`'s `gcc`) cannot land in the project either.
//! - **Checkers run isolated** ([`Launch::isolated`]): from a working folder the project
//!   cannot write (`/`), with the interpreter flags that keep a project's files out of
//!   its import path (Python `-I`, which also ignores `PYTHON*` variables; `GOTOOLCHAIN=
//!   local` so a `go.mod` cannot pick the Go that runs). A tool that needs the project
//!   root (`cargo check`, `tsc`, `go vet`, a command the user configured or trusted) runs
//!   there, and only what the user trusted runs project code.
//! - **No secret of pagent's reaches a child** ([`SECRET_VARIABLES`]): the user's
//!   dashboard token and a team's token for its remote are removed from every child's
//!   environment, whoever the child is (an agent, a check, a reviewer, the notifier,
//!   git, gh, a browser opener), and whatever the caller set; a team's own git gets the
//!   token only as the header the team's git module sets for it.
//! - **Every child is owned**: in its own process group (a job object on Windows), with a
//!   time limit, its output capped while it is read, and the whole group killed when it
//!   ends or is stopped.
//!   Output is read with `poll`, never by a thread left blocked, so a grandchild that
//!   left the group (`setsid`) and holds the pipe costs a short drain, and what the check
//!   printed until then still reaches the feedback.
//!
//! - **A contained child stays in its project** ([`Launch::contained`]): a loop's agent
//!   under `--sandbox` starts inside bubblewrap, its walls a value of the launch
//!   ([`Containment`]) rather than arguments each caller adds; its network, when it
//!   has one, is a proxy of pagent's for the allowed hosts only ([`proxy`]).
//!
//! The rooms: [`path`] (the search path), [`isolate`] (what each checker needs to be
//! kept from the project's files), [`contain`] (the sandbox's walls), [`run`] (a child run to its end: checks and
//! short commands), [`spawn`] (children that outlive the call: agents, `pagent
//! parallel`'s loops, the notifier) and [`sys`] (the system calls: groups, signals,
//! `poll` on Unix; job objects, console control events and peeked pipes on Windows).

mod contain;
mod isolate;
mod path;
pub mod proxy;
mod run;
pub mod signals;
mod spawn;
mod sys;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::files;

pub use contain::{ContainError, Containment};
pub use isolate::node_guard;
pub use path::SearchPath;
pub use run::{Ran, RunLimits};
pub use spawn::{Running, Streams};

/// The variables holding a secret of pagent's, removed from every child's environment
/// (`cli/env.rs` names them; its test keeps its list and this one the same).
pub const SECRET_VARIABLES: &[&str] = &["PAGENT_DASHBOARD_TOKEN", "PAGENT_GIT_TOKEN"];

/// Where isolated checkers run: a folder no project can write into.
pub const NEUTRAL_DIR: &str = sys::NEUTRAL_DIR;

/// A program to start, always by absolute path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Program(PathBuf);

/// Why a program cannot be started.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProgramError {
    #[error("{0} is not installed (not found on PATH)")]
    NotFound(String),
    #[error("{0} must be an absolute path")]
    NotAbsolute(String),
    #[error(
        "{0} is inside the project; pagent does not start a project's own file unless you trusted it"
    )]
    InProject(String),
}

impl Program {
    /// `name` found on `path` (a name with a `/` (or on Windows a `\\`) is refused: it
    /// would name a file relative to wherever the child happens to run).
    pub fn named(name: &str, path: &SearchPath) -> Result<Program, ProgramError> {
        if name.contains('/') || (cfg!(windows) && name.contains(['\\', ':'])) || name.is_empty() {
            return Err(ProgramError::NotFound(name.to_owned()));
        }
        path.find(name)
            .map(Program)
            .ok_or_else(|| ProgramError::NotFound(name.to_owned()))
    }

    /// A program the user named on the command line (`--agent-bin`): relative to the
    /// folder they typed it in, wherever that is.
    pub fn named_by_user(path: &Path, cwd: Option<&Path>) -> Program {
        match cwd {
            Some(cwd) if path.is_relative() => Program(cwd.join(path)),
            _ => Program(path.to_path_buf()),
        }
    }

    /// A program named by an environment variable or a config file: absolute, and not a
    /// file of the project (a project's settings can set a hook's variables).
    pub fn from_setting(
        path: &Path,
        what: &str,
        search: &SearchPath,
    ) -> Result<Program, ProgramError> {
        if !path.is_absolute() {
            return Err(ProgramError::NotAbsolute(format!(
                "{what} ({})",
                path.display()
            )));
        }
        if search.is_in_project(path) {
            return Err(ProgramError::InProject(format!(
                "{what} ({})",
                path.display()
            )));
        }
        Ok(Program(path.to_path_buf()))
    }

    /// The project's own file `rel` under `root`: only for a program the user trusted (a
    /// command from a trusted workflow or config, or the user's own config).
    pub fn trusted_in_project(root: &Path, rel: &str) -> Program {
        Program(root.join(rel))
    }

    /// An absolute path pagent found itself (its own executable, a file of a package whose
    /// content the user trusted).
    pub fn at(path: PathBuf) -> Program {
        Program(path)
    }

    /// The POSIX shell, by its absolute path: `sh` looked up on a `PATH` of `.` would be
    /// the project's. On Windows, Git Bash (what Claude Code itself runs hooks with),
    /// found on the cleaned `path` or beside Git for Windows' `git.exe`.
    pub fn shell(path: &SearchPath) -> Program {
        Program(sys::shell(path))
    }

    pub fn path(&self) -> &Path {
        &self.0
    }

    /// The file name, for choosing an interpreter's isolation flags.
    fn name(&self) -> &str {
        self.0.file_name().and_then(OsStr::to_str).unwrap_or("")
    }
}

/// Why a child did not start, or could not be followed to its end; each names the
/// program. The message is the system's own, as the caller puts it in its context
/// (`cannot start the reviewer: ...`).
#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The program is not an executable regular file (checked before every start).
    #[error("{} is not an executable file", .0.display())]
    NotExecutable(PathBuf),
    /// The pipe for the child's output could not be made.
    #[error("cannot create a pipe: {0}")]
    Pipe(std::io::Error),
    /// The system did not start it.
    #[error("{error}")]
    Spawn {
        program: PathBuf,
        error: std::io::Error,
    },
    /// Waiting for its end failed.
    #[error("{error}")]
    Wait {
        program: PathBuf,
        error: std::io::Error,
    },
    /// It started, but without the output pipes asked for.
    #[error("the child's output pipes were not made")]
    NoPipes(PathBuf),
}

/// What the child's stdin gets.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Input {
    /// `/dev/null`.
    Null,
    /// A pipe the caller writes to ([`Running::take_stdin`]).
    Piped,
    /// The caller's own (an interactive set-up command).
    Inherit,
}

/// One child to start: a program, its arguments, folder and environment. Built up, then
/// started by [`Launch::run`], [`Launch::output`], [`Launch::spawn`],
/// [`Launch::spawn_detached`] or [`Launch::status`].
#[derive(Debug)]
pub struct Launch {
    program: Program,
    args: Vec<OsString>,
    cwd: PathBuf,
    set: Vec<(OsString, OsString)>,
    remove: Vec<OsString>,
    path: OsString,
    isolated: bool,
    own_group: bool,
    /// Started inside these walls ([`contain`]), or as it is.
    contained: Option<Containment>,
}

impl Launch {
    /// `program` with the cleaned `path` as its `PATH`, run in `cwd`.
    pub fn new(program: Program, cwd: &Path, path: &SearchPath) -> Launch {
        Launch {
            program,
            args: Vec::new(),
            cwd: cwd.to_path_buf(),
            set: Vec::new(),
            remove: Vec::new(),
            path: path.to_env(),
            isolated: false,
            own_group: true,
            contained: None,
        }
    }

    /// `sh -c LINE` (a command line the user wrote or trusted).
    pub fn shell(line: &str, cwd: &Path, path: &SearchPath) -> Launch {
        Launch::new(Program::shell(path), cwd, path)
            .arg("-c")
            .arg(line)
    }

    pub fn arg(mut self, arg: impl AsRef<OsStr>) -> Launch {
        self.args.push(arg.as_ref().to_os_string());
        self
    }

    pub fn args<I, S>(mut self, args: I) -> Launch
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.args
            .extend(args.into_iter().map(|a| a.as_ref().to_os_string()));
        self
    }

    pub fn env(mut self, key: impl AsRef<OsStr>, value: impl AsRef<OsStr>) -> Launch {
        self.set
            .push((key.as_ref().to_os_string(), value.as_ref().to_os_string()));
        self
    }

    pub fn env_remove(mut self, key: impl AsRef<OsStr>) -> Launch {
        self.remove.push(key.as_ref().to_os_string());
        self
    }

    /// A checker of pagent's own choosing (a built-in check): from [`NEUTRAL_DIR`], with
    /// the interpreter's isolation flags (see [`isolate`]). The project's files
    /// are reached only through the absolute paths in its arguments.
    pub fn isolated(self) -> Launch {
        self.isolated_in(Path::new(NEUTRAL_DIR))
    }

    /// [`Launch::isolated`], in `dir`: for a tool that needs the project's folder (`go
    /// vet` reads the module there; `tsc` and `cargo check` only once trusted).
    pub fn isolated_in(mut self, dir: &Path) -> Launch {
        self.isolated = true;
        self.cwd = dir.to_path_buf();
        self
    }

    /// Stays in the caller's process group, so a terminal's Ctrl-C reaches it too
    /// (`pagent parallel`'s loops, which stop themselves cleanly; a set-up command).
    pub fn in_callers_group(mut self) -> Launch {
        self.own_group = false;
        self
    }

    /// The program as an executable regular file, checked before every start: the
    /// kernel would say the same from `exec`, but not every way of starting says it back
    /// (qemu-user's `vfork` runs as a `fork`, so a missing program there is an exit 127,
    /// not an error), and a check here gives every caller one error for it.
    fn startable(&self) -> Result<(), StartError> {
        if files::is_executable_file(self.program.path()) {
            Ok(())
        } else {
            Err(StartError::NotExecutable(self.program.path().to_path_buf()))
        }
    }

    /// `command.spawn()`, its error naming the program.
    fn start(&self, command: &mut Command) -> Result<std::process::Child, StartError> {
        command.spawn().map_err(|error| StartError::Spawn {
            program: self.program.path().to_path_buf(),
            error,
        })
    }

    /// The `std::process::Command` this launch means: the only place one is made.
    fn command(&self, input: Input) -> Result<Command, StartError> {
        self.startable()?;
        let mut args = self.args.clone();
        let mut set = self.set.clone();
        if self.isolated {
            isolate::isolation(self.program.name(), &mut args, &mut set);
        }
        let mut command = match &self.contained {
            Some(walls) => {
                let mut command = Command::new(walls.program().path());
                command.args(walls.wrap(self.program.path(), &args, &self.cwd));
                command
            }
            None => {
                let mut command = Command::new(self.program.path());
                command.args(&args);
                command
            }
        };
        command.current_dir(&self.cwd);
        for key in &self.remove {
            command.env_remove(key);
        }
        command.env("PATH", &self.path);
        command.envs(set);
        // Last, so that no setting of a caller's brings one back.
        for key in SECRET_VARIABLES {
            command.env_remove(key);
        }
        command.stdin(match input {
            Input::Null => Stdio::null(),
            Input::Piped => Stdio::piped(),
            Input::Inherit => Stdio::inherit(),
        });
        if self.own_group {
            sys::own_group(&mut command);
        }
        Ok(command)
    }
}

// Tried with `sh` and Unix tools; Windows' own (job objects, pipes) in `tests_windows.rs`.
#[cfg(test)]
#[cfg(unix)]
mod tests;
#[cfg(test)]
#[cfg(windows)]
mod tests_windows;

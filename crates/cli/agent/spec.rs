//! Which agent CLI a loop runs (Claude Code, Codex, OpenCode, or any command line) and
//! the launch (through the process door) that starts it with the prompt.

use std::path::Path;

use pagent_protocol::stream::AgentKind;

use pagent_door::process::{Containment, Launch, Program, SearchPath};

/// How a `--sandbox` agent is kept to its project (`runner/sandbox.rs` chooses).
#[derive(Debug, Clone)]
pub enum Sandbox {
    /// Inside pagent's own walls (bubblewrap, the door's [`Containment`]).
    Walls(Containment),
    /// Inside Claude Code's own sandbox: these `settings` (JSON) handed to `claude -p` with
    /// `--settings`, the flag layer no project setting overrides. Claude Code keeps only its
    /// agent's commands in; the loop's checks run inside pagent's walls (`checks`), which
    /// exist where bubblewrap does (Linux), and run uncontained where it does not (macOS).
    ClaudeCode {
        settings: String,
        checks: Option<Containment>,
    },
}

impl Sandbox {
    /// The walls the loop's checks (the project's commands pagent runs itself) run inside.
    pub fn check_walls(&self) -> Option<&Containment> {
        match self {
            Sandbox::Walls(walls) => Some(walls),
            Sandbox::ClaudeCode { checks, .. } => checks.as_ref(),
        }
    }
}

/// Which agent CLI to run, and how.
#[derive(Debug, Clone)]
pub enum AgentSpec {
    Known {
        kind: AgentKind,
        program: Program,
        permission_mode: String,
        extra_args: Vec<String>,
        /// The sandbox it runs inside (`--sandbox`), or none.
        contain: Option<Sandbox>,
    },
    /// Any command line, run by `sh -c`: the prompt on stdin and in `$PAGENT_PROMPT_FILE`
    /// (`{prompt_file}` in the line is replaced by that path, quoted).
    Command {
        line: String,
        /// The sandbox it runs inside (`--sandbox`), or none.
        contain: Option<Sandbox>,
    },
}

impl AgentSpec {
    pub fn label(&self) -> String {
        match self {
            AgentSpec::Known { kind, .. } => kind.name().to_owned(),
            AgentSpec::Command { line, .. } => format!("`{line}`"),
        }
    }

    pub(super) fn kind(&self) -> Option<AgentKind> {
        match self {
            AgentSpec::Known { kind, .. } => Some(*kind),
            AgentSpec::Command { .. } => None,
        }
    }

    /// The launch in `cwd`, and whether the prompt goes on stdin: inside its walls when
    /// it is contained.
    pub(super) fn build(
        &self,
        prompt_file: &Path,
        cwd: &Path,
        search: &SearchPath,
    ) -> (Launch, bool) {
        let (launch, on_stdin) = self.launch(prompt_file, cwd, search);
        match self.sandbox() {
            Some(Sandbox::Walls(walls)) => (launch.contained(walls.clone()), on_stdin),
            _ => (launch, on_stdin),
        }
    }

    fn launch(&self, prompt_file: &Path, cwd: &Path, search: &SearchPath) -> (Launch, bool) {
        match self {
            AgentSpec::Known {
                kind: AgentKind::Claude,
                program,
                permission_mode,
                extra_args,
                contain,
            } => {
                let mut c = Launch::new(program.clone(), cwd, search).args([
                    "-p",
                    "--output-format",
                    "stream-json",
                    "--verbose",
                    "--permission-mode",
                    permission_mode,
                ]);
                c = c.args(extra_args);
                if let Some(Sandbox::ClaudeCode { settings, .. }) = contain {
                    c = c.args(["--settings", settings]);
                }
                (c, true)
            }
            AgentSpec::Known {
                kind: AgentKind::Codex,
                program,
                extra_args,
                contain,
                ..
            } => {
                let mut c = Launch::new(program.clone(), cwd, search).args(["exec", "--json"]);
                // Inside pagent's walls, the walls are the sandbox (Codex's own, nested,
                // does not start as root: it cannot map its uid there).
                if let Some(Sandbox::Walls(_)) = contain {
                    c = c.args(["--sandbox", "danger-full-access"]);
                }
                let c = c.args(extra_args).arg("-");
                (c, true)
            }
            AgentSpec::Known {
                kind: AgentKind::Opencode,
                program,
                extra_args,
                ..
            } => {
                // No message argument: `opencode run` then reads it from stdin, which has
                // no size limit (an argument is cut off by the OS at about 128 KiB).
                let c = Launch::new(program.clone(), cwd, search)
                    .args(["run", "--format", "json"])
                    .args(extra_args);
                (c, true)
            }
            AgentSpec::Command { line, .. } => {
                let quoted = format!("'{}'", prompt_file.to_string_lossy().replace('\'', r"'\''"));
                let c = Launch::shell(&line.replace("{prompt_file}", &quoted), cwd, search);
                (c, true)
            }
        }
    }

    /// The sandbox the agent runs inside, if it is contained (`--sandbox`).
    pub fn sandbox(&self) -> Option<&Sandbox> {
        match self {
            AgentSpec::Known { contain, .. } | AgentSpec::Command { contain, .. } => {
                contain.as_ref()
            }
        }
    }

    /// This agent, run inside `sandbox`.
    pub fn contained(mut self, sandbox: Sandbox) -> AgentSpec {
        match &mut self {
            AgentSpec::Known { contain, .. } | AgentSpec::Command { contain, .. } => {
                *contain = Some(sandbox);
            }
        }
        self
    }
}

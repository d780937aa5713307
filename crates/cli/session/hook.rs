//! The frame every hook shares, written once: stand aside when there is nothing to do
//! (before stdin is read), read Claude Code's input, resolve the project, let the hook
//! decide and apply, print its output, and turn any error into one report on stderr with
//! exit 1, which Claude Code reads as a non-blocking error (nothing here exits 2: the
//! stop, the prompt and the edit are always allowed on an error).
//!
//! A hook is then only its body ([`run_hook`]'s `body`): what it decides and writes,
//! given the input; `HookCall::project` resolves the project when the body needs it (the
//! compaction hook first checks the event is a compaction at all).

use std::io::Write;
use std::path::Path;

use pagent_protocol::{HookInput, HookOutput};

use super::{Hook, hook_stands_aside};
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::{Io, read_hook_input};
use crate::store::project::{Project, root_from_flag_or_env};
use crate::store::user::UserDir;

/// One hook call: its input, and what the body may ask of the frame.
pub struct HookCall<'a> {
    pub input: HookInput,
    pub env: &'a Env,
    pub stderr: &'a mut dyn Write,
    flag: Option<&'a Path>,
}

impl HookCall<'_> {
    /// The project: `--project`, else `CLAUDE_PROJECT_DIR`, else the input's `cwd`.
    pub fn project(&self) -> anyhow::Result<Project> {
        Project::resolve(self.flag, self.env, self.input.cwd.as_deref())
    }
}

/// Runs `hook`'s `body` inside the frame; `failed` is the sentence an error is reported
/// under ("the Stop hook failed, so Claude may stop").
pub fn run_hook(
    hook: Hook,
    flag: Option<&Path>,
    env: &Env,
    io: &mut Io,
    failed: &str,
    body: impl FnOnce(&mut HookCall) -> anyhow::Result<HookOutput>,
) -> ExitStatus {
    let root = root_from_flag_or_env(flag, env);
    if hook_stands_aside(hook, env.driver, root.as_deref(), &UserDir::of(env)) {
        return ExitStatus::Success;
    }
    let result = read_hook_input(io.stdin).and_then(|input| {
        body(&mut HookCall {
            input,
            env,
            stderr: &mut *io.stderr,
            flag,
        })
    });
    match result {
        Ok(output) => {
            if !output.is_empty() {
                // Unwritable stdout: Claude Code sees no output, which allows everything.
                let _ = writeln!(
                    io.stdout,
                    "{}",
                    serde_json::to_string(&output).unwrap_or_default()
                );
            }
            ExitStatus::Success
        }
        Err(err) => {
            ui::report(io.stderr, &err.context(failed.to_owned()));
            ExitStatus::Failure
        }
    }
}

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

use pagent_protocol::{HookEvent, HookInput, HookOutput};

use super::words;
use crate::cli::env::Env;
use crate::cli::exit::ExitStatus;
use crate::cli::ui;
use crate::io::{Io, read_hook_input};
use crate::store;
use crate::store::project::{Project, root_from_flag_or_env};
use crate::store::user::UserDir;

/// One hook call: its input, and what the body may ask of the frame.
pub struct HookCall<'a> {
    pub input: HookInput,
    pub env: &'a Env,
    pub stderr: &'a mut dyn Write,
    flag: Option<&'a Path>,
    event: HookEvent,
}

impl HookCall<'_> {
    /// The project: `--project`, else `CLAUDE_PROJECT_DIR`, else the input's `cwd`.
    pub fn project(&self) -> anyhow::Result<Project> {
        Project::resolve(self.flag, self.env, self.input.cwd.as_deref())
    }

    /// The session this call speaks for ([`hook_session`]); whose the loop is to it, the
    /// engine's one rule says (`pagent_engine::belongs`).
    pub fn session(&self) -> Option<String> {
        hook_session(self.event, &self.input, self.env.session_id.as_deref())
    }
}

/// The session a hook call speaks for, by one rule for every hook: the `session_id` of
/// Claude Code's input, which it always sends. Only the UserPromptSubmit and compaction
/// hooks, which act for the loop's owner alone and never claim a loop, fall back on the
/// session Claude Code's environment names (`CLAUDE_CODE_SESSION_ID`, `env_session`);
/// every other hook takes the input's alone: a Stop whose input names no session never
/// claims or continues a loop, whatever the environment says.
pub fn hook_session(
    event: HookEvent,
    input: &HookInput,
    env_session: Option<&str>,
) -> Option<String> {
    let env_too = matches!(
        event,
        HookEvent::UserPromptSubmit | HookEvent::PreCompact | HookEvent::SessionStart
    );
    input
        .session_id
        .clone()
        .or_else(|| env_session.filter(|_| env_too).map(str::to_owned))
}

/// Runs the `body` of the hook for `event` inside the frame; an error is reported under
/// the hook's sentence ([`words::failed`]: "the Stop hook failed, so Claude may stop").
pub fn run_hook(
    event: HookEvent,
    flag: Option<&Path>,
    env: &Env,
    io: &mut Io,
    body: impl FnOnce(&mut HookCall) -> anyhow::Result<HookOutput>,
) -> ExitStatus {
    let root = root_from_flag_or_env(flag, env);
    if hook_stands_aside(event, env.driver, root.as_deref(), &UserDir::of(env)) {
        return ExitStatus::Success;
    }
    let result = read_hook_input(io.stdin).and_then(|input| {
        body(&mut HookCall {
            input,
            env,
            stderr: &mut *io.stderr,
            flag,
            event,
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
            ui::report(io.stderr, &err.context(words::failed(event)));
            ExitStatus::Failure
        }
    }
}

/// The hooks' short-cut, decided before a hook reads its input, and in one place for the
/// binary's fast path (`dispatch::hook_fast_path`) and every hook's own run:
/// - inside an agent `pagent loop` started (`driver`), the Stop, prompt and compaction
///   hooks stand aside: the runner drives that loop from outside (edits are still
///   checked, by the loop's own settings);
/// - a named project (`root`) surely without a state file has no loop to act on (a
///   state the system cannot answer for, as one pending deletion on Windows, is there); for
///   PostToolUse, only if the user's own config (in `config_dir`) does not ask for checks
///   everywhere;
/// - UserPromptExpansion never stands aside: it answers pagent's own commands, loop or no
///   loop.
pub fn hook_stands_aside(
    event: HookEvent,
    driver: Option<pagent_engine::Driver>,
    root: Option<&Path>,
    user_dir: &UserDir,
) -> bool {
    if event == HookEvent::UserPromptExpansion {
        return false;
    }
    let edit = event == HookEvent::PostToolUse;
    if !edit && driver == Some(pagent_engine::Driver::Loop) {
        return true;
    }
    let Some(root) = root else {
        return false;
    };
    if !pagent_door::files::surely_absent(&root.join(store::project::STATE_FILE)) {
        return false;
    }
    !edit
        || !store::config::user_config_path(user_dir)
            .as_deref()
            .is_some_and(pagent_door::files::exists_no_follow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn issue_31_one_rule_says_which_session_a_hook_call_speaks_for() {
        let named = HookInput::from_json(br#"{"session_id": "s-input"}"#).unwrap();
        let nameless = HookInput::from_json(b"{}").unwrap();
        for event in HookEvent::ALL {
            // The input's session always wins, and with no environment there is no other.
            assert_eq!(
                hook_session(event, &named, Some("s-env")).as_deref(),
                Some("s-input")
            );
            assert_eq!(hook_session(event, &nameless, None), None);
            // The environment's only for the hooks that act for the owner alone.
            let from_env = hook_session(event, &nameless, Some("s-env"));
            let expected = match event {
                HookEvent::UserPromptSubmit | HookEvent::PreCompact | HookEvent::SessionStart => {
                    Some("s-env")
                }
                HookEvent::Stop
                | HookEvent::StopFailure
                | HookEvent::PostToolUse
                | HookEvent::UserPromptExpansion
                | HookEvent::SessionEnd => None,
            };
            assert_eq!(from_env.as_deref(), expected, "{}", event.name());
        }
    }
}

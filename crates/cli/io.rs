//! The process's streams and the inputs that are not arguments: [`Io`] (stdin, stdout,
//! stderr, passed down from `run` so tests can drive a whole command in-process), the
//! clock, readers for what arrives on stdin (a task, slash-command text, the hook's JSON),
//! and the hooks' fast path, which decides from the environment alone before anything
//! else is parsed.

use std::io::{Read, Write};
use std::time::{SystemTime, UNIX_EPOCH};

use anyhow::Context;
use pagent_engine::Timestamp;

use crate::cli::env::{self, Env};
use crate::cli::exit::ExitStatus;
use crate::session::{Hook, hook_stands_aside};

/// A command's three streams. `main` wires the process's own; tests pass buffers. Nothing
/// on a path a test drives reads or writes the process's streams directly.
pub struct Io<'a> {
    pub stdin: &'a mut dyn Read,
    pub stdout: &'a mut dyn Write,
    pub stderr: &'a mut dyn Write,
    /// Whether stdout is a terminal: colour and `pagent loop`'s redrawn status line.
    pub stdout_is_terminal: bool,
    /// Whether stdin is a terminal: then nothing waits for text on it (a task).
    pub stdin_is_terminal: bool,
}

impl std::fmt::Debug for Io<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Io")
            .field("stdout_is_terminal", &self.stdout_is_terminal)
            .field("stdin_is_terminal", &self.stdin_is_terminal)
            .finish_non_exhaustive()
    }
}

/// The wall clock, as the engine's timestamp. The only place the binary reads it for state.
pub fn now() -> Timestamp {
    Timestamp(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_secs()),
    )
}

/// Most bytes of text accepted on stdin for a task or slash-command arguments.
const MAX_STDIN_TEXT: u64 = 1024 * 1024;

/// Reads stdin as UTF-8 text (a task, or slash-command arguments).
pub fn read_stdin_text(stdin: &mut dyn Read) -> anyhow::Result<String> {
    let mut bytes = Vec::new();
    stdin
        .take(MAX_STDIN_TEXT + 1)
        .read_to_end(&mut bytes)
        .context("cannot read stdin")?;
    anyhow::ensure!(
        bytes.len() as u64 <= MAX_STDIN_TEXT,
        "the text on stdin is larger than 1 MiB"
    );
    String::from_utf8(bytes).context("the text on stdin is not UTF-8")
}

/// The hooks' common case, decided before anything else is parsed: Claude Code names the
/// project in `CLAUDE_PROJECT_DIR` and there is no state file, so there is nothing to do.
/// This runs on every Stop and every tool call of every session; it reads two or three
/// environment variables and checks one or two paths. `None` means "take the full path".
pub fn hook_fast_path() -> Option<ExitStatus> {
    let mut args = std::env::args_os().skip(1);
    let (Some(hook), Some(event), None) = (args.next(), args.next(), args.next()) else {
        return None;
    };
    if hook != "hook" {
        return None;
    }
    let hook = match event.to_str() {
        Some("stop") => Hook::Stop,
        Some("stop-failure") => Hook::StopFailure,
        Some("user-prompt-submit") => Hook::UserPrompt,
        Some("compact") => Hook::Compact,
        Some("post-tool-use") => Hook::PostToolUse,
        _ => return None,
    };
    let driver = std::env::var(env::PAGENT_DRIVER).ok();
    let root = std::env::var_os(env::CLAUDE_PROJECT_DIR).filter(|r| !r.is_empty());
    // The config folder matters only to PostToolUse without a state file.
    let config_dir = (hook == Hook::PostToolUse)
        .then(Env::capture_config_dir)
        .flatten();
    hook_stands_aside(
        hook,
        driver.as_deref().and_then(env::parse_driver),
        root.as_deref().map(std::path::Path::new),
        config_dir.as_deref(),
    )
    .then_some(ExitStatus::Success)
}

/// Hook input larger than this is refused (and the stop allowed).
const MAX_HOOK_INPUT: u64 = 64 * 1024 * 1024;

/// Reads and parses the JSON Claude Code sends a hook on stdin.
pub fn read_hook_input(stdin: &mut dyn Read) -> anyhow::Result<pagent_protocol::HookInput> {
    let mut bytes = Vec::new();
    stdin
        .take(MAX_HOOK_INPUT + 1)
        .read_to_end(&mut bytes)
        .context("cannot read the hook input on stdin")?;
    anyhow::ensure!(
        bytes.len() as u64 <= MAX_HOOK_INPUT,
        "the hook input on stdin is larger than {} MiB",
        MAX_HOOK_INPUT >> 20
    );
    anyhow::ensure!(
        !bytes.iter().all(u8::is_ascii_whitespace),
        "the hook input on stdin is empty (expected Claude Code's hook JSON)"
    );
    pagent_protocol::HookInput::from_json(&bytes)
        .context("the hook input on stdin is not Claude Code's hook JSON")
}

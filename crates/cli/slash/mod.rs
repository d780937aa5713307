//! pagent's own voice in Claude Code: its answers to its slash commands, on screen,
//! without the model relaying them.
//!
//! A slash command's `!` line runs before the model's turn and its output goes to the
//! model only; the user used to see pagent's words (the start line, an error, the status)
//! only if the model chose to copy them. Claude Code 2.1.197 and 2.1.330 both run a
//! `UserPromptExpansion` hook when a command is typed, before its body is expanded
//! (`docs/claude-code.md` has what each version does). pagent's hook answers there:
//!
//! - **status, cancel, `--help`, any error**: a block whose reason is pagent's text.
//!   Claude Code shows it under "UserPromptExpansion operation blocked by hook", sends
//!   nothing to the model and does not run the command's body: no model turn, no waiting.
//! - **a loop's set-up** (`/ralph`, `/pagent-run`), **resume** and **parallel**: the hook
//!   does the work and lets the command expand, with its one-line answer as a
//!   `systemMessage` ("UserPromptExpansion says: pagent: started ..."). The command's `!`
//!   line then hands the model its task ([`start::take_handoff`]): the model gets its
//!   turn, the user has already read pagent's words.
//! - **status while the loop is at work** (sent at once with 2.1.330's ctrl+x ctrl+s,
//!   which cuts the turn): the status is shown the same way and the command expands, so
//!   the model goes on with the loop instead of leaving it stalled ([`answer`]).
//!
//! The `!` lines keep working without the hook (an older hooks.json, a hook that failed):
//! they set the loop up themselves and ask the model to pass the start line on.
//!
//! This module decides and words; `cmd/hook_expansion.rs` reads the hook's input and
//! prints the answer, and `cmd/ralph.rs`, `cmd/run.rs` print the same set-up for a shell.

pub mod answer;
pub mod start;

use crate::cli::stdin_args::Slash;

/// One of pagent's slash commands, by the name Claude Code reports (`command_name`: the
/// typed name without its slash, `ralph` or `pagent:ralph`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Command {
    Ralph,
    Run,
    Parallel,
    Status,
    Cancel,
    Resume,
}

/// Every name pagent's commands go by: the plugin's (namespaced) and the short names
/// `pagent install` writes. hooks.json's `UserPromptExpansion` matcher lists exactly these
/// (a test keeps the two equal).
pub const NAMES: &[(&str, Command)] = &[
    ("ralph", Command::Ralph),
    ("pagent:ralph", Command::Ralph),
    ("pagent-run", Command::Run),
    ("pagent:run", Command::Run),
    ("pagent:parallel", Command::Parallel),
    ("pagent-status", Command::Status),
    ("pagent:status", Command::Status),
    ("pagent-cancel", Command::Cancel),
    ("pagent:cancel", Command::Cancel),
    ("ralph-cancel", Command::Cancel),
    ("pagent:ralph-cancel", Command::Cancel),
    ("pagent-resume", Command::Resume),
    ("pagent:resume", Command::Resume),
];

impl Command {
    /// The command Claude Code names `name`, if it is one of pagent's.
    pub fn named(name: &str) -> Option<Command> {
        NAMES.iter().find(|(n, _)| *n == name).map(|(_, c)| *c)
    }
}

/// `/ralph` as clap reads its options (help text included).
pub fn ralph_slash(name: &str) -> Slash<'_> {
    Slash {
        name,
        about: "Start a Ralph loop: Claude works on the task, and each time it stops pagent \
                gives it the task again, until its final message ends with the promise line \
                <promise>DONE</promise> (or a limit ends the loop). Options go after the task.",
        usage: "TASK [OPTIONS]",
        hidden: &["stdin_args", "prompt"],
    }
}

/// `/pagent-run` as clap reads its options.
pub fn run_slash(name: &str) -> Slash<'_> {
    Slash {
        name,
        about: "Run a pagent pipeline over a PRD (architect, qa, security, implementer, \
                verifier by default), each stage checked on the files before the next \
                begins; or, with --stories FILE, work through a plan's stories one at a time.",
        usage: "PRD_FILE [OPTIONS] | --stories FILE [OPTIONS]",
        hidden: &["stdin_args"],
    }
}

/// `/pagent:parallel` as clap reads its options.
pub fn parallel_slash(name: &str) -> Slash<'_> {
    Slash {
        name,
        about: "Run several Ralph loops at once with `pagent parallel`: one git worktree and \
                branch per task, fresh agent processes per iteration, a summary at the end.",
        usage: "TASKS_FILE [OPTIONS]",
        hidden: &["stdin_args", "dry_run"],
    }
}

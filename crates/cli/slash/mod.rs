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
//! This module decides and words; `hooks/expansion.rs` reads the hook's input and
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
        about: "Start a Ralph loop: at each stop pagent gives Claude the task again, until \
                it ends with <promise>DONE</promise> or a limit ends the loop.",
        usage: "TASK [OPTIONS]",
        hidden: &["stdin_args", "prompt"],
        shown: &[
            (
                "--max-iterations N",
                "end it after N iterations (default 25)",
            ),
            ("--promise TEXT", "the promise that ends it (default DONE)"),
            (
                "--no-progress-limit N",
                "give up after N unchanged turns (default 3)",
            ),
            ("--max-duration 2h", "end it after this long"),
            ("--max-tokens 500k", "end it after this many tokens"),
            ("--max-cost 5", "end it once it cost this many US dollars"),
            (
                "--review 'CRITERIA'",
                "a fresh reviewer must agree it is done",
            ),
            ("--force", "replace the active loop"),
        ],
        more: "Every option: `pagent ralph --help` in a terminal.",
    }
}

/// `/pagent-run` as clap reads its options.
pub fn run_slash(name: &str) -> Slash<'_> {
    Slash {
        name,
        about: "Run a pipeline over a PRD (architect, qa, security, implementer, verifier), \
                each stage checked on the files; or, with --stories FILE, a plan's stories one \
                at a time.",
        usage: "PRD_FILE [OPTIONS] | --stories FILE [OPTIONS]",
        hidden: &["stdin_args"],
        shown: &[
            ("--stories FILE", "work through a plan's stories instead"),
            ("--workflow NAME", "a workflow's name, or a JSON file"),
            ("--max-stages N", "stop after N stages"),
            ("--max-iterations N", "iterations per stage (default 25)"),
            ("--max-duration 2h", "end it after this long"),
            ("--max-cost 5", "end it once it cost this many US dollars"),
            (
                "--review 'CRITERIA'",
                "a fresh reviewer must agree it is done",
            ),
            ("--force", "replace the active loop"),
        ],
        more: "Every option: `pagent run --help` in a terminal.",
    }
}

/// `/pagent:parallel` as clap reads its options.
pub fn parallel_slash(name: &str) -> Slash<'_> {
    Slash {
        name,
        about: "Run several Ralph loops at once with `pagent parallel`, each in its own git \
                worktree and branch, fresh agent processes per iteration.",
        usage: "TASKS_FILE [OPTIONS]",
        hidden: &["stdin_args", "dry_run"],
        shown: &[
            ("-j N", "how many loops run at once (default 2)"),
            ("--max-iterations N", "iterations per task (default 25)"),
            ("--agent NAME", "claude, codex or opencode (default claude)"),
            ("--max-cost 5", "end a task's loop at this many US dollars"),
            ("--no-checkpoint", "leave each task's work uncommitted"),
            ("--merge", "then merge the completed branches here"),
        ],
        more: "Every option: `pagent parallel --help` in a terminal.",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::cli::args::{ParallelArgs, RalphArgs, RunArgs};
    use crate::cli::stdin_args::{help, usage_of};
    use clap::Args;

    /// hooks.json calls the UserPromptExpansion hook for exactly pagent's command names.
    #[test]
    fn item_1_the_expansion_hook_matches_every_command_name_and_no_other() {
        let hooks: serde_json::Value =
            serde_json::from_str(include_str!("../../../hooks/hooks.json")).unwrap();
        let entries = hooks["hooks"]["UserPromptExpansion"].as_array().unwrap();
        assert_eq!(entries.len(), 1);
        let matcher: Vec<&str> = entries[0]["matcher"].as_str().unwrap().split('|').collect();
        let names: Vec<&str> = NAMES.iter().map(|(n, _)| *n).collect();
        assert_eq!(matcher, names);
        let hook = &entries[0]["hooks"][0];
        assert_eq!(hook["command"], "${CLAUDE_PLUGIN_ROOT}/scripts/pagent");
        assert_eq!(
            hook["args"],
            serde_json::json!(["hook", "user-prompt-expansion"])
        );
    }

    /// Every hook is given in exec form: the launcher and its arguments, no shell.
    #[test]
    fn item_12_every_hook_runs_the_launcher_in_exec_form() {
        let hooks: serde_json::Value =
            serde_json::from_str(include_str!("../../../hooks/hooks.json")).unwrap();
        for (event, entries) in hooks["hooks"].as_object().unwrap() {
            for hook in entries[0]["hooks"].as_array().unwrap() {
                assert_eq!(
                    hook["command"], "${CLAUDE_PLUGIN_ROOT}/scripts/pagent",
                    "{event}"
                );
                assert_eq!(hook["args"][0], "hook", "{event}");
            }
        }
    }

    /// Every option a slash command's help names is one clap takes, its help fits an
    /// 80-column terminal in Claude Code's indent, and the whole help fits 24 rows.
    #[test]
    fn item_2_every_slash_help_names_real_options_and_fits_the_screen() {
        let commands = [
            (
                ralph_slash("/ralph"),
                usage_of(ralph_slash("/ralph"), &RalphArgs::augment_args),
            ),
            (
                run_slash("/pagent-run"),
                usage_of(run_slash("/pagent-run"), &RunArgs::augment_args),
            ),
            (
                parallel_slash("/pagent:parallel"),
                usage_of(
                    parallel_slash("/pagent:parallel"),
                    &ParallelArgs::augment_args,
                ),
            ),
        ];
        for (slash, command) in &commands {
            for (option, _) in slash.shown {
                let name = option.split_whitespace().next().unwrap();
                let found = command.get_arguments().any(|arg| {
                    arg.get_long().is_some_and(|l| format!("--{l}") == name)
                        || arg.get_short().is_some_and(|s| format!("-{s}") == name)
                });
                assert!(found, "{}: {name} is not an option", slash.name);
            }
            let text = help::render(slash);
            assert!(text.lines().count() <= 16, "{text}");
            for line in text.lines() {
                assert!(line.chars().count() <= help::WIDTH, "{line:?}");
            }
        }
    }
}

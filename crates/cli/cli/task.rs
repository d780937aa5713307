//! The task of a Ralph loop started from a shell: from the arguments, or from stdin. (The
//! slash command's text, with flags mixed in, is `slash::start::parse_ralph`'s.)
//!
//! Stdin is read for a task only when it is not a terminal (a pipe, a file, a
//! here-document): at a terminal `pagent ralph` with no task would sit waiting for an
//! end of file nobody knows to type, so it is an error that says how to give the task.

use anyhow::bail;

use crate::cli::args::RalphArgs;
use crate::io::read_stdin_text;

/// The arguments and the task, from argv or stdin; `command` is how the user started it
/// (`pagent ralph`), for the error that says how.
pub fn resolve(
    args: RalphArgs,
    stdin: &mut dyn std::io::Read,
    stdin_is_terminal: bool,
    command: &str,
) -> anyhow::Result<(RalphArgs, String)> {
    let (args, task) = if args.prompt.is_empty() {
        if stdin_is_terminal {
            bail!(
                "no task given: name it after `ralph` (`{command} \"Make the tests pass\"`), or pipe it in \
                 (`echo \"Make the tests pass\" | {command}`); stdin is a terminal, so pagent does not wait for it"
            );
        }
        let text = read_stdin_text(stdin)?;
        (args, text.trim_end_matches(['\n', '\r']).to_owned())
    } else {
        let task = args.prompt.join(" ");
        (args, task)
    };
    if task.trim().is_empty() {
        // Only a session's loop has a slash command; `pagent loop ralph` has none.
        let slash = if command == "pagent ralph" {
            " (or /pagent:ralph Make the tests pass)"
        } else {
            ""
        };
        bail!("give the task, e.g. `{command} \"Make the tests pass\"`{slash}");
    }
    Ok((args, task))
}

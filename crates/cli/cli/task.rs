//! The task of a Ralph loop started from a shell: from the arguments, or from stdin. (The
//! slash command's text, with flags mixed in, is `slash::start::parse_ralph`'s.)

use anyhow::bail;

use crate::cli::args::RalphArgs;
use crate::io::read_stdin_text;

/// The arguments and the task, from argv or stdin.
pub fn resolve(
    args: RalphArgs,
    stdin: &mut dyn std::io::Read,
) -> anyhow::Result<(RalphArgs, String)> {
    let (args, task) = if args.prompt.is_empty() {
        let text = read_stdin_text(stdin)?;
        (args, text.trim_end_matches(['\n', '\r']).to_owned())
    } else {
        let task = args.prompt.join(" ");
        (args, task)
    };
    if task.trim().is_empty() {
        bail!(
            "give the task, e.g. `pagent ralph \"Make the tests pass\"` (or /pagent:ralph Make the tests pass)"
        );
    }
    Ok((args, task))
}

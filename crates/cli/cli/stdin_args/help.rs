//! A slash command's `--help`, short enough for the screen it is shown on.
//!
//! pagent's UserPromptExpansion hook shows the help in Claude Code's transcript, indented,
//! in what is often an 80x24 terminal, and a block taller than the terminal loses its top
//! (Claude Code redraws it in place). clap's help of `/ralph` is 45 lines at that width,
//! `/pagent-run`'s 60. So a slash command's help is its summary, its usage, one line for
//! each common option (written for this screen, in the command's [`super::Slash`]; a test
//! keeps every name a real option), and where the whole list is.

/// Where both clients wrap a hook's text in an 80-column terminal (about 70 columns, after
/// their indent): a line of the help never reaches it.
pub const WIDTH: usize = 68;

/// The help of `slash`.
pub fn render(slash: &super::Slash<'_>) -> String {
    let mut out = wrap(slash.about);
    out.push_str(&format!("\n\nUsage: {} {}\n", slash.name, slash.usage));
    let column = slash
        .shown
        .iter()
        .map(|(option, _)| option.chars().count())
        .max()
        .unwrap_or(0)
        + 2;
    for (option, what) in slash.shown {
        out.push_str(&format!("  {option:column$}{what}\n"));
    }
    out.push_str(slash.more);
    out
}

/// `text` wrapped at [`WIDTH`] columns, at spaces.
fn wrap(text: &str) -> String {
    let mut lines = vec![String::new()];
    for word in text.split_whitespace() {
        let current = lines.last_mut().map_or(0, |l| l.chars().count());
        if current > 0 && current + 1 + word.chars().count() > WIDTH {
            lines.push(String::new());
        }
        if let Some(line) = lines.last_mut() {
            if !line.is_empty() {
                line.push(' ');
            }
            line.push_str(word);
        }
    }
    lines.join("\n")
}

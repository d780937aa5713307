//! Slash-command argument text, parsed without a shell.
//!
//! The plugin's commands hand `$ARGUMENTS` to pagent on stdin through a quoted
//! here-document, so no shell ever sees the user's text. This module splits that text
//! the way a person expects (whitespace separates words, balanced quotes group them) but
//! never fails on it: an apostrophe in "Fix it's parser" is just a character. For a ralph
//! task, recognised flags are cut out and everything else is the task, byte for byte.

/// One word of the text and where it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Word {
    pub start: usize,
    pub end: usize,
    /// The word with balanced quotes removed.
    pub value: String,
}

pub fn split_words(text: &str) -> Vec<Word> {
    let mut words = Vec::new();
    let mut chars = text.char_indices().peekable();
    while let Some(&(start, c)) = chars.peek() {
        if c.is_whitespace() {
            chars.next();
            continue;
        }
        let mut value = String::new();
        let mut end = start;
        while let Some(&(i, c)) = chars.peek() {
            if c.is_whitespace() {
                break;
            }
            if (c == '"' || c == '\'')
                && let Some(close) = text[i + 1..].find(c)
            {
                value.push_str(&text[i + 1..i + 1 + close]);
                end = i + 1 + close + 1;
                while chars.peek().is_some_and(|&(j, _)| j < end) {
                    chars.next();
                }
                continue;
            }
            value.push(c);
            end = i + c.len_utf8();
            chars.next();
        }
        words.push(Word { start, end, value });
    }
    words
}

/// The words' values, for a clap parse.
pub fn values(text: &str) -> Vec<String> {
    split_words(text).into_iter().map(|w| w.value).collect()
}

/// Parses `words` as the arguments of the slash command `name` (clap's own message on
/// a usage error, without the exit code 2 clap would use).
pub fn parse_words<A: clap::Args + clap::FromArgMatches>(
    name: &'static str,
    words: impl IntoIterator<Item = String>,
) -> anyhow::Result<A> {
    let command = A::augment_args(clap::Command::new(name).no_binary_name(true));
    let matches = command
        .try_get_matches_from(words)
        .map_err(|e| anyhow::anyhow!("{}", e.render().to_string().trim_end()))?;
    Ok(A::from_arg_matches(&matches)?)
}

/// A ralph command line: the task and the flags found around it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RalphLine {
    pub task: String,
    /// Flags and their values, in order, ready for clap (`--promise`, `DONE`, ...).
    pub flags: Vec<String>,
}

const VALUE_FLAGS: &[&str] = &[
    "--max-iterations",
    "--promise",
    "--completion-promise",
    "--no-progress-limit",
];
const SWITCHES: &[&str] = &["--force"];

pub fn parse_ralph_line(text: &str) -> RalphLine {
    let words = split_words(text);
    let mut cut: Vec<(usize, usize)> = Vec::new();
    let mut flags = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        let (name, inline) = match word.value.split_once('=') {
            Some((name, value)) if VALUE_FLAGS.contains(&name) => {
                (name.to_owned(), Some(value.to_owned()))
            }
            _ => (word.value.clone(), None),
        };
        if SWITCHES.contains(&name.as_str()) {
            flags.push(name);
            cut.push((word.start, word.end));
        } else if VALUE_FLAGS.contains(&name.as_str()) {
            match inline {
                Some(value) => {
                    flags.extend([name, value]);
                    cut.push((word.start, word.end));
                }
                None if i + 1 < words.len() => {
                    flags.extend([name, words[i + 1].value.clone()]);
                    cut.push((word.start, words[i + 1].end));
                    i += 1;
                }
                None => {}
            }
        }
        i += 1;
    }
    let mut task = String::with_capacity(text.len());
    let mut from = 0;
    for (start, end) in cut {
        task.push_str(text[from..start].trim_end());
        if !task.is_empty() {
            task.push(' ');
        }
        from = end;
    }
    task.push_str(&text[from..]);
    let task = task.trim();
    RalphLine {
        task: unquote_whole(task).to_owned(),
        flags,
    }
}

/// `"Fix the tests"` → `Fix the tests`, only when the quotes wrap the whole text.
fn unquote_whole(text: &str) -> &str {
    for quote in ['"', '\''] {
        if text.len() >= 2
            && text.starts_with(quote)
            && text.ends_with(quote)
            && !text[1..text.len() - 1].contains(quote)
        {
            return &text[1..text.len() - 1];
        }
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splits_words_with_balanced_quotes_only() {
        assert_eq!(
            values("prd.md --workflow 'my flow' --max-iterations=3"),
            ["prd.md", "--workflow", "my flow", "--max-iterations=3"]
        );
        assert_eq!(values("\"docs/my prd.md\""), ["docs/my prd.md"]);
        assert_eq!(values("it's fine"), ["it's", "fine"]);
        assert_eq!(values("  "), Vec::<String>::new());
    }

    #[test]
    fn ralph_lines_keep_the_task_byte_for_byte() {
        let cases: &[(&str, &str, &[&str])] = &[
            ("Fix the tests", "Fix the tests", &[]),
            (
                "\"Fix the tests\" --max-iterations 5",
                "Fix the tests",
                &["--max-iterations", "5"],
            ),
            (
                "--promise 'ALL DONE' Build it",
                "Build it",
                &["--promise", "ALL DONE"],
            ),
            (
                "Build it --completion-promise=SHIPPED --force",
                "Build it",
                &["--completion-promise", "SHIPPED", "--force"],
            ),
            (
                "Fix it's \"parser\"; run $(touch pwned) `id` (x) \\n\nsecond line",
                "Fix it's \"parser\"; run $(touch pwned) `id` (x) \\n\nsecond line",
                &[],
            ),
            ("Explain --max-iterations", "Explain --max-iterations", &[]),
            ("\n  indented task\n", "indented task", &[]),
        ];
        for (text, task, flags) in cases {
            let line = parse_ralph_line(text);
            assert_eq!(line.task, *task, "{text:?}");
            assert_eq!(line.flags, *flags, "{text:?}");
        }
    }
}

//! Slash-command argument text, parsed without a shell.
//!
//! The plugin's commands hand `$ARGUMENTS` to pagent on stdin through a quoted
//! here-document, so no shell ever sees the user's text. This module splits that text
//! the way a person expects (whitespace separates words, balanced quotes group them) but
//! never fails on it: an apostrophe in "Fix it's parser" is just a character. For a ralph
//! task, options count only as a run at the end (or before a `--`); everything else is
//! the task, byte for byte (see [`parse_ralph_line`]).

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

/// A ralph command line: the task and the options found after it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RalphLine {
    pub task: String,
    /// Options and their values, in order, ready for clap (`--promise`, `DONE`, ...).
    pub flags: Vec<String>,
}

const NUMBER_FLAGS: &[&str] = &[
    "--max-iterations",
    "--no-progress-limit",
    "--review-timeout",
];
const TEXT_FLAGS: &[&str] = &["--promise", "--completion-promise", "--review"];
const SWITCHES: &[&str] = &["--force", "--trust"];
/// Budgets: a value that looks like one (`2h`, `500k`, `$5`, `0.50`) is checked by clap.
const BUDGET_FLAGS: &[&str] = &["--max-duration", "--max-tokens", "--max-cost"];

/// Splits slash-command text into the task and its options. Options are recognised only
/// as a run at the very end of the text (`Fix the parser --max-iterations 5`), or as a
/// run before a `--` that starts the task (`--promise SHIPPED -- Release 1.2`); anything
/// else is task text, byte for byte, so `Remove the --force flag from deploy.sh` keeps its
/// `--force`. A value must look like one: a number for `--max-iterations` and
/// `--no-progress-limit`; for `--promise`, quoted text or a word without lower-case
/// letters (`DONE`, `SHIPPED`), so `Document the --promise option` is a task too.
pub fn parse_ralph_line(text: &str) -> RalphLine {
    let words = split_words(text);
    if let Some(dash) = words
        .iter()
        .position(|w| w.value == "--" && is_bare(text, w))
        && let Some(flags) = option_run(text, &words[..dash])
    {
        return RalphLine {
            task: unquote_whole(text[words[dash].end..].trim()).to_owned(),
            flags,
        };
    }
    for start in 0..words.len() {
        if let Some(flags) = option_run(text, &words[start..]) {
            let task = text[..words[start].start].trim();
            return RalphLine {
                task: unquote_whole(task).to_owned(),
                flags,
            };
        }
    }
    RalphLine {
        task: unquote_whole(text.trim()).to_owned(),
        flags: Vec::new(),
    }
}

/// Whether the word was typed without quotes.
fn is_bare(text: &str, word: &Word) -> bool {
    text[word.start..word.end] == word.value
}

/// `words` as options and their values, when every word is one; `None` otherwise (and
/// for no words at all).
fn option_run(text: &str, words: &[Word]) -> Option<Vec<String>> {
    if words.is_empty() {
        return None;
    }
    let mut flags = Vec::new();
    let mut i = 0;
    while i < words.len() {
        let word = &words[i];
        if !is_bare(text, word) {
            return None;
        }
        let (name, inline) = match word.value.split_once('=') {
            Some((name, value)) => (name, Some((value.to_owned(), true))),
            None => (word.value.as_str(), None),
        };
        if SWITCHES.contains(&name) && inline.is_none() {
            flags.push(name.to_owned());
            i += 1;
            continue;
        }
        if !NUMBER_FLAGS.contains(&name)
            && !TEXT_FLAGS.contains(&name)
            && !BUDGET_FLAGS.contains(&name)
        {
            return None;
        }
        let (value, quoted) = match inline {
            Some(value) => value,
            None => {
                let next = words.get(i + 1)?;
                i += 1;
                (next.value.clone(), !is_bare(text, next))
            }
        };
        let plausible = if NUMBER_FLAGS.contains(&name) {
            !value.is_empty() && value.bytes().all(|b| b.is_ascii_digit())
        } else if BUDGET_FLAGS.contains(&name) {
            looks_like_a_budget(&value)
        } else {
            quoted || (!value.is_empty() && !value.chars().any(char::is_lowercase))
        };
        if !plausible {
            return None;
        }
        flags.extend([name.to_owned(), value]);
        i += 1;
    }
    Some(flags)
}

/// `2h`, `1h30m`, `500k`, `2M`, `$5`, `0.50`: starts with a digit (or `$`, `.`) and holds
/// nothing but digits, `.`, `_`, `$` and unit letters.
fn looks_like_a_budget(value: &str) -> bool {
    value.starts_with(|c: char| c.is_ascii_digit() || c == '$' || c == '.')
        && value.chars().any(|c| c.is_ascii_digit())
        && value
            .chars()
            .all(|c| c.is_ascii_digit() || "._$smhdkKMGB".contains(c))
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

    /// The slash-command flag rule as a table: (text, task, options).
    #[test]
    fn ralph_lines_keep_the_task_byte_for_byte() {
        let cases: &[(&str, &str, &[&str])] = &[
            ("Fix the tests", "Fix the tests", &[]),
            (
                "Fix the tests --max-tokens 500k --max-duration 1h30m --max-cost $5",
                "Fix the tests",
                &[
                    "--max-tokens",
                    "500k",
                    "--max-duration",
                    "1h30m",
                    "--max-cost",
                    "$5",
                ],
            ),
            // A budget flag without a budget-like value is the task's words.
            (
                "Document the --max-cost option",
                "Document the --max-cost option",
                &[],
            ),
            (
                "Lower the --max-tokens default",
                "Lower the --max-tokens default",
                &[],
            ),
            (
                "\"Fix the tests\" --max-iterations 5",
                "Fix the tests",
                &["--max-iterations", "5"],
            ),
            (
                "Build it --completion-promise=SHIPPED --force",
                "Build it",
                &["--completion-promise", "SHIPPED", "--force"],
            ),
            (
                "Build it --promise 'all done' --no-progress-limit 0",
                "Build it",
                &["--promise", "all done", "--no-progress-limit", "0"],
            ),
            (
                "--promise SHIPPED --max-iterations=3 -- Release 1.2 --force",
                "Release 1.2 --force",
                &["--promise", "SHIPPED", "--max-iterations", "3"],
            ),
            // Options inside the task are the task's words.
            (
                "Remove the --force flag from deploy.sh",
                "Remove the --force flag from deploy.sh",
                &[],
            ),
            (
                "Remove the --force flag from deploy.sh --max-iterations 5",
                "Remove the --force flag from deploy.sh",
                &["--max-iterations", "5"],
            ),
            (
                "Document the --promise option",
                "Document the --promise option",
                &[],
            ),
            ("Explain --max-iterations", "Explain --max-iterations", &[]),
            ("Set --max-iterations ten", "Set --max-iterations ten", &[]),
            (
                "--promise 'ALL DONE' Build it",
                "--promise 'ALL DONE' Build it",
                &[],
            ),
            ("Fix a -- b", "Fix a -- b", &[]),
            ("Quote \"--force\"", "Quote \"--force\"", &[]),
            ("Fill in {{story}}", "Fill in {{story}}", &[]),
            (
                "Fix it's \"parser\"; run $(touch pwned) `id` (x) \\n\nsecond line",
                "Fix it's \"parser\"; run $(touch pwned) `id` (x) \\n\nsecond line",
                &[],
            ),
            ("\n  indented task\n", "indented task", &[]),
            ("--max-iterations 5", "", &["--max-iterations", "5"]),
        ];
        for (text, task, flags) in cases {
            let line = parse_ralph_line(text);
            assert_eq!(line.task, *task, "{text:?}");
            assert_eq!(line.flags, *flags, "{text:?}");
        }
    }
}

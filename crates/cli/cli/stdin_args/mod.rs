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

/// A slash command whose arguments arrive as text: its name as the user typed it
/// (`/ralph`, `/pagent:run`), what it does and how it is used, for its `--help`.
#[derive(Debug, Clone, Copy)]
pub struct Slash<'a> {
    pub name: &'a str,
    pub about: &'static str,
    /// After the name: `TASK [OPTIONS]`.
    pub usage: &'static str,
    /// Argument ids of the shell command that mean nothing after a slash command.
    pub hidden: &'static [&'static str],
    /// The options its `--help` lists, as typed and what they do: the common ones, one
    /// line each, so the help fits a terminal.
    pub shown: &'static [(&'static str, &'static str)],
    /// The help's last line: where every option is described.
    pub more: &'static str,
}

/// The command clap parses `slash`'s words with (hidden options hidden).
pub fn usage_of(
    slash: Slash<'_>,
    augment: &dyn Fn(clap::Command) -> clap::Command,
) -> clap::Command {
    let mut command = augment(
        clap::Command::new("slash-command")
            .bin_name(slash.name.to_owned())
            .no_binary_name(true)
            .disable_version_flag(true),
    )
    // The derive's flattened structs set an `about` of their own: ours goes on last.
    .about(slash.about)
    .override_usage(format!("{} {}", slash.name, slash.usage));
    for id in slash.hidden {
        command = command.mut_arg(*id, |arg| arg.hide(true));
    }
    command
}

/// What the words of a slash command asked for.
#[derive(Debug)]
pub enum Parsed<A> {
    Args(A),
    /// `--help` (or `-h`) was among them: the command's help, to show, and nothing done.
    Help(String),
}

/// Parses `words` as the arguments of the slash command `slash`. A usage error is one
/// sentence ([`super::clap_error::sentence`]), never clap's exit code 2.
pub fn parse_words<A: clap::Args + clap::FromArgMatches>(
    slash: Slash<'_>,
    words: impl IntoIterator<Item = String>,
) -> anyhow::Result<Parsed<A>> {
    let command = usage_of(slash, &A::augment_args);
    let matches = match command.clone().try_get_matches_from(words) {
        Ok(matches) => matches,
        Err(err) if err.kind() == clap::error::ErrorKind::DisplayHelp => {
            return Ok(Parsed::Help(help::render(&slash)));
        }
        Err(err) => anyhow::bail!("{}", super::clap_error::sentence(&err)),
    };
    A::from_arg_matches(&matches)
        .map(Parsed::Args)
        .map_err(|err| anyhow::anyhow!("{}", super::clap_error::sentence(&err)))
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
const SWITCHES: &[&str] = &["--force", "--trust", "--help", "-h"];
/// Budgets: a value that looks like one (`2h`, `500k`, `$5`, `0.50`) is checked by clap.
const BUDGET_FLAGS: &[&str] = &["--max-duration", "--max-tokens", "--max-cost"];

/// Splits slash-command text into the task and its options. Options are recognised only
/// as a run at the very end of the text (`Fix the parser --max-iterations 5`), or as a
/// run before a `--` that starts the task (`--promise SHIPPED -- Release 1.2`); anything
/// else is task text, byte for byte, so `Remove the --force flag from deploy.sh` keeps its
/// `--force`. A value must look like one: a number for `--max-iterations` and
/// `--no-progress-limit`; for `--promise`, quoted text or a word without lower-case
/// letters (`DONE`, `SHIPPED`), so `Document the --promise option` is a task too.
///
/// Nothing typed is silently misread: a run at the end that is meant as options but is
/// not all valid (`--max-iteration 2`, a misspelt name; `--max-cost 1e3`, a value that
/// looks like one but is refused) is handed to clap whole, so the user gets clap's error
/// ("did you mean --max-iterations?") instead of a loop whose task ends in a typo. Such a
/// run is options followed by values that look like values (a number, `$5`, quoted text,
/// a word without lower-case letters), at least one of them pagent's or close to one.
pub fn parse_ralph_line(text: &str) -> RalphLine {
    let words = split_words(text);
    if let Some(dash) = words
        .iter()
        .position(|w| w.value == "--" && is_bare(text, w))
    {
        let before = &words[..dash];
        let task = || unquote_whole(text[words[dash].end..].trim()).to_owned();
        if before.is_empty() {
            // `-- TEXT`: all of it is the task, `--help` and `--force` included.
            return RalphLine {
                task: task(),
                flags: Vec::new(),
            };
        }
        if let Some(flags) = option_run(text, before) {
            return RalphLine {
                task: task(),
                flags,
            };
        }
        if meant_as_options(text, before) {
            return RalphLine {
                task: task(),
                flags: before.iter().map(|w| w.value.clone()).collect(),
            };
        }
    }
    let valid =
        (0..words.len()).find_map(|start| Some((start, option_run(text, &words[start..])?)));
    let meant = (0..words.len()).find(|&start| meant_as_options(text, &words[start..]));
    let (start, flags) = match (valid, meant) {
        // A longer run was meant as options: clap says what is wrong with it.
        (valid, Some(meant)) if valid.as_ref().is_none_or(|(start, _)| meant < *start) => (
            meant,
            words[meant..].iter().map(|w| w.value.clone()).collect(),
        ),
        (Some((start, flags)), _) => (start, flags),
        (None, _) => {
            return RalphLine {
                task: unquote_whole(text.trim()).to_owned(),
                flags: Vec::new(),
            };
        }
    };
    RalphLine {
        task: unquote_whole(text[..words[start].start].trim()).to_owned(),
        flags,
    }
}

/// Whether the word was typed without quotes.
fn is_bare(text: &str, word: &Word) -> bool {
    text[word.start..word.end] == word.value
}

/// An option as typed: its name, and its inline value (`--promise=DONE`, also quoted:
/// `--promise="ALL DONE"`); `None` when the name itself was quoted (`"--force"`: the
/// task's word).
fn option_word<'w>(text: &str, word: &'w Word) -> Option<(&'w str, Option<&'w str>)> {
    let typed = &text[word.start..word.end];
    match word.value.split_once('=') {
        Some((name, value)) if typed.starts_with(&format!("{name}=")) => Some((name, Some(value))),
        _ if typed == word.value => Some((word.value.as_str(), None)),
        _ => None,
    }
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
        let (name, inline) = option_word(text, &words[i])?;
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
        // A value given with `=` is given on purpose, whatever its letters.
        let (value, quoted) = match inline {
            Some(value) => (value.to_owned(), true),
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

/// Whether `words` read as options the user meant, valid or not: each a bare `--name`
/// (or `--name=value`), followed by at most one word that looks like a value, at least
/// one of them pagent's or within two typos of one, complete (`--max-iteration 2`,
/// `--forse`; not a bare `--max-iterations`, which may well be the task's word).
fn meant_as_options(text: &str, words: &[Word]) -> bool {
    let mut i = 0;
    let mut ours = false;
    while i < words.len() {
        let Some((name, inline)) = option_word(text, &words[i]) else {
            return false;
        };
        let inline = inline.is_some();
        let is_name = name.starts_with("--")
            && name.len() > 2
            && name[2..]
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
        if !is_name {
            return false;
        }
        i += 1;
        let switch = SWITCHES.contains(&name);
        let valued = inline
            || (!switch
                && words
                    .get(i)
                    .is_some_and(|next| looks_like_a_value(text, next)));
        if valued && !inline {
            i += 1;
        }
        let known = SWITCHES.contains(&name)
            || NUMBER_FLAGS.contains(&name)
            || TEXT_FLAGS.contains(&name)
            || BUDGET_FLAGS.contains(&name);
        if known && !switch && !valued {
            return false;
        }
        ours |= known
            || (valued && close_to(name, &[NUMBER_FLAGS, TEXT_FLAGS, BUDGET_FLAGS]))
            || (!valued && close_to(name, &[SWITCHES]));
    }
    ours
}

/// Within two typos of one of the options in `lists` (`--max-iteration`, `--forse`).
fn close_to(name: &str, lists: &[&[&str]]) -> bool {
    lists
        .iter()
        .flat_map(|list| list.iter())
        .any(|known| edit_distance(name, known) <= 2)
}

/// A word a person types as an option's value: a number, an amount (`$5`, `.5`), quoted
/// text, or a word without lower-case letters (`DONE`); not another option.
fn looks_like_a_value(text: &str, word: &Word) -> bool {
    if !is_bare(text, word) {
        return true;
    }
    let value = &word.value;
    !value.starts_with("--")
        && (value.starts_with(|c: char| c.is_ascii_digit() || c == '$' || c == '.')
            || (!value.is_empty() && !value.chars().any(char::is_lowercase)))
}

/// The Levenshtein distance between two short words.
fn edit_distance(a: &str, b: &str) -> usize {
    let b: Vec<char> = b.chars().collect();
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.chars().enumerate() {
        let mut diagonal = row[0];
        row[0] = i + 1;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            row[j + 1] = if ca == *cb {
                diagonal
            } else {
                1 + diagonal.min(above).min(row[j])
            };
            diagonal = above;
        }
    }
    row[b.len()]
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

pub mod help;
#[cfg(test)]
mod tests;

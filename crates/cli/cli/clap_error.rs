//! clap's usage errors as one of pagent's sentences.
//!
//! clap renders an error for a terminal: `error: ` first, then a tip, a usage block and
//! "For more information, try '--help'.". Wrapped in pagent's own report that became
//! `pagent: error: error: invalid value ...` followed by advice a slash command's user
//! cannot follow (there is no `--help` to add to a `!` line). [`sentence`] keeps what
//! matters, once: what was wrong, and clap's suggestion as "did you mean".

use clap::error::{ContextKind, ContextValue, ErrorKind};

/// One line: what was wrong with the arguments, without clap's `error: ` prefix, usage
/// block or `--help` advice; a similar option clap found is offered as "did you mean".
pub fn sentence(err: &clap::Error) -> String {
    let rendered = err.render().to_string();
    let first = rendered
        .lines()
        .find(|line| !line.trim().is_empty())
        .unwrap_or("the arguments are not valid")
        .trim();
    let first = first.strip_prefix("error: ").unwrap_or(first);
    if err.kind() == ErrorKind::UnknownArgument
        && let Some(ContextValue::String(arg)) = err.get(ContextKind::InvalidArg)
    {
        let suggested = match err.get(ContextKind::SuggestedArg) {
            Some(ContextValue::String(s)) => Some(s.clone()),
            Some(ContextValue::Strings(s)) => s.first().cloned(),
            _ => None,
        };
        return match suggested {
            Some(s) => format!("unknown option {arg} (did you mean {s}?)"),
            None => format!("unknown option {arg}"),
        };
    }
    // `'--max-cost <USD>'` says the option's name well enough without its value name.
    simplify_arg_names(first)
}

/// `for '--max-cost <USD>':` → `for --max-cost:`.
fn simplify_arg_names(line: &str) -> String {
    let mut out = String::with_capacity(line.len());
    let mut rest = line;
    while let Some(start) = rest.find("'--") {
        let Some(len) = rest[start + 1..].find('\'') else {
            break;
        };
        let quoted = &rest[start + 1..start + 1 + len];
        out.push_str(&rest[..start]);
        out.push_str(quoted.split_whitespace().next().unwrap_or(quoted));
        rest = &rest[start + 1 + len + 1..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::{Args, FromArgMatches};

    #[derive(Debug, Args)]
    struct Demo {
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u32).range(1..=1000))]
        max_iterations: Option<u32>,
        #[arg(long, value_name = "USD", value_parser = pagent_engine::budget::parse_cost)]
        max_cost: Option<u64>,
    }

    fn error_of(words: &[&str]) -> String {
        let command = Demo::augment_args(clap::Command::new("/ralph").no_binary_name(true));
        let err = command
            .try_get_matches_from(words)
            .map(|m| Demo::from_arg_matches(&m))
            .expect_err("the words are not valid");
        sentence(&err)
    }

    #[test]
    fn item_3_clap_errors_read_as_one_sentence_with_did_you_mean() {
        assert_eq!(
            error_of(&["--max-iteration", "2"]),
            "unknown option --max-iteration (did you mean --max-iterations?)"
        );
        assert_eq!(error_of(&["--verbose"]), "unknown option --verbose");
        assert_eq!(
            error_of(&["--max-iterations", "0"]),
            "invalid value '0' for --max-iterations: 0 is not in 1..=1000"
        );
        assert_eq!(
            error_of(&["--max-cost", "1e3"]),
            "invalid value '1e3' for --max-cost: \"1e3\" is not an amount of US dollars like 5, 0.50 or $12"
        );
        for words in [&["--max-iterations", "0"][..], &["--nope"]] {
            let text = error_of(words);
            assert!(!text.contains("error"), "{text}");
            assert!(!text.contains("--help"), "{text}");
            assert!(!text.contains('\n'), "{text}");
        }
    }
}

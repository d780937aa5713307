//! Every relative link of the README and `docs/` leads somewhere: the file exists, and a
//! `#anchor` names a heading of that file as GitHub spells it. The README was split into
//! `docs/` (issue 20, item 14), and a moved section must not leave a dead link behind.

use std::collections::{HashMap, HashSet};
use std::path::{Component, Path, PathBuf};

use super::{documents, prose, read, repo};

/// GitHub's anchor for a heading: the rendered text lowercased, everything but letters,
/// digits, `-`, `_` and spaces dropped, spaces made `-`; a repeat gets `-1`, `-2`, ...
fn slug(heading: &str) -> String {
    let rendered = strip_markup(heading);
    rendered
        .trim()
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// A heading's text as rendered: code spans' backticks and links' targets removed.
fn strip_markup(text: &str) -> String {
    let mut out = String::new();
    let mut rest = text;
    while let Some(open) = rest.find('[') {
        let Some(close) = rest[open..].find("](") else {
            break;
        };
        let Some(end) = rest[open + close..].find(')') else {
            break;
        };
        out.push_str(&rest[..open]);
        out.push_str(&rest[open + 1..open + close]);
        rest = &rest[open + close + end + 1..];
    }
    out.push_str(rest);
    out.replace(['`', '*'], "")
}

/// The anchors a Markdown file offers.
fn anchors(text: &str, file: &Path) -> HashSet<String> {
    let mut seen: HashMap<String, usize> = HashMap::new();
    let mut out = HashSet::new();
    for line in prose(file, text).lines() {
        let trimmed = line.trim_start();
        let hashes = trimmed.chars().take_while(|c| *c == '#').count();
        if !(1..=6).contains(&hashes) || !trimmed[hashes..].starts_with(' ') {
            continue;
        }
        let base = slug(&trimmed[hashes..]);
        let n = seen.entry(base.clone()).or_insert(0);
        out.insert(if *n == 0 {
            base.clone()
        } else {
            format!("{base}-{n}")
        });
        *n += 1;
    }
    out
}

/// Link targets of a Markdown text (inline links and images), outside code.
fn targets(text: &str, file: &Path) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    for (index, line) in prose(file, text).lines().enumerate() {
        let mut plain = String::new();
        let mut in_code = false;
        for c in line.chars() {
            if c == '`' {
                in_code = !in_code;
            } else if !in_code {
                plain.push(c);
            }
        }
        let mut rest = plain.as_str();
        while let Some(at) = rest.find("](") {
            let after = &rest[at + 2..];
            let end = after.find([')', ' ']).unwrap_or(after.len());
            out.push((index + 1, after[..end].to_owned()));
            rest = &after[end..];
        }
    }
    out
}

/// `base/rel` with `..` resolved, inside the repository.
fn join(base: &Path, rel: &str) -> PathBuf {
    let mut out = PathBuf::new();
    for part in base.join(rel).components() {
        match part {
            Component::ParentDir => {
                out.pop();
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    out
}

#[test]
fn item_14_every_relative_link_in_readme_and_docs_resolves() {
    let mut broken = Vec::new();
    let mut checked = 0;
    let mut pages = documents();
    pages.push(PathBuf::from("BENCHMARKS.md"));
    for file in pages {
        let text = read(&file);
        for (line, target) in targets(&text, &file) {
            if target.contains("://") || target.starts_with("mailto:") {
                continue;
            }
            checked += 1;
            let (path, anchor) = match target.split_once('#') {
                Some((p, a)) => (p, Some(a)),
                None => (target.as_str(), None),
            };
            let dest = if path.is_empty() {
                file.clone()
            } else {
                join(file.parent().unwrap(), path)
            };
            let place = format!("{}:{line}: ({target})", file.display());
            if !repo().join(&dest).exists() {
                broken.push(format!("{place}: no file {}", dest.display()));
                continue;
            }
            if let Some(anchor) = anchor {
                let is_md = dest.extension().is_some_and(|e| e == "md");
                if !is_md || !anchors(&read(&dest), &dest).contains(anchor) {
                    broken.push(format!(
                        "{place}: no heading #{anchor} in {}",
                        dest.display()
                    ));
                }
            }
        }
    }
    assert!(checked > 30, "only {checked} relative links found");
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn slugs_are_githubs() {
    assert_eq!(
        slug(" An independent reviewer: `--review`"),
        "an-independent-reviewer---review"
    );
    assert_eq!(
        slug(" Budgets: time, tokens, money"),
        "budgets-time-tokens-money"
    );
    assert_eq!(slug(" See [the guide](guide.md)"), "see-the-guide");
    let text = "# A\n```sh\n# not a heading\n```\n## A\n";
    let found = anchors(text, Path::new("x.md"));
    assert!(
        found.contains("a") && found.contains("a-1") && found.len() == 2,
        "{found:?}"
    );
}

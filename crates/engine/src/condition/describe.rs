//! A condition in a person's words, for the places that show what a stage waits for
//! (the dashboard's loop page): "architecture.md with at least 50 non-blank lines", not
//! its JSON. The words say what the condition asks, never how it is doing now (that is
//! the findings' business, `prompt/findings.rs`).

use super::Condition;

/// Longer than this, a reviewer's criteria are cut (the page shows a line per stage).
const CRITERIA_CAP: usize = 120;

impl Condition {
    /// What the condition asks for, in words.
    pub fn describe(&self) -> String {
        match self {
            Condition::FileExists { path, min_lines } => {
                at_least(path.as_str(), *min_lines, "non-blank line")
            }
            Condition::DirectoryExists { path, min_files } => {
                at_least(&format!("{path}/"), *min_files, "file")
            }
            Condition::AllFilesExist { paths, min_lines } => {
                let names: Vec<&str> = paths.iter().map(|p| p.as_str()).collect();
                match *min_lines {
                    0 => format!("{} exist", names.join(", ")),
                    min => format!(
                        "each of {} with at least {}",
                        names.join(", "),
                        plural(min, "non-blank line")
                    ),
                }
            }
            Condition::Promise(text) => {
                format!("the agent's last message says <promise>{text}</promise>")
            }
            Condition::StoriesPass { path, .. } => format!("every story in {path} done"),
            Condition::Command(check) => format!("`{}` passes", check.display()),
            Condition::MergeCommitted(spec) => {
                format!(
                    "the merge of {} committed, the branch's work kept",
                    spec.name
                )
            }
            Condition::Review(review) => format!(
                "a {} reviewer agrees: {}",
                review.reviewer.name(),
                cut(&review.criteria)
            ),
            Condition::All(items) => joined(items, "; and "),
            Condition::Any(items) => format!("one of: {}", joined(items, "; or ")),
        }
    }
}

fn at_least(name: &str, min: u64, unit: &str) -> String {
    match min {
        0 => format!("{name} exists"),
        min => format!("{name} with at least {}", plural(min, unit)),
    }
}

fn joined(items: &[Condition], by: &str) -> String {
    items
        .iter()
        .map(Condition::describe)
        .collect::<Vec<_>>()
        .join(by)
}

/// `1 file`, `3 files`.
fn plural(n: u64, unit: &str) -> String {
    if n == 1 {
        format!("{n} {unit}")
    } else {
        format!("{n} {unit}s")
    }
}

/// The criteria on one line, cut at [`CRITERIA_CAP`] characters.
fn cut(text: &str) -> String {
    let line = text.split_whitespace().collect::<Vec<_>>().join(" ");
    match line.char_indices().nth(CRITERIA_CAP) {
        Some((at, _)) => format!("{}…", &line[..at]),
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// Every form in words, as the dashboard's loop page shows it (its JSON showed there).
    #[test]
    fn issue_30_every_condition_reads_in_words() {
        let forms = [
            json!({"file_exists": "architecture.md", "min_lines": 50}),
            json!({"file_exists": "notes.md"}),
            json!({"directory_exists": "src", "min_files": 1}),
            json!({"directory_exists": "src", "min_files": 3}),
            json!({"all_files_exist": ["a.md", "b.md"]}),
            json!({"all_files_exist": ["a.md", "b.md"], "min_lines": 2}),
            json!({"promise_in_output": "DONE"}),
            json!({"stories_pass": "prd.json"}),
            json!({"custom": "scripts/check.sh --fast"}),
            json!({"command": ["cargo", "test"]}),
            json!({"all": [{"file_exists": "a.md", "min_lines": 5}, {"any": [{"promise_in_output": "OK"}, {"command": ["make"]}]}]}),
            json!({"all": [{"command": ["cargo", "test"]}, {"review": "the tests cover   the empty\ninput"}]}),
            json!({"review": "x".repeat(200)}),
            json!({"merge_committed": "a".repeat(40), "keeping": "b".repeat(40), "name": "main"}),
        ];
        let mut out = String::new();
        for form in forms {
            let condition = Condition::from_json(&form, "exit_when").unwrap();
            out.push_str(&format!("{form}\n    {}\n", condition.describe()));
        }
        insta::assert_snapshot!(out);
    }
}

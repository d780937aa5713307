//! The tasks file of `pagent parallel`: a JSON list of tasks, or a text file with one task
//! per line (`name: task`, or just the task). A JSON task may name a `check` command for
//! its conflict resolutions; a tasks file inside the project runs one only once trusted.
//!
//! Every task ends up with a name that is safe as a branch and worktree name (letters,
//! digits, `-` and `_`), made from its text when it has none and made unique by a number,
//! since each task's branch is `pagent/NAME`.

use std::path::Path;

use anyhow::{Context, bail};
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Task {
    #[serde(default)]
    pub name: String,
    #[serde(alias = "prompt")]
    pub task: String,
    #[serde(default)]
    pub promise: Option<String>,
    #[serde(default)]
    pub max_iterations: Option<u32>,
    /// A command that must pass before a conflict resolution of this task counts
    /// (`--merge`); from a file in the project, it runs only once trusted.
    #[serde(default)]
    pub check: Option<String>,
}

/// Tasks from a JSON list or a text file (one per line, `name: task` or just the task),
/// and the bytes they were read from (what trusting the file covers).
pub fn read_tasks_and_bytes(path: &Path) -> anyhow::Result<(Vec<Task>, Vec<u8>)> {
    let bytes = pagent_door::files::read_outside(path, 4 * 1024 * 1024)
        .with_context(|| format!("cannot read the tasks file {}", path.display()))?;
    let tasks = parse_tasks(path, &bytes)?;
    Ok((tasks, bytes))
}

fn parse_tasks(path: &Path, bytes: &[u8]) -> anyhow::Result<Vec<Task>> {
    let text = String::from_utf8(bytes.to_vec())
        .map_err(|_| anyhow::anyhow!("the tasks file {} is not UTF-8 text", path.display()))?;
    let mut tasks: Vec<Task> = if text.trim_start().starts_with('[') {
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a JSON list of tasks", path.display()))?
    } else {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|line| match line.split_once(": ") {
                Some((name, task)) if is_name(name) => Task {
                    name: name.to_owned(),
                    task: task.trim().to_owned(),
                    promise: None,
                    max_iterations: None,
                    check: None,
                },
                _ => Task {
                    name: String::new(),
                    task: line.to_owned(),
                    promise: None,
                    max_iterations: None,
                    check: None,
                },
            })
            .collect()
    };
    if tasks.is_empty() {
        bail!("{} holds no tasks", path.display());
    }
    let mut seen = std::collections::HashSet::new();
    for task in &mut tasks {
        if task.task.trim().is_empty() {
            bail!("{}: a task has no text", path.display());
        }
        if task.name.is_empty() {
            task.name = slug(&task.task);
        }
        if !is_name(&task.name) {
            bail!(
                "{}: the task name {:?} must be letters, digits, '-' or '_'",
                path.display(),
                task.name
            );
        }
        let base = task.name.clone();
        let mut n = 2;
        while !seen.insert(task.name.clone()) {
            task.name = format!("{base}-{n}");
            n += 1;
        }
    }
    Ok(tasks)
}

fn is_name(text: &str) -> bool {
    !text.is_empty()
        && text.len() <= 60
        && text
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// `Fix the login bug!` → `fix-the-login-bug`.
fn slug(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars() {
        if c.is_ascii_alphanumeric() {
            out.push(c.to_ascii_lowercase());
        } else if !out.ends_with('-') && !out.is_empty() {
            out.push('-');
        }
        if out.len() >= 40 {
            break;
        }
    }
    let out = out.trim_end_matches('-').to_owned();
    if out.is_empty() {
        "task".to_owned()
    } else {
        out
    }
}

#[cfg(test)]
#[allow(clippy::disallowed_methods, clippy::disallowed_types)]
mod tests {
    use super::*;

    fn read_tasks(path: &Path) -> anyhow::Result<Vec<Task>> {
        read_tasks_and_bytes(path).map(|(tasks, _)| tasks)
    }

    #[test]
    fn tasks_come_from_json_or_lines_with_unique_names() {
        let dir = tempfile::tempdir().unwrap();
        let lines = dir.path().join("tasks.txt");
        std::fs::write(
            &lines,
            "# comment\nlogin: Fix the login bug\nAdd a README!\nAdd a README!\n\n",
        )
        .unwrap();
        let names: Vec<String> = read_tasks(&lines)
            .unwrap()
            .into_iter()
            .map(|t| t.name)
            .collect();
        assert_eq!(names, ["login", "add-a-readme", "add-a-readme-2"]);
        let json = dir.path().join("tasks.json");
        std::fs::write(&json, r#"[{"name": "a", "task": "x", "promise": "OK", "max_iterations": 3}, {"prompt": "y z"}]"#).unwrap();
        let tasks = read_tasks(&json).unwrap();
        assert_eq!(
            (
                tasks[0].promise.as_deref(),
                tasks[0].max_iterations,
                tasks[1].name.as_str()
            ),
            (Some("OK"), Some(3), "y-z")
        );
        std::fs::write(&json, r#"[{"name": "../x", "task": "x"}]"#).unwrap();
        assert!(read_tasks(&json).is_err());
        std::fs::write(&json, "[]").unwrap();
        assert!(read_tasks(&json).is_err());
    }
}

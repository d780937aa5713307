//! The tasks file of `pagent parallel`: a plan of stories, a JSON list of tasks, or a
//! text file with one task per line (`name: task`, or just the task).
//!
//! - **A plan**, every format `pagent loop --stories` reads (prd.json, Chief's prd.md,
//!   spec-kit's or Kiro's tasks.md, a ralphex plan, pagent's issues list), told by its
//!   content or named with `--format`: one task per story not yet done (optional ones
//!   left, as the stories loop leaves them), named after the story (`US-001`,
//!   `task-1-2`), in the plan's order (priority first, then the file's), each waiting for
//!   the stories it depends on (`after`). A plan whose stories could never all start (a
//!   dependency the plan does not have, a cycle) is refused, as is a file that looks
//!   like a plan (JSON, Markdown) but is not one pagent reads: `parallel prd.json` once
//!   ran four loops on JSON fragments.
//! - **A JSON list**: each task may name a `check` command for its conflict
//!   resolutions; a tasks file inside the project runs one only once trusted.
//! - **Lines**, from any other text file.
//!
//! Every task ends up with a name that is safe as a branch and worktree name (letters,
//! digits, `-` and `_`), made from its text when it has none and made unique by a number,
//! since each task's branch is `pagent/NAME`.

use std::path::Path;

use anyhow::{Context, bail};
use pagent_stories::{Format, MAX_PLAN_BYTES, Plan, Story};
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
    /// The names of the tasks this one waits for (a plan's dependencies; not a field of
    /// the JSON list).
    #[serde(skip)]
    pub after: Vec<String>,
    /// The story's id in its plan (`US-001`), for a task read from a plan (not a field
    /// of the JSON list).
    #[serde(skip)]
    pub story: Option<String>,
}

impl Task {
    fn new(name: &str, task: &str) -> Task {
        Task {
            name: name.to_owned(),
            task: task.to_owned(),
            promise: None,
            max_iterations: None,
            check: None,
            after: Vec::new(),
            story: None,
        }
    }
}

/// Tasks from a plan, a JSON list or a text file (see the module), and the bytes they
/// were read from (what trusting the file covers). `format` names the plan's kind when
/// its content does not tell; a story's task names the plan by its path in `root`.
pub fn read_tasks_and_bytes(
    path: &Path,
    root: &Path,
    format: Option<Format>,
) -> anyhow::Result<(Vec<Task>, Vec<u8>)> {
    let bytes = pagent_door::files::read_outside(path, MAX_PLAN_BYTES as u64)
        .with_context(|| format!("cannot read the tasks file {}", path.display()))?;
    let label = path.strip_prefix(root).unwrap_or(path);
    let tasks = parse_tasks(path, label, &bytes, format)?;
    Ok((tasks, bytes))
}

fn parse_tasks(
    path: &Path,
    label: &Path,
    bytes: &[u8],
    format: Option<Format>,
) -> anyhow::Result<Vec<Task>> {
    let text = String::from_utf8(bytes.to_vec())
        .map_err(|_| anyhow::anyhow!("the tasks file {} is not UTF-8 text", path.display()))?;
    let start = text.trim_start_matches('\u{feff}').trim_start();
    let mut tasks: Vec<Task> = if format.is_none() && start.starts_with('[') {
        serde_json::from_str(&text)
            .with_context(|| format!("{} is not a JSON list of tasks", path.display()))?
    } else if let Some(format) = plan_format(path, &text, format) {
        plan_tasks(path, label, &text, format)?
    } else {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty() && !l.starts_with('#'))
            .map(|line| match line.split_once(": ") {
                Some((name, task)) if is_name(name) => Task::new(name, task.trim()),
                _ => Task::new("", line),
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

/// Whether the file is to be read as a plan, and as which kind (`None`: the kind is for
/// the reader to tell, or a refusal to give): `--format`; a JSON object, a `.json` or
/// Markdown file, which are never lines of tasks; a text whose content shows a plan.
fn plan_format(path: &Path, text: &str, format: Option<Format>) -> Option<Option<Format>> {
    if format.is_some() {
        return Some(format);
    }
    let ext = path
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let json = ext == "json"
        || text
            .trim_start_matches('\u{feff}')
            .trim_start()
            .starts_with('{');
    if json {
        return Some(Some(Format::PrdJson));
    }
    let markdown = matches!(ext.as_str(), "md" | "markdown");
    (markdown || Plan::read(text, None).is_ok()).then_some(None)
}

/// One task per story of the plan that is left to do, in the order the plan asks for.
fn plan_tasks(
    path: &Path,
    label: &Path,
    text: &str,
    format: Option<Format>,
) -> anyhow::Result<Vec<Task>> {
    let shown = path.display();
    let plan = Plan::read(text, format).map_err(|why| {
        anyhow::anyhow!(
            "{shown} is not a plan pagent can read: {why}. `pagent parallel` takes a plan (prd.json, Chief's prd.md, spec-kit's or Kiro's tasks.md, a ralphex plan), a JSON list of tasks, or a text file with one task per line"
        )
    })?;
    let mut left: Vec<&Story> = plan
        .stories
        .iter()
        .filter(|s| !s.done && !s.optional)
        .collect();
    anyhow::ensure!(
        !left.is_empty(),
        "every story in {shown} is already done: nothing to run"
    );
    refuse_stories_that_never_start(&plan, &left, &shown.to_string())?;
    left.sort_by_key(|s| s.priority.unwrap_or(i64::MAX));
    let rel = label.to_string_lossy();
    let mut taken = std::collections::HashSet::new();
    let names: std::collections::HashMap<&str, String> = left
        .iter()
        .map(|s| {
            let base = story_name(s, plan.format);
            let mut name = base.clone();
            let mut n = 2;
            while !taken.insert(name.clone()) {
                name = format!("{base}-{n}");
                n += 1;
            }
            (s.id.as_str(), name)
        })
        .collect();
    Ok(left
        .iter()
        .map(|story| Task {
            after: story
                .depends_on
                .iter()
                .filter_map(|dep| names.get(dep.as_str()).cloned())
                .collect(),
            story: Some(story.id.clone()),
            ..Task::new(&names[story.id.as_str()], &story.render_task(&plan, &rel))
        })
        .collect())
}

/// Refuses a plan with a story that waits for one it does not have, or for one that can
/// never start (a cycle): its loop would never run.
fn refuse_stories_that_never_start(
    plan: &Plan,
    left: &[&Story],
    shown: &str,
) -> anyhow::Result<()> {
    for story in left {
        if let Some(dep) = story.depends_on.iter().find(|d| plan.story(d).is_none()) {
            bail!(
                "{shown}: {} waits for {dep}, which the plan does not have",
                story.id
            );
        }
    }
    let mut started: std::collections::HashSet<&str> = plan
        .stories
        .iter()
        .filter(|s| s.done)
        .map(|s| s.id.as_str())
        .collect();
    loop {
        let ready: Vec<&str> = left
            .iter()
            .filter(|s| !started.contains(s.id.as_str()))
            .filter(|s| s.depends_on.iter().all(|d| started.contains(d.as_str())))
            .map(|s| s.id.as_str())
            .collect();
        if ready.is_empty() {
            break;
        }
        started.extend(ready);
    }
    let stuck: Vec<&str> = left
        .iter()
        .map(|s| s.id.as_str())
        .filter(|id| !started.contains(id))
        .collect();
    if !stuck.is_empty() {
        bail!(
            "{shown}: {} wait for each other (or for a story that does), so none of them could start; fix their dependencies",
            stuck.join(", ")
        );
    }
    Ok(())
}

/// A task's name after its story: the id where it makes a name (`US-001`, `T014`),
/// else the id with a word before it (Kiro's `1.2` is `task-1-2`, issue `#12` is
/// `issue-12`).
fn story_name(story: &Story, format: Format) -> String {
    let mut name = String::new();
    for c in story.id.chars() {
        if c.is_ascii_alphanumeric() || c == '_' {
            name.push(c);
        } else if !name.is_empty() && !name.ends_with('-') {
            name.push('-');
        }
    }
    let name = name.trim_end_matches('-');
    let word = if format == Format::Issues {
        "issue"
    } else {
        "task"
    };
    let name = if name.chars().any(|c| c.is_ascii_alphabetic()) {
        name.to_owned()
    } else if name.is_empty() {
        slug(&story.title)
    } else {
        format!("{word}-{name}")
    };
    name.chars()
        .take(60)
        .collect::<String>()
        .trim_end_matches('-')
        .to_owned()
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
        read_tasks_and_bytes(path, Path::new("/"), None).map(|(tasks, _)| tasks)
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

//! `pagent parallel TASKS_FILE -j N`: one ralph loop per task, each in its own git
//! worktree and branch, N at a time, with a live table and a final summary.
//!
//! Each loop is a child `pagent loop --json --worktree NAME ralph ...`: the same runner,
//! crash-safe and resumable on its own, reporting its progress as JSON lines that this
//! command folds into one row per task. Ctrl-C reaches the children too (they share the
//! terminal's process group); each saves its state and stops, and a second
//! `pagent parallel` with the same file resumes every unfinished task.

#![allow(clippy::print_stdout)]

use std::collections::VecDeque;
use std::io::{BufRead, BufReader, IsTerminal, Read, Write};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use anyhow::{Context, bail};
use pagent_engine::format_duration;
use serde::Deserialize;
use serde_json::{Value, json};

use crate::args::{AgentArgs, AgentName, Global, ParallelArgs};
use crate::env::Env;
use crate::exit::ExitStatus;
use crate::project::Project;
use crate::signals;
use crate::ui::Style;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
struct Task {
    #[serde(default)]
    name: String,
    #[serde(alias = "prompt")]
    task: String,
    #[serde(default)]
    promise: Option<String>,
    #[serde(default)]
    max_iterations: Option<u32>,
}

#[derive(Debug)]
struct Row {
    task: Task,
    state: &'static str,
    stage_iteration: String,
    tool: String,
    iterations: u64,
    started: Option<Instant>,
    finished: Option<Duration>,
    detail: String,
    stderr: String,
}

enum Msg {
    Line(usize, String),
    Stderr(usize, String),
    /// The child closed its stdout: it is ending.
    Exit(usize),
}

pub fn run(global: &Global, env: &Env, args: &ParallelArgs) -> anyhow::Result<ExitStatus> {
    let parsed;
    let args = if args.stdin_args {
        parsed = args_from_stdin(args.dry_run)?;
        &parsed
    } else {
        args
    };
    signals::install();
    let project = Project::resolve(global, env, None)?;
    git2::Repository::discover(&project.root)
        .context("pagent parallel needs a git repository (each task gets a worktree)")?;
    let Some(tasks_file) = &args.tasks else {
        bail!("name the tasks file, e.g. `pagent parallel tasks.txt -j 3`")
    };
    let cwd = env
        .current_dir
        .clone()
        .unwrap_or_else(|| project.root.clone());
    let tasks = read_tasks(&cwd.join(tasks_file))?;
    let exe = std::env::current_exe().context("cannot find the pagent binary itself")?;
    if args.dry_run {
        print_plan(&exe, &project, args, &cwd.join(tasks_file), &tasks);
        return Ok(ExitStatus::Success);
    }
    let style = Style::for_stdout(env.no_color);
    let live = !args.json && std::io::stdout().is_terminal();
    let mut rows: Vec<Row> = tasks
        .into_iter()
        .map(|task| Row {
            task,
            state: "queued",
            stage_iteration: String::new(),
            tool: String::new(),
            iterations: 0,
            started: None,
            finished: None,
            detail: String::new(),
            stderr: String::new(),
        })
        .collect();
    let mut queue: VecDeque<usize> = (0..rows.len()).collect();
    let (tx, rx) = mpsc::channel();
    let mut children: Vec<(usize, Child)> = Vec::new();
    let mut drawn = 0;
    let mut done = 0;
    while done < rows.len() {
        while children.len() < args.jobs as usize && !signals::interrupted() {
            let Some(i) = queue.pop_front() else { break };
            let child = spawn(&exe, &project, args, &rows[i].task, i, &tx)?;
            rows[i].state = "running";
            rows[i].started = Some(Instant::now());
            children.push((i, child));
            if !live && !args.json {
                println!(
                    "[{}] started on branch pagent/{}",
                    rows[i].task.name, rows[i].task.name
                );
            }
        }
        if signals::interrupted() {
            // Unstarted tasks stay unstarted; running ones got the signal themselves.
            for i in queue.drain(..) {
                rows[i].state = "not started";
                done += 1;
            }
        }
        match rx.recv_timeout(Duration::from_millis(200)) {
            Ok(Msg::Line(i, line)) => {
                if args.json
                    && let Ok(mut event) = serde_json::from_str::<Value>(&line)
                {
                    event["task"] = json!(rows[i].task.name);
                    println!("{event}");
                }
                let plain = !live && !args.json;
                apply(&mut rows[i], &line, plain);
            }
            Ok(Msg::Stderr(i, line)) => {
                let stderr = &mut rows[i].stderr;
                stderr.push_str(&line);
                if stderr.len() > 4096 {
                    let cut = stderr.len() - 4096;
                    let cut = (cut..stderr.len())
                        .find(|c| stderr.is_char_boundary(*c))
                        .unwrap_or(stderr.len());
                    stderr.drain(..cut);
                }
            }
            Ok(Msg::Exit(i)) => {
                let code = children
                    .iter()
                    .position(|(j, _)| *j == i)
                    .and_then(|pos| children.remove(pos).1.wait().ok())
                    .and_then(|s| s.code());
                let row = &mut rows[i];
                row.finished = row.started.map(|s| s.elapsed());
                row.state = match code {
                    Some(0) => "complete",
                    Some(3) => "gave up",
                    Some(130) => "interrupted",
                    _ => "failed",
                };
                if row.state == "failed" && row.detail.is_empty() {
                    row.detail = row
                        .stderr
                        .lines()
                        .rfind(|l| !l.trim().is_empty())
                        .unwrap_or("")
                        .trim()
                        .to_owned();
                }
                done += 1;
                if !live && !args.json {
                    println!(
                        "[{}] {} after {} iteration(s): {}",
                        row.task.name, row.state, row.iterations, row.detail
                    );
                }
            }
            Err(_) => {}
        }
        if live {
            drawn = draw(&rows, drawn, style);
        }
    }
    if live {
        draw(&rows, drawn, style);
    }
    summary(&rows, style, args.json);
    let states: Vec<&str> = rows.iter().map(|r| r.state).collect();
    Ok(if states.iter().all(|s| *s == "complete") {
        ExitStatus::Success
    } else if states
        .iter()
        .any(|s| *s == "interrupted" || *s == "not started")
    {
        ExitStatus::Interrupted
    } else if states.contains(&"failed") {
        ExitStatus::Failure
    } else {
        ExitStatus::GaveUp
    })
}

/// The slash command's arguments, parsed without a shell.
fn args_from_stdin(dry_run: bool) -> anyhow::Result<ParallelArgs> {
    use clap::{Args, FromArgMatches};
    let text = crate::cmd::read_stdin_text()?;
    anyhow::ensure!(
        !text.trim().is_empty(),
        "name the tasks file, e.g. `/ralph-parallel tasks.txt -j 3`"
    );
    let command =
        ParallelArgs::augment_args(clap::Command::new("/ralph-parallel").no_binary_name(true));
    let matches = command
        .try_get_matches_from(crate::stdin_args::values(&text))
        .map_err(|e| anyhow::anyhow!("{}", e.render().to_string().trim_end()))?;
    let mut args = ParallelArgs::from_arg_matches(&matches)?;
    anyhow::ensure!(!args.stdin_args, "--stdin-args cannot be given on stdin");
    args.dry_run |= dry_run;
    Ok(args)
}

/// What would run, and the exact command line to run it (for /ralph-parallel).
fn print_plan(exe: &Path, project: &Project, args: &ParallelArgs, file: &Path, tasks: &[Task]) {
    println!(
        "pagent parallel: {} task(s) from {}, {} at a time:",
        tasks.len(),
        file.display(),
        args.jobs
    );
    for task in tasks {
        let max = task.max_iterations.unwrap_or(args.max_iterations);
        println!(
            "  {}  (branch pagent/{}, up to {max} iterations): {}",
            task.name,
            task.name,
            task.task.lines().next().unwrap_or("")
        );
    }
    let mut argv = vec![
        exe.display().to_string(),
        "--project".into(),
        project.root.display().to_string(),
        "parallel".into(),
        file.display().to_string(),
    ];
    argv.extend([
        "-j".into(),
        args.jobs.to_string(),
        "--max-iterations".into(),
        args.max_iterations.to_string(),
        "--json".into(),
    ]);
    if args.checkpoint {
        argv.push("--checkpoint".into());
    }
    argv.extend(agent_cli(&args.agent));
    println!(
        "run: {}",
        argv.iter()
            .map(|a| shell_quote(a))
            .collect::<Vec<_>>()
            .join(" ")
    );
}

/// `a b` → `'a b'`; plain words stay as they are.
fn shell_quote(arg: &str) -> String {
    if !arg.is_empty()
        && arg
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:@,+".contains(c))
    {
        arg.to_owned()
    } else {
        format!("'{}'", arg.replace('\'', r"'\''"))
    }
}

/// Folds one JSON event of a child loop into its row.
fn apply(row: &mut Row, line: &str, plain: bool) {
    let Ok(event) = serde_json::from_str::<Value>(line) else {
        return;
    };
    let text = |key: &str| event[key].as_str().unwrap_or("").to_owned();
    match event["event"].as_str() {
        Some("iteration_started") => {
            row.stage_iteration = format!(
                "{} {}/{}",
                text("stage"),
                event["iteration"],
                event["max_iterations"]
            );
            row.tool.clear();
        }
        Some("tool") => {
            row.tool = format!("{} {}", text("name"), text("summary"))
                .trim()
                .to_owned()
        }
        Some("iteration_finished") => {
            row.iterations += 1;
            row.detail = text("detail");
            if plain {
                println!(
                    "[{}] iteration {} ({}): {}",
                    row.task.name,
                    event["iteration"],
                    text("outcome"),
                    row.detail
                );
            }
        }
        Some("finished") => {
            row.iterations = event["iterations"].as_u64().unwrap_or(row.iterations);
            row.detail = text("reason");
        }
        _ => {}
    }
}

fn spawn(
    exe: &Path,
    project: &Project,
    args: &ParallelArgs,
    task: &Task,
    i: usize,
    tx: &mpsc::Sender<Msg>,
) -> anyhow::Result<Child> {
    let mut command = Command::new(exe);
    command
        .arg("--project")
        .arg(&project.root)
        .args(["loop", "--json", "--worktree", &task.name])
        .args(agent_cli(&args.agent));
    if args.checkpoint {
        command.arg("--checkpoint");
    }
    let max = task
        .max_iterations
        .unwrap_or(args.max_iterations)
        .to_string();
    command.args([
        "ralph",
        "--max-iterations",
        &max,
        "--promise",
        task.promise.as_deref().unwrap_or("DONE"),
        "--",
        &task.task,
    ]);
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .with_context(|| format!("cannot start the loop for task {}", task.name))?;
    forward(child.stdout.take(), tx.clone(), i, Msg::Line, true);
    forward(child.stderr.take(), tx.clone(), i, Msg::Stderr, false);
    Ok(child)
}

/// Sends each line of `pipe`; the stdout reader also reports the exit when it closes.
fn forward(
    pipe: Option<impl Read + Send + 'static>,
    tx: mpsc::Sender<Msg>,
    i: usize,
    wrap: fn(usize, String) -> Msg,
    report_exit: bool,
) {
    let Some(pipe) = pipe else { return };
    thread::spawn(move || {
        for line in BufReader::new(pipe).lines().map_while(Result::ok) {
            if tx.send(wrap(i, format!("{line}\n"))).is_err() {
                return;
            }
        }
        if report_exit {
            let _ = tx.send(Msg::Exit(i));
        }
    });
}

/// The loop command line for `args`, so every child runs the same agent the same way.
fn agent_cli(args: &AgentArgs) -> Vec<String> {
    let mut out = Vec::new();
    match &args.command {
        Some(line) => out.extend(["--command".to_owned(), line.clone()]),
        None => {
            let name = match args.agent {
                AgentName::Claude => "claude",
                AgentName::Codex => "codex",
                AgentName::Opencode => "opencode",
            };
            out.extend(["--agent".to_owned(), name.to_owned()]);
        }
    }
    if let Some(bin) = &args.agent_bin {
        out.extend(["--agent-bin".to_owned(), bin.display().to_string()]);
    }
    for arg in &args.agent_args {
        out.push(format!("--agent-arg={arg}"));
    }
    out.extend([
        "--permission-mode".to_owned(),
        args.permission_mode.clone(),
        "--iteration-timeout".to_owned(),
        format!("{}s", args.iteration_timeout.as_secs()),
        "--idle-timeout".to_owned(),
        format!("{}s", args.idle_timeout.as_secs()),
        "--retries".to_owned(),
        args.retries.to_string(),
        "--retry-delay".to_owned(),
        format!("{}s", args.retry_delay.as_secs()),
    ]);
    out
}

/// Redraws the table in place; returns how many lines it drew.
fn draw(rows: &[Row], previous: usize, style: Style) -> usize {
    let mut out = String::new();
    if previous > 0 {
        out.push_str(&format!("\x1b[{previous}A"));
    }
    let width = rows
        .iter()
        .map(|r| r.task.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    for row in rows {
        let elapsed = row
            .finished
            .or_else(|| row.started.map(|s| s.elapsed()))
            .map_or_else(String::new, |d| format_duration(d.as_secs()));
        let state = format!("{:<11}", row.state);
        let state = match row.state {
            "complete" => style.green(&state),
            "running" => style.yellow(&state),
            "queued" => style.dim(&state),
            _ => style.red(&state),
        };
        let now = if row.state == "running" {
            format!("{} {}", row.stage_iteration, row.tool)
        } else {
            row.detail.clone()
        };
        let mut line = format!(
            "{:<width$}  {state} {:>7}  {}",
            row.task.name,
            elapsed,
            now.trim()
        );
        if line.chars().count() > 110 {
            line = line.chars().take(109).collect::<String>() + "…";
        }
        out.push_str(&format!("\r\x1b[2K{line}\n"));
    }
    print!("{out}");
    let _ = std::io::stdout().flush();
    rows.len()
}

fn summary(rows: &[Row], style: Style, json: bool) {
    if json {
        let tasks: Vec<Value> = rows
            .iter()
            .map(|r| json!({"task": r.task.name, "outcome": r.state, "iterations": r.iterations, "branch": format!("pagent/{}", r.task.name), "detail": r.detail}))
            .collect();
        println!("{}", json!({"event": "summary", "tasks": tasks}));
        return;
    }
    let width = rows
        .iter()
        .map(|r| r.task.name.len())
        .max()
        .unwrap_or(4)
        .max(4);
    println!();
    println!(
        "{}",
        style.bold(&format!(
            "{:<width$}  {:<11} {:>10}  {:<w2$}  detail",
            "task",
            "outcome",
            "iterations",
            "branch",
            w2 = width + 7
        ))
    );
    for row in rows {
        println!(
            "{:<width$}  {:<11} {:>10}  {:<w2$}  {}",
            row.task.name,
            row.state,
            row.iterations,
            format!("pagent/{}", row.task.name),
            row.detail,
            w2 = width + 7
        );
    }
}

/// Tasks from a JSON list or a text file (one per line, `name: task` or just the task).
fn read_tasks(path: &Path) -> anyhow::Result<Vec<Task>> {
    let text = std::fs::read_to_string(path)
        .with_context(|| format!("cannot read the tasks file {}", path.display()))?;
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
                },
                _ => Task {
                    name: String::new(),
                    task: line.to_owned(),
                    promise: None,
                    max_iterations: None,
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
mod tests {
    use super::*;

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

    #[test]
    fn the_agent_options_reach_every_child() {
        let args = AgentArgs {
            agent: AgentName::Codex,
            command: None,
            agent_bin: Some("/opt/codex".into()),
            agent_args: vec!["--model".into(), "o3".into()],
            permission_mode: "acceptEdits".into(),
            iteration_timeout: Duration::from_secs(60),
            idle_timeout: Duration::from_secs(30),
            retries: 1,
            retry_delay: Duration::from_secs(2),
        };
        let cli = agent_cli(&args).join(" ");
        assert!(
            cli.starts_with(
                "--agent codex --agent-bin /opt/codex --agent-arg=--model --agent-arg=o3"
            ),
            "{cli}"
        );
        assert!(
            cli.contains("--iteration-timeout 60s --idle-timeout 30s --retries 1 --retry-delay 2s"),
            "{cli}"
        );
    }
}

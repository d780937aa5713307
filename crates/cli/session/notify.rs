//! Telling the user a loop ended (complete, gave up, cancelled), waits for the agent's
//! usage limit to reset, or lost its `pagent loop` to an agent that kept failing: a
//! desktop notification, a command of their own, or both; off unless their config says
//! otherwise.
//!
//! Only the user's own `config.json` (in pagent's config folder) can turn this on: a
//! project's config that tries is refused at set-up, so a cloned repository can never
//! make pagent run a command when a loop ends.
//!
//! Never blocking, never changing the outcome. The hook that ends a loop has to return
//! at once, so the notifier is not its child to wait for: pagent starts itself as a small
//! detached helper (`pagent hook notify`, in its own process group, with no stdin,
//! stdout or stderr) which runs the notifier and kills its whole group after the timeout.
//! Any failure (no notifier installed, a bad command, a crash) is silent for the loop;
//! the helper's own failures are lost with its closed stderr. Both the helper and the
//! notifier start through the process door, from a folder outside the project, with the
//! cleaned `PATH`: a project's `./notify-send` is never the one found. The helper itself
//! is a hook subcommand (`cmd/hook_notify.rs`).

use std::path::Path;

use pagent_engine::{State, Status};

use crate::cli::env::Env;
use crate::process::{Launch, NEUTRAL_DIR, Program, SearchPath};
use crate::store::config::{NotifyConfig, read_config, user_config_path};
use crate::store::user::UserDir;

/// A notifier command is killed after this long unless the config says otherwise.
pub const DEFAULT_TIMEOUT_SECS: u64 = 10;
pub const MAX_TIMEOUT_SECS: u64 = 300;

/// Notifies the user that `state`'s loop ended, as their config asks. Call once, where the
/// loop's end was written.
pub fn loop_ended(env: &Env, project_root: &Path, state: &State) {
    let status = match state.status {
        Status::Complete => "complete",
        Status::GaveUp => "gave up",
        Status::Cancelled => "cancelled",
        Status::Active => return,
    };
    let reason = state.end_reason.as_deref().unwrap_or("");
    send(
        env,
        project_root,
        state,
        (status, state.status.as_str()),
        reason,
    );
}

/// Notifies the user that `state`'s loop waits for the agent's usage limit to reset (the
/// `status` a notifier command sees is `waiting`). Call once, where the wait was written.
pub fn limit_reached(env: &Env, project_root: &Path, state: &State, why: &str) {
    if state.is_active() {
        send(
            env,
            project_root,
            state,
            ("waits for a usage limit", "waiting"),
            why,
        );
    }
}

/// Notifies the user that `pagent loop` stopped because its agent kept failing (`why`
/// says the failure's class and what to do; the `status` a notifier command sees is
/// `failed`). The loop stays active, its state saved.
pub fn runner_stopped(env: &Env, project_root: &Path, state: &State, why: &str) {
    send(env, project_root, state, ("stopped", "failed"), why);
}

/// `status`: the word of the message, and the value a notifier command's `{status}` gets.
fn send(env: &Env, project_root: &Path, state: &State, status: (&str, &str), reason: &str) {
    let (word, value) = status;
    let Some(config) = user_notify_config(&UserDir::of(env)) else {
        return;
    };
    let project = project_root.file_name().map_or_else(
        || project_root.display().to_string(),
        |n| n.to_string_lossy().into_owned(),
    );
    let message = cap(&format!(
        "{} {word} in {project}: {reason} ({})",
        state.workflow,
        state.usage.summary()
    ));
    let values = [
        ("message", message.clone()),
        ("status", value.to_owned()),
        ("workflow", state.workflow.clone()),
        ("project", project_root.display().to_string()),
    ];
    let timeout = config
        .timeout
        .unwrap_or(DEFAULT_TIMEOUT_SECS)
        .clamp(1, MAX_TIMEOUT_SECS);
    let search = SearchPath::new(env.path.as_deref(), &[project_root]);
    let mut commands: Vec<Vec<String>> = Vec::new();
    if config.desktop
        && let Some(desktop) = desktop_command(&search, &message)
    {
        commands.push(desktop);
    }
    if let Some(command) = &config.command {
        commands.push(
            command
                .iter()
                .map(|word| substitute(word, &values))
                .collect(),
        );
    }
    for argv in commands {
        spawn_detached(env, &search, &argv, timeout, &values);
    }
}

fn user_notify_config(user_dir: &UserDir) -> Option<NotifyConfig> {
    let path = user_config_path(user_dir)?;
    read_config(&path).ok().flatten()?.notify
}

/// `notify-send` where it is installed, else `osascript` (macOS); `None` on a machine with
/// neither (a server, a container).
fn desktop_command(search: &SearchPath, message: &str) -> Option<Vec<String>> {
    if let Some(program) = search.find("notify-send") {
        return Some(vec![
            program.display().to_string(),
            "--app-name=pagent".to_owned(),
            "pagent".to_owned(),
            message.to_owned(),
        ]);
    }
    let program = search.find("osascript")?;
    // The message is an argument of the script, never part of its text.
    Some(vec![
        program.display().to_string(),
        "-e".to_owned(),
        "on run argv".to_owned(),
        "-e".to_owned(),
        "display notification (item 1 of argv) with title \"pagent\"".to_owned(),
        "-e".to_owned(),
        "end run".to_owned(),
        message.to_owned(),
    ])
}

fn substitute(word: &str, values: &[(&str, String)]) -> String {
    values.iter().fold(word.to_owned(), |word, (key, value)| {
        word.replace(&format!("{{{key}}}"), value)
    })
}

/// A notification is a line, not a report.
fn cap(text: &str) -> String {
    const MAX: usize = 500;
    if text.len() <= MAX {
        return text.to_owned();
    }
    let mut end = MAX;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!("{}…", &text[..end])
}

/// Starts `pagent hook notify --timeout N -- ARGV` detached: its own process group, no
/// stdio, not waited for.
fn spawn_detached(
    env: &Env,
    search: &SearchPath,
    argv: &[String],
    timeout: u64,
    values: &[(&str, String)],
) {
    let Ok(exe) = env.pagent_exe() else {
        return;
    };
    let mut launch = Launch::new(Program::at(exe), Path::new(NEUTRAL_DIR), search)
        .args(["hook", "notify", "--timeout", &timeout.to_string(), "--"])
        .args(argv);
    for (key, value) in values {
        launch = launch.env(format!("PAGENT_NOTIFY_{}", key.to_ascii_uppercase()), value);
    }
    // Not waited for: the helper outlives a hook that returns at once. `pagent loop` and
    // `pagent cancel` exit right after a loop's end, so no zombie lingers.
    let _ = launch.spawn_detached();
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn placeholders_are_replaced_in_each_word() {
        let values = [
            ("message", "done \"quoted\" $(x)".to_owned()),
            ("status", "complete".to_owned()),
        ];
        assert_eq!(
            substitute("--text={message} [{status}] {other}", &values),
            "--text=done \"quoted\" $(x) [complete] {other}"
        );
    }

    #[test]
    fn long_messages_are_cut_on_a_character_boundary() {
        let long = "é".repeat(400);
        let cut = cap(&long);
        assert!(cut.len() <= 504);
        assert!(cut.ends_with('…'));
    }
}

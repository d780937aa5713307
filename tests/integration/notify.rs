//! Notifications when a loop ends, with fake notifiers: a command from the user's config,
//! a desktop `notify-send` on PATH, one that hangs and one that fails. The commands that
//! end a loop run as the real binary: the notifier is a detached process it starts.

use std::fs;
use std::path::Path;
use std::time::{Duration, Instant};

use crate::util::*;
use pagent_door::testing;

fn user_config(env: &TestEnv, config: &str) {
    fs::create_dir_all(&env.config).unwrap();
    fs::write(env.config.join("config.json"), config).unwrap();
}

/// The notifier runs detached: wait (bounded) for the file it writes, whole.
fn written(path: &Path) -> String {
    wait_until(Duration::from_secs(20), path.display(), || {
        fs::read_to_string(path)
            .ok()
            .filter(|text| text.ends_with('\n'))
    })
}

/// `pagent hook stop` as the binary, as Claude Code runs it.
fn stop(env: &TestEnv, message: &str) -> Run {
    env.bin(&["hook", "stop"])
        .env("CLAUDE_PROJECT_DIR", &env.root)
        .stdin(env.stop_input(message).to_string())
        .run()
}

fn path_with(dir: &Path) -> String {
    format!(
        "{}:{}",
        dir.display(),
        std::env::var("PATH").unwrap_or_default()
    )
}

#[test]
fn a_completed_loop_runs_the_users_command_with_the_outcome() {
    let env = TestEnv::new();
    let out_file = env.home.join("notified.txt");
    let tools = env.fake_tool(
        "bin",
        "fake-notify",
        &format!(
            "printf '%s|%s|%s\\n' \"$1\" \"$2\" \"$PAGENT_NOTIFY_WORKFLOW\" > {}",
            out_file.display()
        ),
    );
    user_config(
        &env,
        &format!(
            r#"{{"notify": {{"command": ["{}/fake-notify", "{{status}}", "{{message}}"]}}}}"#,
            tools.display()
        ),
    );
    env.cmd(&["ralph", "Fix it"]).success();
    let message = stop(&env, "Done.\n<promise>DONE</promise>")
        .allowed()
        .unwrap();
    assert!(message.contains("complete"), "{message}");
    let text = written(&out_file);
    assert!(
        text.starts_with("complete|ralph complete in project: the promise was made after 1 iteration (tokens not reported)|ralph"),
        "{text}"
    );
}

#[test]
fn a_cancel_sends_a_desktop_notification_where_notify_send_exists() {
    let env = TestEnv::new();
    let out_file = env.home.join("desktop.txt");
    let tools = env.fake_tool(
        "bin",
        "notify-send",
        &format!("printf '%s\\n' \"$*\" > {}", out_file.display()),
    );
    user_config(&env, r#"{"notify": {"desktop": true}}"#);
    env.cmd(&["ralph", "Fix it"]).success();
    env.bin(&["cancel"])
        .env("PATH", path_with(&tools))
        .success();
    let text = written(&out_file);
    assert!(
        text.starts_with(
            "--app-name=pagent pagent ralph cancelled in project: cancelled by the user"
        ),
        "{text}"
    );
}

/// Never blocking: a notifier that hangs neither holds the hook up nor outlives its
/// timeout; one that fails or is missing changes nothing.
#[test]
fn a_hanging_or_failing_notifier_never_blocks_or_changes_the_outcome() {
    let env = TestEnv::new();
    let pid_file = env.home.join("pid");
    let tools = env.fake_tool(
        "bin",
        "hang",
        &format!("echo $$ > {}\nexec sleep 60", pid_file.display()),
    );
    user_config(
        &env,
        &format!(
            r#"{{"notify": {{"command": ["{}/hang"], "timeout": 1}}}}"#,
            tools.display()
        ),
    );
    env.cmd(&["ralph", "--max-iterations", "1", "Fix it"])
        .success();
    let baseline = env.baseline();
    let started = Instant::now();
    let message = stop(&env, "Not yet.").allowed().unwrap();
    assert!(message.contains("gave up"), "{message}");
    // A hook that waited for the notifier would take its 1 s timeout, or its 60 s sleep.
    baseline.assert_within(
        started.elapsed(),
        50,
        Duration::from_secs(5),
        "a hook whose notifier hangs",
    );
    let pid: i32 = written(&pid_file).trim().parse().unwrap();
    // Killed at its 1 s timeout; left alone it sleeps 60 s.
    let within = Duration::from_secs(1) + baseline.limit(150, Duration::from_secs(19));
    wait_for(within, "the hanging notifier's end at its timeout", || {
        !testing::is_alive(pid)
    });
    for command in [r#"["/nonexistent/notifier"]"#, r#"["false"]"#] {
        user_config(
            &env,
            &format!(r#"{{"notify": {{"command": {command}, "desktop": true}}}}"#),
        );
        env.cmd(&["ralph", "--force", "Fix it"]).success();
        let message = stop(&env, "Done.\n<promise>DONE</promise>")
            .allowed()
            .unwrap();
        assert!(message.contains("complete"), "{message}");
        assert_eq!(env.state()["status"], "complete");
    }
}

#[test]
fn a_broken_config_or_none_notifies_nothing_and_fails_nothing() {
    let env = TestEnv::new();
    let out_file = env.home.join("desktop.txt");
    let tools = env.fake_tool(
        "bin",
        "notify-send",
        &format!("printf '%s\\n' \"$*\" > {}", out_file.display()),
    );
    let marker = env.home.join("marker.txt");
    // Desktop off: the command runs, notify-send (spawned first when on) does not.
    user_config(
        &env,
        &format!(
            r#"{{"notify": {{"command": ["sh", "-c", "echo ran > {}"]}}}}"#,
            marker.display()
        ),
    );
    env.cmd(&["ralph", "Fix it"]).success();
    env.bin(&["cancel"])
        .env("PATH", path_with(&tools))
        .success();
    written(&marker);
    assert!(!out_file.exists());
    // A config that is not valid JSON: the cancel still works.
    user_config(&env, "{not json");
    env.cmd(&["ralph", "--force", "Fix it"]).success();
    let out = env.bin(&["cancel"]).success();
    assert!(out.stdout.contains("cancelled"), "{out}");
}

/// Issue 22: the loop-end notice has one owner, `session::apply`, whoever wrote the end;
/// `pagent loop`'s end reaches the notifier through it too.
#[test]
fn issue_22_a_loop_pagent_loop_ends_notifies_through_the_one_write_path() {
    let env = TestEnv::new();
    let out_file = env.home.join("notified.txt");
    let tools = env.fake_tool(
        "bin",
        "fake-notify",
        &format!("printf '%s|%s\\n' \"$1\" \"$2\" >> {}", out_file.display()),
    );
    user_config(
        &env,
        &format!(
            r#"{{"notify": {{"command": ["{}/fake-notify", "{{status}}", "{{workflow}}"]}}}}"#,
            tools.display()
        ),
    );
    env.cmd(&[
        "loop",
        "--command",
        "echo 'Done.'; echo '<promise>DONE</promise>'",
        "ralph",
        "Fix it",
    ])
    .success();
    assert_eq!(written(&out_file), "complete|ralph\n");
}

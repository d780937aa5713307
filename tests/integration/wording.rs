//! The words a user and the model read, item 11 of issue 20, each as a whole-output
//! snapshot: counts in words ("after 1 iteration", never "1 iterations"), a status as a
//! person says it ("gave up", not `gave_up`), what status knows after the promise (the
//! review's verdict, not "waiting for the promise"), re-prompts that open with a
//! sentence saying what happened before any list, where an in-session loop's tokens come
//! from, and a `pagent loop` that was interrupted told apart from one that runs.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;

use crate::util::*;
use pagent_door::testing;

fn filters() -> Vec<(&'static str, &'static str)> {
    vec![
        (r"\b\d+h\d\dm\b|\b\d+m\d\ds\b|\b\d+s\b", "[ELAPSED]"),
        (r"\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ", "[TIME]"),
        (r"/tmp/[^ ]*/project", "[PROJECT]"),
        // Whether a run's log exists yet when status looks is a race: the logs line has
        // its own snapshots (status::status_shows_what_a_loops_logs_take_and_their_cap).
        (r"(?m)^logs: .*$", "logs: [LOGS]"),
    ]
}

fn snapshot(name: &str, text: &str) {
    insta::with_settings!({filters => filters()}, {
        insta::assert_snapshot!(name, text);
    });
}

fn in_session(env: &TestEnv, args: &[&str]) {
    env.cmd(args)
        .env("CLAUDE_CODE_SESSION_ID", SESSION)
        .success();
}

#[test]
fn item_11_cancel_counts_stages_and_iterations_in_words() {
    let env = TestEnv::new();
    in_session(&env, &["ralph", "Fix it"]);
    let ralph = env.cmd(&["cancel"]).success().stdout;
    let again = env.cmd(&["cancel"]).success().stdout;
    env.write("prd.md", "# PRD\n");
    in_session(&env, &["run", "prd.md", "--force"]);
    env.write_lines("architecture.md", 50);
    env.stop(&env.stop_input("Designed.")).blocked();
    env.stop(&env.stop_input("Planning.")).blocked();
    let pipeline = env.cmd(&["cancel"]).success().stdout;
    snapshot("cancel", &format!("{ralph}{again}{pipeline}"));
}

#[test]
fn item_11_status_says_gave_up_in_words() {
    let env = TestEnv::new();
    in_session(&env, &["ralph", "--max-iterations", "1", "Fix it"]);
    let message = env.stop(&env.stop_input("Tried.")).allowed().unwrap();
    let status = env.cmd(&["status"]).success().stdout;
    let cancel = env.cmd(&["cancel"]).success().stdout;
    snapshot("gave_up", &format!("{message}\n---\n{status}---\n{cancel}"));
    assert!(!status.contains("gave_up"), "{status}");
}

/// A ralph loop with a review: the promise is made, the reviewer finds a gap. The
/// re-prompt says so in a sentence before the list, and status shows the verdict.
#[test]
fn item_11_after_the_promise_the_reprompt_and_status_tell_the_reviews_verdict() {
    let env = TestEnv::new();
    env.write(
        "review.sh",
        "cat > /dev/null\necho '{\"met\": false, \"missing\": [\"no test for the empty input\"]}'\n",
    );
    in_session(
        &env,
        &[
            "ralph",
            "Parse the input",
            "--review",
            "the parser handles the empty input, with a test",
            "--reviewer-command",
            "sh review.sh",
        ],
    );
    let before = env.cmd(&["status"]).success().stdout;
    let reason = env
        .stop(&env.stop_input("Parser written.\n<promise>DONE</promise>"))
        .blocked();
    let after = env.cmd(&["status"]).success().stdout;
    snapshot(
        "review",
        &format!("{before}--- the re-prompt ---\n{reason}\n--- status ---\n{after}"),
    );
    assert!(
        !after.contains("waiting for <promise>DONE</promise>"),
        "{after}"
    );
}

/// The promise made while an edited file's check fails: the re-prompt opens with a
/// sentence, then the file, the check and its output.
#[test]
fn item_11_a_failed_check_reprompt_opens_with_a_sentence() {
    let env = TestEnv::new();
    in_session(&env, &["ralph", "Write the config"]);
    env.write("config.json", "{\"a\": 1,,}\n");
    let context = env.post_tool_use("Write", "config.json", &[]).context();
    assert!(context.is_some(), "the check found nothing");
    let without_promise = env.stop(&env.stop_input("Config half written.")).blocked();
    let reason = env
        .stop(&env.stop_input("Config written.\n<promise>DONE</promise>"))
        .blocked();
    snapshot(
        "failed_check",
        &format!("{without_promise}\n--- with the promise ---\n{reason}"),
    );
}

#[test]
fn item_11_in_session_usage_says_where_the_tokens_come_from() {
    let env = TestEnv::new();
    in_session(&env, &["ralph", "Fix it"]);
    snapshot("usage_in_session", &env.cmd(&["status"]).success().stdout);
}

/// `pagent loop` stopped by Ctrl-C, and killed outright: its state stays active (it
/// resumes), and status says no runner drives it, where a running one says it does.
#[test]
fn item_11_status_tells_an_interrupted_loop_from_a_running_one() {
    let env = TestEnv::new();
    env.write(
        "agent.sh",
        "cat > /dev/null\nwhile [ ! -e go ]; do sleep 0.05; done\necho '<promise>DONE</promise>'\n",
    );
    let running = |args: &[&str], signal: i32| {
        let mut child = env
            .bin(args)
            .command()
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
        for line in lines.by_ref() {
            let event: Value = serde_json::from_str(&line.unwrap()).unwrap();
            if event["event"] == "iteration_started" {
                break;
            }
        }
        let during = env.cmd(&["status"]).success().stdout;
        let json: Value = env.status();
        assert_eq!(json["runner_running"], true, "{json}");
        testing::signal(i32::try_from(child.id()).unwrap(), signal);
        child.wait().unwrap();
        // A runner killed outright may have forked a child that has not yet exec'd: for
        // those few milliseconds the child's copy of the runner lock still holds it. Wait
        // for the lock to go, as a user's next `pagent status` would see it.
        wait_for(Duration::from_secs(20), "the runner lock's release", || {
            env.status()["runner_running"] == false
        });
        let after = env.cmd(&["status"]).success().stdout;
        let json: Value = env.status();
        assert_eq!(json["status"], "active", "{json}");
        assert_eq!(json["runner_running"], false, "{json}");
        (during, after)
    };
    let start = [
        "loop",
        "--json",
        "--command",
        "sh agent.sh",
        "ralph",
        "Task",
    ];
    let (during, interrupted) = running(&start, testing::SIGINT);
    // Resumed, then a crash: the kernel releases the runner's lock with the process.
    let (_, killed) = running(&start[..4], testing::SIGKILL);
    env.write("go", "");
    snapshot(
        "interrupted",
        &format!("{during}--- after Ctrl-C ---\n{interrupted}--- after a crash ---\n{killed}"),
    );
    env.cmd(&["loop", "--command", "sh agent.sh"]).success();
    assert_eq!(env.state()["status"], "complete");
}

//! Real processes under `sh -c`: the prompt reaches the agent on stdin and in its file,
//! stdout becomes the final message and both streams the log, a crash is a failure to
//! retry, the two clocks stop a hung group, and a missing program never starts.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::*;
use std::fs;

fn limits() -> Limits {
    Limits {
        iteration_timeout: Duration::from_secs(20),
        idle_timeout: Duration::from_secs(20),
    }
}

fn run(line: &str, limits: Limits) -> (AgentRun, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let spec = AgentSpec::Command {
        line: line.to_owned(),
    };
    fs::create_dir_all(dir.path().join("logs")).unwrap();
    let prompt_file = dir.path().join("logs/iter-1.prompt.md");
    fs::write(&prompt_file, "the prompt\n").unwrap();
    let log = fs::File::create(dir.path().join("logs/iter-1.log")).unwrap();
    let run = run_agent(
        &spec,
        dir.path(),
        "the prompt\n",
        &prompt_file,
        Some(log),
        &[("EXTRA", "x".into())],
        limits,
        &mut |_| true,
    );
    (run, dir)
}

#[test]
fn a_command_gets_the_prompt_and_its_stdout_is_the_final_message() {
    let (run, dir) = run(
        "cat; echo \"driver=$PAGENT_DRIVER extra=$EXTRA\"; cat {prompt_file} >&2",
        limits(),
    );
    assert_eq!(run.end, End::Exited(Some(0)));
    assert_eq!(
        run.final_message().unwrap(),
        "the prompt\ndriver=loop extra=x\n"
    );
    assert_eq!(
        run.failure(&AgentSpec::Command {
            line: String::new()
        }),
        None
    );
    let log = fs::read_to_string(dir.path().join("logs/iter-1.log")).unwrap();
    // stdout and stderr are read by two threads: their lines interleave in any order.
    let mut lines: Vec<&str> = log.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        ["[stderr] the prompt", "driver=loop extra=x", "the prompt"],
        "{log}"
    );
}

#[test]
fn a_crash_is_a_failure_to_retry() {
    let (run, _dir) = run("echo oops >&2; exit 3", limits());
    assert_eq!(run.end, End::Exited(Some(3)));
    assert_eq!(
        run.failure(&AgentSpec::Command {
            line: String::new()
        })
        .unwrap(),
        "the agent exited with code 3"
    );
}

#[test]
fn the_iteration_timeout_and_the_watchdog_stop_the_whole_group() {
    let started = Instant::now();
    let (timed_out, _dir) = run(
        "echo start; sleep 30 & while true; do echo tick; sleep 0.2; done",
        Limits {
            iteration_timeout: Duration::from_secs(1),
            idle_timeout: Duration::from_secs(20),
        },
    );
    assert_eq!(timed_out.end, End::TimedOut);
    let (stalled, _dir) = run(
        "echo start; sleep 30",
        Limits {
            iteration_timeout: Duration::from_secs(20),
            idle_timeout: Duration::from_secs(1),
        },
    );
    assert_eq!(stalled.end, End::Stalled);
    assert!(
        started.elapsed() < Duration::from_secs(12),
        "{:?}",
        started.elapsed()
    );
}

#[test]
fn a_missing_program_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let spec = AgentSpec::Known {
        kind: AgentKind::Claude,
        program: "/nonexistent/claude".into(),
        permission_mode: "acceptEdits".into(),
        extra_args: vec![],
    };
    let run = run_agent(
        &spec,
        dir.path(),
        "p",
        &dir.path().join("p.md"),
        None,
        &[],
        limits(),
        &mut |_| true,
    );
    assert!(matches!(run.end, End::NotStarted(_)), "{:?}", run.end);
}

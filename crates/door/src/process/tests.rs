//! The door's rules, each tried on real processes: programs found only outside the
//! project, children given the cleaned `PATH`, groups killed, output capped, and output
//! kept when a grandchild leaves the group holding the pipe.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::fs;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;
use std::time::{Duration, Instant};

use pagent_test_support::timing::Baseline;

use super::run::Output;
use super::*;

fn limits(secs: u64) -> RunLimits {
    RunLimits {
        timeout: Duration::from_secs(secs),
        keep: 64 * 1024,
    }
}

fn sh(line: &str, cwd: &Path) -> Launch {
    Launch::shell(
        line,
        cwd,
        &SearchPath::new(Some("/usr/bin:/bin".as_ref()), &[]),
    )
}

/// What starting and reaping one short child takes through the door here, now: the unit
/// of this file's time limits (a limit is a fixed wait plus so many of these, and never
/// under what it was on a quiet machine).
fn child_start(dir: &Path) -> Baseline {
    Baseline::measure(3, || {
        let ran = sh("echo started", dir).run(limits(20), &mut || true);
        assert!(matches!(ran, Ran::Exited { code: Some(0), .. }), "{ran:?}");
    })
}

fn executable(path: &Path, script: &str) {
    fs::create_dir_all(path.parent().unwrap()).unwrap();
    fs::write(path, format!("#!/bin/sh\n{script}\n")).unwrap();
    fs::set_permissions(path, fs::Permissions::from_mode(0o755)).unwrap();
}

#[test]
fn empty_relative_and_in_project_path_entries_are_dropped() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let project = root.join("project");
    executable(&project.join("sh"), "touch pwned");
    executable(&project.join("bin/git"), "touch pwned");
    executable(&root.join("tools/git"), "exit 0");
    // A folder outside that is a symlink into the project is inside it too.
    std::os::unix::fs::symlink(project.join("bin"), root.join("looks-outside")).unwrap();
    let path = std::env::join_paths([
        Path::new(""),
        Path::new("."),
        Path::new("bin"),
        &project,
        &project.join("bin"),
        &root.join("looks-outside"),
        &root.join("tools"),
        Path::new("/bin"),
    ])
    .unwrap();
    let search = SearchPath::new(Some(&path), &[&project]);
    assert_eq!(search.dirs(), [root.join("tools"), "/bin".into()]);
    assert_eq!(
        Program::named("git", &search).unwrap().path(),
        root.join("tools/git")
    );
    assert!(Program::named("./sh", &search).is_err());
    assert!(matches!(
        Program::from_setting(&project.join("sh"), "PAGENT_REVIEWER_BIN", &search),
        Err(ProgramError::InProject(_))
    ));
    assert!(matches!(
        Program::from_setting(Path::new("claude"), "PAGENT_REVIEWER_BIN", &search),
        Err(ProgramError::NotAbsolute(_))
    ));
}

/// Finding 4: with `PATH=.:...`, `sh -c` and the programs the shell finds were the
/// project's. The shell is `/bin/sh` by path, and the child's PATH is the cleaned one.
#[test]
fn finding_4_a_path_of_dot_never_runs_the_projects_sh() {
    let dir = tempfile::tempdir().unwrap();
    let project = dir.path().canonicalize().unwrap();
    executable(&project.join("sh"), "touch pwned-sh");
    executable(&project.join("git"), "touch pwned-git");
    let search = SearchPath::new(Some(".:/usr/bin:/bin".as_ref()), &[&project]);
    let ran = Launch::shell(
        "git --version >/dev/null 2>&1; echo \"$PATH\"",
        &project,
        &search,
    )
    .run(limits(10), &mut || true);
    assert_eq!(
        ran,
        Ran::Exited {
            code: Some(0),
            output: "/usr/bin:/bin\n".into()
        }
    );
    assert!(!project.join("pwned-sh").exists());
    assert!(!project.join("pwned-git").exists());
}

#[test]
fn passes_fails_and_keeps_the_merged_output_in_order() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        sh("echo out; echo err >&2; exit 3", dir.path()).run(limits(5), &mut || true),
        Ran::Exited {
            code: Some(3),
            output: "out\nerr\n".into()
        }
    );
}

/// Left out under qemu-user (scripts/test.sh), which cannot report a failed exec.
#[test]
fn a_missing_program_is_not_started() {
    let dir = tempfile::tempdir().unwrap();
    let missing = Launch::new(
        Program::at("/nonexistent/program".into()),
        dir.path(),
        &SearchPath::default(),
    );
    assert!(matches!(
        missing.run(limits(5), &mut || true),
        Ran::NotStarted(_)
    ));
}

#[test]
fn times_out_and_kills_the_whole_group() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = child_start(dir.path());
    let started = Instant::now();
    // The background sleep holds the pipe open: only a group kill ends it.
    let ran = sh("echo started; sleep 30 & sleep 30", dir.path()).run(limits(1), &mut || true);
    // The timeout, then the kill: far from the 30 s a missed kill waits.
    let beyond = started.elapsed().saturating_sub(Duration::from_secs(1));
    baseline.assert_within(
        beyond,
        100,
        Duration::from_secs(9),
        "the kill after the timeout",
    );
    assert_eq!(
        ran,
        Ran::TimedOut {
            output: "started\n".into()
        }
    );
}

#[test]
fn background_leftovers_do_not_hold_a_child_that_ended() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = child_start(dir.path());
    let started = Instant::now();
    let ran = sh("sleep 30 & echo done", dir.path()).run(limits(20), &mut || true);
    // Held by the leftover, it would take the whole 20 s timeout.
    baseline.assert_within(
        started.elapsed(),
        100,
        Duration::from_secs(5),
        "a child whose leftover holds its pipe",
    );
    assert_eq!(
        ran,
        Ran::Exited {
            code: Some(0),
            output: "done\n".into()
        }
    );
}

/// Finding 10: a grandchild that calls `setsid` leaves the group, survives the group
/// kill and keeps the pipe open; the check's output was lost with the reader thread that
/// waited on it. Now the pipe is drained for a moment and what was printed is kept.
#[test]
fn finding_10_a_setsid_child_holding_the_pipe_loses_no_output() {
    let dir = tempfile::tempdir().unwrap();
    let marker = dir.path().join("escaped.pid");
    let line = format!(
        "echo started; echo failing check output >&2; setsid sh -c 'echo $$ > {}; exec sleep 30' & sleep 30",
        marker.display()
    );
    let baseline = child_start(dir.path());
    let started = Instant::now();
    let ran = sh(&line, dir.path()).run(limits(1), &mut || true);
    let took = started.elapsed();
    if let Ok(pid) = fs::read_to_string(&marker) {
        // SAFETY: kill(2) of the test's own escaped grandchild.
        unsafe { libc::kill(pid.trim().parse().unwrap(), libc::SIGKILL) };
    }
    assert_eq!(
        ran,
        Ran::TimedOut {
            output: "started\nfailing check output\n".into()
        }
    );
    // The timeout, then a moment's drain: far from the 30 s the escaped sleep holds on.
    baseline.assert_within(
        took.saturating_sub(Duration::from_secs(1)),
        100,
        Duration::from_secs(5),
        "the kill and the drain after the timeout",
    );
}

#[test]
fn a_child_stops_as_soon_as_the_caller_says_so() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = child_start(dir.path());
    let started = Instant::now();
    let mut asked = 0;
    let ran = sh("sleep 30", dir.path()).run(limits(60), &mut || {
        asked += 1;
        asked < 3
    });
    assert_eq!(ran, Ran::Stopped);
    baseline.assert_within(
        started.elapsed(),
        100,
        Duration::from_secs(5),
        "a stop the caller asked for",
    );
}

#[test]
fn keeps_only_the_tail_of_long_output() {
    let dir = tempfile::tempdir().unwrap();
    let ran = sh("seq 1 100000; exit 1", dir.path()).run(
        RunLimits {
            timeout: Duration::from_secs(20),
            keep: 4096,
        },
        &mut || true,
    );
    let Ran::Exited { output, .. } = ran else {
        panic!("{ran:?}")
    };
    assert!(output.len() <= 4096);
    assert!(output.ends_with("99999\n100000\n"));
}

#[test]
fn output_keeps_the_streams_apart() {
    let dir = tempfile::tempdir().unwrap();
    let out = sh("echo to-out; echo to-err >&2; exit 2", dir.path())
        .output(Duration::from_secs(5), 1024)
        .unwrap();
    assert_eq!(
        out,
        Output {
            code: Some(2),
            timed_out: false,
            stdout: "to-out\n".into(),
            stderr: "to-err\n".into()
        }
    );
}

#[test]
fn an_isolated_checker_runs_from_the_neutral_folder() {
    let dir = tempfile::tempdir().unwrap();
    let ran = sh("pwd", dir.path())
        .isolated()
        .run(limits(5), &mut || true);
    assert_eq!(
        ran,
        Ran::Exited {
            code: Some(0),
            output: format!("{NEUTRAL_DIR}\n")
        }
    );
}

#[test]
fn a_running_child_is_stopped_with_its_group() {
    let dir = tempfile::tempdir().unwrap();
    let baseline = child_start(dir.path());
    let mut running = sh("sleep 30 & sleep 30", dir.path())
        .spawn(Streams {
            stdin: Input::Null,
            output: true,
        })
        .unwrap();
    let mut stdout = running.take_stdout().unwrap();
    let started = Instant::now();
    running.stop(Duration::from_secs(3));
    // The group is gone: nothing holds stdout any more.
    let mut rest = Vec::new();
    std::io::Read::read_to_end(&mut stdout, &mut rest).unwrap();
    baseline.assert_within(
        started.elapsed(),
        100,
        Duration::from_secs(5),
        "stopping a group",
    );
    assert!(running.try_wait().is_some());
}

//! Real processes under `sh -c`: the prompt reaches the agent on stdin and in its file,
//! stdout becomes the final message and both streams the log, a crash is a failure to
//! retry, the two clocks stop a hung group, and a missing program never starts.

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use super::reader::{Line, MAX_LINE, read_capped_line};
use super::*;
use std::fs;
use std::io::BufReader;
use std::time::Instant;

use pagent_door::process::SearchPath;

use pagent_protocol::stream::AgentKind;

fn search() -> SearchPath {
    SearchPath::new(std::env::var_os("PATH").as_deref(), &[])
}

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
        contain: None,
    };
    fs::create_dir_all(dir.path().join("logs")).unwrap();
    let prompt_file = dir.path().join("logs/iter-1.prompt.md");
    fs::write(&prompt_file, "the prompt\n").unwrap();
    let log = fs::File::create(dir.path().join("logs/iter-1.log")).unwrap();
    let run = Invocation {
        spec: &spec,
        search: &search(),
        cwd: dir.path(),
        prompt: "the prompt\n",
        prompt_file: &prompt_file,
        log: Some(log),
        env: &[("EXTRA", "x".into())],
        remove: &[],
        limits,
    }
    .run(&mut |_| true);
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
            line: String::new(),
            contain: None,
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
            line: String::new(),
            contain: None,
        })
        .unwrap(),
        "the agent exited with code 3"
    );
}

#[test]
fn the_iteration_timeout_and_the_watchdog_stop_the_whole_group() {
    // What one short agent run takes here now: the unit of the limit below.
    let baseline = pagent_test_support::timing::Baseline::measure(3, || {
        assert_eq!(run("echo done", limits()).0.end, End::Exited(Some(0)));
    });
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
    // Two one-second clocks, then the kills: far from the 20 s either would wait if the
    // other clock did not stop the group, or the 30 s of the sleep if the kill missed it.
    baseline.assert_within(
        started.elapsed().saturating_sub(Duration::from_secs(2)),
        100,
        Duration::from_secs(10),
        "two runs stopped by their clocks",
    );
}

#[test]
fn a_missing_program_does_not_start() {
    let dir = tempfile::tempdir().unwrap();
    let spec = AgentSpec::Known {
        kind: AgentKind::Claude,
        program: pagent_door::process::Program::at("/nonexistent/claude".into()),
        permission_mode: "acceptEdits".into(),
        extra_args: vec![],
        contain: None,
    };
    let run = Invocation {
        spec: &spec,
        search: &search(),
        cwd: dir.path(),
        prompt: "p",
        prompt_file: &dir.path().join("p.md"),
        log: None,
        env: &[],
        remove: &[],
        limits: limits(),
    }
    .run(&mut |_| true);
    assert!(matches!(run.end, End::NotStarted(_)), "{:?}", run.end);
}

/// A reader of `len` bytes of `x`, then `rest`, made up as it is read: a line of any
/// length without the memory to hold it.
struct LongLine {
    len: u64,
    rest: &'static [u8],
}

impl std::io::Read for LongLine {
    fn read(&mut self, out: &mut [u8]) -> std::io::Result<usize> {
        if self.len > 0 {
            let n = out
                .len()
                .min(usize::try_from(self.len).unwrap_or(usize::MAX));
            out[..n].fill(b'x');
            self.len -= n as u64;
            return Ok(n);
        }
        let n = out.len().min(self.rest.len());
        out[..n].copy_from_slice(&self.rest[..n]);
        self.rest = &self.rest[n..];
        Ok(n)
    }
}

#[test]
fn cap_one_agent_output_line() {
    // A 256 MiB line read with a 1 MiB cap: the first MiB is kept, the rest skipped, and
    // the next line is found whole. The buffer never grows past the cap.
    let cap = 1 << 20;
    let mut reader = BufReader::new(LongLine {
        len: 256 << 20,
        rest: b"\nnext line\nlast, no newline",
    });
    let mut buf = Vec::new();
    assert_eq!(
        read_capped_line(&mut reader, &mut buf, cap).unwrap(),
        Line::Cut {
            dropped: (256 << 20) + 1 - cap as u64
        }
    );
    assert_eq!(buf.len(), cap);
    assert!(buf.iter().all(|b| *b == b'x'));
    assert!(buf.capacity() <= 2 * cap, "{}", buf.capacity());
    for (line, expected) in [
        (&b"next line\n"[..], Line::Whole),
        (b"last, no newline", Line::Whole),
        (b"", Line::End),
    ] {
        buf.clear();
        assert_eq!(
            read_capped_line(&mut reader, &mut buf, cap).unwrap(),
            expected
        );
        assert_eq!(buf, line);
    }
}

#[test]
fn cap_one_agent_output_line_of_a_real_process() {
    // 12 MiB on one line, with the real cap (4 MiB): the log holds the first 4 MiB and a
    // note, and the line after it is read.
    let (run, dir) = run(
        "head -c 12582912 /dev/zero | tr '\\0' x; echo; echo after",
        limits(),
    );
    assert_eq!(run.end, End::Exited(Some(0)));
    let log = fs::read_to_string(dir.path().join("logs/iter-1.log")).unwrap();
    let lines: Vec<&str> = log.lines().collect();
    assert_eq!(lines.len(), 2, "{}", log.len());
    assert_eq!(
        lines[0].len(),
        MAX_LINE + "…[pagent: 8388609 more bytes of this line skipped]".len()
    );
    assert!(lines[0].ends_with("…[pagent: 8388609 more bytes of this line skipped]"));
    assert_eq!(lines[1], "after");
    assert!(run.final_message().unwrap().ends_with("skipped]\nafter\n"));
}

#[cfg(unix)] // Unix-only fixtures (symlinks, FIFOs, modes, sh); Windows: door/win/tests.rs
#[test]
fn opencode_gets_its_prompt_on_stdin_whatever_its_size() {
    // A stand-in for `opencode`: it fails if given a message argument, and answers with the
    // size of what it read, in OpenCode's format.
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("opencode");
    fs::write(
        &fake,
        "#!/bin/sh\n[ \"$*\" = 'run --format json' ] || { echo \"args: $*\" >&2; exit 9; }\n\
         n=$(wc -c | tr -d ' ')\n\
         printf '{\"type\":\"text\",\"sessionID\":\"s\",\"part\":{\"id\":\"p\",\"text\":\"read %s bytes\"}}\\n' \"$n\"\n\
         printf '{\"type\":\"step_finish\",\"sessionID\":\"s\",\"part\":{\"reason\":\"stop\"}}\\n'\n",
    )
    .unwrap();
    fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let spec = AgentSpec::Known {
        kind: AgentKind::Opencode,
        program: pagent_door::process::Program::at(fake),
        permission_mode: "acceptEdits".into(),
        extra_args: vec![],
        contain: None,
    };
    // Over the 128 KiB a single argument may have.
    let prompt = "p".repeat(300 * 1024);
    let run = Invocation {
        spec: &spec,
        search: &search(),
        cwd: dir.path(),
        prompt: &prompt,
        prompt_file: &dir.path().join("p.md"),
        log: None,
        env: &[],
        remove: &[],
        limits: limits(),
    }
    .run(&mut |_| true);
    assert_eq!(run.end, End::Exited(Some(0)));
    assert_eq!(run.final_message().unwrap(), "read 307200 bytes");
    assert!(run.summary.finished);
    assert_eq!(run.failure(&spec), None);
}

#[cfg(unix)] // Unix-only fixtures (symlinks, FIFOs, modes, sh); Windows: door/win/tests.rs
#[test]
fn the_agent_gets_its_folder_as_pwd() {
    // OpenCode takes its project from $PWD: an inherited one pointed it at the folder
    // pagent was started from. No shell in between (a shell would fix PWD by itself).
    let dir = tempfile::tempdir().unwrap();
    let fake = dir.path().join("opencode");
    fs::write(
        &fake,
        "#!/usr/bin/env python3\nimport json, os, sys\nsys.stdin.read()\n\
         print(json.dumps({'type': 'text', 'part': {'id': 'p', 'text': os.environ.get('PWD', '')}}))\n",
    )
    .unwrap();
    fs::set_permissions(&fake, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    let project = dir.path().join("project");
    fs::create_dir(&project).unwrap();
    let spec = AgentSpec::Known {
        kind: AgentKind::Opencode,
        program: pagent_door::process::Program::at(fake),
        permission_mode: "acceptEdits".into(),
        extra_args: vec![],
        contain: None,
    };
    let run = Invocation {
        spec: &spec,
        search: &search(),
        cwd: &project,
        prompt: "p",
        prompt_file: &dir.path().join("p.md"),
        log: None,
        env: &[],
        remove: &[],
        limits: limits(),
    }
    .run(&mut |_| true);
    assert_eq!(run.end, End::Exited(Some(0)), "{run:?}");
    assert_eq!(run.final_message().unwrap(), project.display().to_string());
}

/// Issue 33: one run that prints without end stops filling its log at the cap, and the
/// log says so once.
#[test]
fn a_runs_log_stops_at_its_cap_and_says_so_once() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("run.log");
    let mut log = super::CappedLog {
        file: fs::File::create(&path).unwrap(),
        written: 0,
        cap: 100,
    };
    for _ in 0..50 {
        log.write(b"0123456789012345678\n");
    }
    let text = fs::read_to_string(&path).unwrap();
    assert!(text.starts_with("0123456789012345678\n"), "{text}");
    assert_eq!(text.matches("the rest is not logged").count(), 1, "{text}");
    assert!(text.len() < 200, "{} bytes", text.len());
}

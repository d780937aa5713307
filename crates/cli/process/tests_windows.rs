//! The process door on Windows, tried on real processes (under Wine here, natively on the
//! release workflow's Windows runner): a stopped check takes its children with it (the
//! job object), output is read through peeked pipes in order and capped, and programs
//! are found with Windows' extensions. The children are this test binary itself, run
//! again as [`child`] (Wine has no `sleep`; `cmd` is the only shell both have).

#![allow(clippy::disallowed_methods, clippy::disallowed_types)]

use std::path::Path;
use std::time::{Duration, Instant};

use super::*;

const ROLE: &str = "PAGENT_TEST_CHILD_ROLE";
const PID_FILE: &str = "PAGENT_TEST_CHILD_PID_FILE";

fn limits(secs: u64) -> RunLimits {
    RunLimits {
        timeout: Duration::from_secs(secs),
        keep: 64 * 1024,
    }
}

/// This test binary run as [`child`] with `role`.
fn me(role: &str, cwd: &Path) -> Launch {
    let exe = std::env::current_exe().unwrap();
    Launch::new(
        Program::at(exe),
        cwd,
        &SearchPath::new(std::env::var_os("PATH").as_deref(), &[]),
    )
    .args([
        "--exact",
        "process::tests_windows::child",
        "--ignored",
        "--nocapture",
        "--test-threads=1",
    ])
    .env(ROLE, role)
}

/// Not a test: what the tests start. `sleep` sleeps a minute; `parent` starts a `sleep`
/// grandchild (writing its id to the pid file) and then sleeps.
#[test]
#[ignore = "a child process of the tests below, never run alone"]
fn child() {
    match std::env::var(ROLE).as_deref() {
        Ok("sleep") => std::thread::sleep(Duration::from_secs(60)),
        Ok("parent") => {
            let exe = std::env::current_exe().unwrap();
            // Never waited for: the job object is what must end it.
            #[allow(clippy::zombie_processes)]
            let grandchild = std::process::Command::new(exe)
                .args([
                    "--exact",
                    "process::tests_windows::child",
                    "--ignored",
                    "--test-threads=1",
                ])
                .env(ROLE, "sleep")
                .stdout(std::process::Stdio::null())
                .spawn()
                .unwrap();
            std::fs::write(
                std::env::var(PID_FILE).unwrap(),
                grandchild.id().to_string(),
            )
            .unwrap();
            println!("started {}", grandchild.id());
            std::thread::sleep(Duration::from_secs(60));
        }
        Ok("echo") => {
            println!("to-out");
            eprintln!("to-err");
            std::process::exit(3);
        }
        _ => {}
    }
}

fn alive(pid: u32) -> bool {
    use windows_sys::Win32::Foundation::{CloseHandle, STILL_ACTIVE};
    use windows_sys::Win32::System::Threading::{
        GetExitCodeProcess, OpenProcess, PROCESS_QUERY_LIMITED_INFORMATION,
    };
    // SAFETY: a handle we own and close, or null.
    unsafe {
        let handle = OpenProcess(PROCESS_QUERY_LIMITED_INFORMATION, 0, pid);
        if handle.is_null() {
            return false;
        }
        let mut code = 0u32;
        let ok = GetExitCodeProcess(handle, &raw mut code);
        CloseHandle(handle);
        ok != 0 && code == STILL_ACTIVE as u32
    }
}

/// Issue 25: a check stopped at its time limit takes its children with it (the job
/// object), as a process group does on Unix.
#[test]
fn windows_a_stopped_check_takes_its_children_with_it() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("grandchild.pid");
    let started = Instant::now();
    let ran = me("parent", dir.path())
        .env(PID_FILE, &pid_file)
        .run(limits(5), &mut || true);
    assert!(matches!(ran, Ran::TimedOut { .. }), "{ran:?}");
    assert!(
        started.elapsed() < Duration::from_secs(20),
        "{:?}",
        started.elapsed()
    );
    let grandchild: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(grandchild) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        !alive(grandchild),
        "the grandchild {grandchild} outlived its check"
    );
}

/// A caller's "stop" ends the child and its job at once.
#[test]
fn windows_a_running_child_is_stopped_with_its_job() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("grandchild.pid");
    let mut running = me("parent", dir.path())
        .env(PID_FILE, &pid_file)
        .spawn(Streams {
            stdin: Input::Null,
            output: true,
        })
        .unwrap();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !pid_file.exists() && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    let grandchild: u32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    running.stop(Duration::from_millis(500));
    assert!(running.try_wait().is_some());
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(grandchild) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(!alive(grandchild));
}

/// Output comes through pipes peeked without blocking, both streams, with the exit code.
#[test]
fn windows_output_is_read_through_peeked_pipes() {
    let dir = tempfile::tempdir().unwrap();
    let out = me("echo", dir.path())
        .output(Duration::from_secs(20), 64 * 1024)
        .unwrap();
    assert_eq!(out.code, Some(3), "{out:?}");
    assert!(out.stdout.contains("to-out"), "{out:?}");
    assert!(out.stderr.contains("to-err"), "{out:?}");
    match me("echo", dir.path()).run(limits(20), &mut || true) {
        Ran::Exited {
            code: Some(3),
            output,
        } => {
            assert!(
                output.contains("to-out") && output.contains("to-err"),
                "{output}"
            );
        }
        other => panic!("{other:?}"),
    }
}

/// Programs are found with Windows' extensions, and a name with a separator is refused.
#[test]
fn windows_programs_are_found_with_their_extensions() {
    let dir = tempfile::tempdir().unwrap();
    let bin = dir.path().join("bin");
    std::fs::create_dir(&bin).unwrap();
    std::fs::write(bin.join("tool.exe"), b"MZ").unwrap();
    std::fs::write(bin.join("other.cmd"), b"@echo off").unwrap();
    std::fs::write(bin.join("plain"), b"#!/bin/sh").unwrap();
    let search = SearchPath::new(Some(bin.as_os_str()), &[]);
    assert_eq!(
        Program::named("tool", &search).unwrap().path(),
        bin.join("tool.exe")
    );
    assert_eq!(
        Program::named("other", &search).unwrap().path(),
        bin.join("other.cmd")
    );
    assert!(Program::named("plain", &search).is_err());
    assert!(Program::named(r"bin\tool", &search).is_err());
    assert!(Program::named("C:tool", &search).is_err());
}

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

/// Issue 25: a program planted in the project is never found, however `PATH` names the
/// project: a relative entry (Windows' own search would take `.` first), an empty one,
/// the project's folder as written, in another case (NTFS ignores it), or through its
/// 8.3 short name.
#[test]
fn windows_a_program_planted_in_the_project_is_never_found() {
    let dir = tempfile::tempdir().unwrap();
    let root = crate::files::canonical(dir.path()).unwrap();
    let project = root.join("Project Folder");
    let outside = root.join("tools");
    for folder in [project.join("bin"), outside.clone()] {
        std::fs::create_dir_all(&folder).unwrap();
    }
    for planted in [project.join("git.exe"), project.join("bin").join("git.exe")] {
        std::fs::write(planted, b"MZ planted").unwrap();
    }
    let bin = project.join("bin");
    let upper = std::path::PathBuf::from(bin.to_str().unwrap().to_uppercase());
    let mut entries = vec![
        std::ffi::OsString::from("."),
        std::ffi::OsString::from("bin"),
        std::ffi::OsString::new(),
        bin.clone().into_os_string(),
        upper.into_os_string(),
    ];
    if let Some(short) = short_name(&bin) {
        entries.push(short.into_os_string());
    }
    let path = std::env::join_paths(&entries).unwrap();
    let found = SearchPath::new(Some(&path), &[&project]).find("git");
    assert_eq!(found, None, "PATH {path:?}");

    std::fs::write(outside.join("git.exe"), b"MZ the user's").unwrap();
    entries.push(outside.clone().into_os_string());
    let path = std::env::join_paths(&entries).unwrap();
    assert_eq!(
        SearchPath::new(Some(&path), &[&project]).find("git"),
        Some(outside.join("git.exe"))
    );
}

/// The 8.3 short name Windows gives `path`, when it gives one (NTFS may not).
fn short_name(path: &Path) -> Option<std::path::PathBuf> {
    use std::os::windows::ffi::{OsStrExt, OsStringExt};
    let wide: Vec<u16> = path.as_os_str().encode_wide().chain([0]).collect();
    let mut buf = vec![0u16; 1024];
    // SAFETY: both buffers are valid for the lengths given; the call writes at most
    // `buf.len()` units and returns how many it wrote.
    let len = unsafe {
        windows_sys::Win32::Storage::FileSystem::GetShortPathNameW(
            wide.as_ptr(),
            buf.as_mut_ptr(),
            u32::try_from(buf.len()).unwrap(),
        )
    };
    let len = usize::try_from(len)
        .ok()
        .filter(|&n| n > 0 && n < buf.len())?;
    let short = std::path::PathBuf::from(std::ffi::OsString::from_wide(&buf[..len]));
    (short != path).then_some(short)
}

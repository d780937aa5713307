//! Streams that fail: pagent's output goes to the streams `run` is given, and a stream
//! that cannot be written (a reader that went away, a full disk under a redirect) never
//! turns into a panic, a block or exit 2. The hooks still fail open; other commands say
//! what failed and exit 1.

use std::io::Write;
use std::process::Stdio;

use crate::util::*;

/// A stream whose every write fails, as a closed pipe's does.
struct Gone;

impl Write for Gone {
    fn write(&mut self, _: &[u8]) -> std::io::Result<usize> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Err(std::io::ErrorKind::BrokenPipe.into())
    }
}

/// `pagent ARGS` in-process with `stdin`, stdout failing every write; the status and
/// what reached stderr.
fn run_with_stdout_gone(env: &TestEnv, args: &[&str], stdin: &str) -> (u8, String) {
    let vars = [
        ("HOME", env.home.as_os_str()),
        ("PAGENT_CONFIG_DIR", env.config.as_os_str()),
        ("CLAUDE_PROJECT_DIR", env.root.as_os_str()),
    ];
    let pagent_env = pagent::Env::from_vars(
        |key| {
            vars.iter()
                .find(|(k, _)| *k == key)
                .map(|(_, v)| v.to_os_string())
        },
        Some(env.root.clone()),
    );
    let mut argv = vec![std::ffi::OsString::from("pagent")];
    argv.extend(args.iter().map(std::ffi::OsString::from));
    let mut stderr = Vec::new();
    let status = pagent::run(
        argv,
        &pagent_env,
        &mut pagent::Io {
            stdin: &mut stdin.as_bytes(),
            stdout: &mut Gone,
            stderr: &mut stderr,
            stdout_is_terminal: false,
            stdin_is_terminal: false,
        },
    );
    (status.code(), String::from_utf8_lossy(&stderr).into_owned())
}

#[test]
fn a_stop_hook_whose_stdout_is_gone_allows_the_stop_quietly() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    let (code, stderr) = run_with_stdout_gone(
        &env,
        &["hook", "stop"],
        &env.stop_input("working").to_string(),
    );
    // The block could not be delivered: Claude Code sees no decision, which allows.
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stderr, "");
}

#[test]
fn status_with_its_stdout_gone_says_so_on_stderr_and_exits_1() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    let (code, stderr) = run_with_stdout_gone(&env, &["status"], "");
    assert_eq!(code, 1, "{stderr}");
    assert!(stderr.starts_with("pagent: error: "), "{stderr}");
}

#[test]
fn the_binary_with_a_closed_stdout_pipe_never_panics_or_exits_2() {
    let env = TestEnv::new();
    env.cmd(&["ralph", "Fix it"]).success();
    for (args, stdin, expected) in [
        (
            vec!["hook", "stop"],
            env.stop_input("working").to_string(),
            0,
        ),
        (vec!["status"], String::new(), 1),
    ] {
        let (reader, writer) = std::io::pipe().unwrap();
        drop(reader);
        let mut child = env
            .bin(&args)
            .env("CLAUDE_PROJECT_DIR", &env.root)
            .command()
            .stdin(Stdio::piped())
            .stdout(writer)
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let _ = child.stdin.take().unwrap().write_all(stdin.as_bytes());
        let out = child.wait_with_output().unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(expected), "{args:?}: {stderr}");
        assert!(
            !stderr.contains("panicked") && !stderr.contains("internal error"),
            "{args:?}: {stderr}"
        );
    }
}

//! One pagent command of a test, and what it did.
//!
//! A command runs in-process by default: [`pagent::run`] with the test's own environment
//! map, working directory and stdin, its stdout and stderr captured, so a behaviour test
//! costs no process start. Three kinds run the real binary instead: `pagent loop` and
//! `pagent parallel` (they own child processes, which inherit the process environment,
//! and install signal handlers), whatever [`TestEnv::bin`](super::TestEnv::bin) asks for
//! (exit codes, signals, panics, the hooks' fast path: the binary's contract), and every
//! command when `$PAGENT_TEST_BIN` names another build to test.

use std::ffi::{OsStr, OsString};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use pagent_door::testing;

use super::Run;
use super::pagent_bin;

pub struct TestCommand {
    args: Vec<OsString>,
    /// Set over the cleaned environment, in order (a later setting wins).
    vars: Vec<(OsString, OsString)>,
    cwd: PathBuf,
    stdin: Option<Vec<u8>>,
    env: String,
    whole_binary: bool,
}

/// Inherited variables a test never sees: Claude Code's and pagent's own, and the config
/// folders that would point at the real user's.
fn cleared(key: &str) -> bool {
    key.starts_with("CLAUDE")
        || key.starts_with("PAGENT")
        || key == "XDG_CONFIG_HOME"
        || key == "CODEX_HOME"
}

impl TestCommand {
    pub(crate) fn new(args: &[&str], cwd: &Path, env: String, whole_binary: bool) -> Self {
        let owns_processes = args.iter().any(|a| *a == "loop" || *a == "parallel");
        TestCommand {
            args: args.iter().map(OsString::from).collect(),
            vars: Vec::new(),
            cwd: cwd.to_path_buf(),
            stdin: None,
            env,
            whole_binary: whole_binary
                || owns_processes
                || std::env::var_os("PAGENT_TEST_BIN").is_some(),
        }
    }

    pub fn env(mut self, key: &str, value: impl AsRef<OsStr>) -> Self {
        self.vars.push((key.into(), value.as_ref().to_os_string()));
        self
    }

    pub fn stdin(mut self, bytes: impl Into<Vec<u8>>) -> Self {
        self.stdin = Some(bytes.into());
        self
    }

    pub fn current_dir(mut self, dir: &Path) -> Self {
        self.cwd = dir.to_path_buf();
        self
    }

    /// The variable as the command sees it: the test's setting, else the process's own
    /// unless cleared.
    fn var(&self, key: &str) -> Option<OsString> {
        match self.vars.iter().rev().find(|(k, _)| k == key) {
            Some((_, value)) => Some(value.clone()),
            None if cleared(key) => None,
            None => std::env::var_os(key),
        }
    }

    /// The real binary with this command's arguments, directory and environment (stdio
    /// left to the caller): for tests that signal, limit or time the process itself.
    pub fn command(&self) -> Command {
        let mut command = Command::new(pagent_bin());
        command.args(&self.args).current_dir(&self.cwd);
        for (key, _) in std::env::vars_os() {
            if cleared(&key.to_string_lossy()) {
                command.env_remove(&key);
            }
        }
        command.envs(self.vars.iter().map(|(k, v)| (k, v)));
        command
    }

    fn describe(&self) -> String {
        let how = if self.whole_binary {
            "binary"
        } else {
            "in-process"
        };
        let set: Vec<String> = self
            .vars
            .iter()
            .map(|(k, v)| format!("{}={}", k.to_string_lossy(), v.to_string_lossy()))
            .collect();
        format!(
            "pagent {:?} ({how}; in {}; {}; {})",
            self.args,
            self.cwd.display(),
            set.join(" "),
            self.env
        )
    }

    pub fn run(self) -> Run {
        let run = if self.whole_binary {
            self.run_binary()
        } else {
            self.run_in_process()
        };
        run.never_blocks_by_exit_or_crashes();
        run
    }

    fn run_in_process(self) -> Run {
        let mut env = pagent::Env::from_vars(|key| self.var(key), Some(self.cwd.clone()));
        env.exe = Some(pagent_bin());
        let mut argv = vec![OsString::from("pagent")];
        argv.extend(self.args.iter().cloned());
        let mut stdin = std::io::Cursor::new(self.stdin.clone().unwrap_or_default());
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let status = pagent::run(
            argv,
            &env,
            &mut pagent::Io {
                stdin: &mut stdin,
                stdout: &mut stdout,
                stderr: &mut stderr,
                stdout_is_terminal: false,
                // A terminal on stdin is a real one, under tmux (`super::Tmux`).
                stdin_is_terminal: false,
            },
        );
        Run::new(
            Some(i32::from(status.code())),
            &stdout,
            &stderr,
            self.describe(),
        )
    }

    fn run_binary(mut self) -> Run {
        let stdin = self.stdin.take().unwrap_or_default();
        let output = with_wine_retries(
            &self.describe(),
            || self.run_binary_once(stdin.clone()),
            wine_did_not_start,
            say_wine_retry,
        );
        Run::new(
            output.status.code(),
            &output.stdout,
            &output.stderr,
            self.describe(),
        )
    }

    fn run_binary_once(&self, stdin: Vec<u8>) -> std::process::Output {
        let mut command = self.command();
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().unwrap();
        let mut pipe = child.stdin.take().unwrap();
        // The binary may exit without reading stdin (the fast path): ignore EPIPE.
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(&stdin);
        });
        let output = child.wait_with_output().unwrap();
        let _ = writer.join();
        output
    }

    /// Runs the binary with a time limit (the whole process group is killed past it) and
    /// reports the elapsed time and the peak memory: for inputs that could hang or grow a
    /// hook. The limit is `floor` on a quiet machine, and 1000 times what `pagent
    /// --version` takes here now on a slower one (qemu, load): a hang is caught either way.
    pub fn run_bounded(mut self, floor: std::time::Duration) -> Bounded {
        use std::io::Read;
        use std::os::unix::process::CommandExt;
        let limit = pagent_test_support::timing::Baseline::measure(3, || {
            // Under Wine, too, a start Wine drops is tried again (a CI run failed here).
            let version = with_wine_retries(
                "pagent --version",
                || {
                    Command::new(pagent_bin())
                        .arg("--version")
                        .output()
                        .unwrap()
                },
                wine_did_not_start,
                say_wine_retry,
            );
            assert!(version.status.success(), "{version:?}");
        })
        .limit(1000, floor);
        let rss_file = tempfile::NamedTempFile::new().unwrap();
        let mut timed = with_peak_memory(self.command(), rss_file.path());
        timed
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .process_group(0);
        let started = std::time::Instant::now();
        // Reaped below with wait4, which also reports how it ended.
        #[allow(clippy::zombie_processes)]
        let mut child = timed.spawn().unwrap();
        let mut pipe = child.stdin.take().unwrap();
        let stdin = self.stdin.take().unwrap_or_default();
        let writer = std::thread::spawn(move || {
            let _ = pipe.write_all(&stdin);
        });
        let read_all = |mut r: Box<dyn Read + Send>| {
            std::thread::spawn(move || {
                let mut bytes = Vec::new();
                let _ = r.read_to_end(&mut bytes);
                bytes
            })
        };
        let out = read_all(Box::new(child.stdout.take().unwrap()));
        let err = read_all(Box::new(child.stderr.take().unwrap()));
        let pid = i32::try_from(child.id()).unwrap();
        let mut hung = false;
        // Reaped with wait4, which says how it ended and (on macOS) its peak memory.
        let reaped = loop {
            if let Some(reaped) = testing::reap(pid, false) {
                break reaped;
            }
            if started.elapsed() > limit {
                hung = true;
                // The child's own process group, then the child.
                testing::signal(-pid, testing::SIGKILL);
                break testing::reap(pid, true).unwrap();
            }
            std::thread::sleep(std::time::Duration::from_millis(5));
        };
        let elapsed = started.elapsed();
        let _ = writer.join();
        let run = Run::new(
            reaped.code,
            &out.join().unwrap(),
            &err.join().unwrap(),
            self.describe(),
        );
        assert!(!hung, "hung for {elapsed:?} (killed)\n{run}");
        run.never_blocks_by_exit_or_crashes();
        let max_rss_kb = peak_memory_kb(&reaped, rss_file.path())
            .unwrap_or_else(|| panic!("no peak memory from /usr/bin/time\n{run}"));
        Bounded { run, max_rss_kb }
    }

    pub fn success(self) -> Run {
        let run = self.run();
        assert_eq!(run.code, Some(0), "expected success\n{run}");
        run
    }

    pub fn failure(self) -> Run {
        let run = self.run();
        assert_eq!(run.code, Some(1), "expected exit 1\n{run}");
        run
    }
}

/// `inner` as a command that also reports its peak memory. On Linux through GNU time
/// into `out`: a child forked from this (large, threaded) test process would count the
/// test's own pages in its rusage (Linux keeps the high-water mark across `exec`).
#[cfg(not(target_os = "macos"))]
fn with_peak_memory(inner: Command, out: &Path) -> Command {
    let mut timed = Command::new("/usr/bin/time");
    timed
        .args(["-f", "%M", "-o"])
        .arg(out)
        .arg(inner.get_program())
        .args(inner.get_args());
    if let Some(dir) = inner.get_current_dir() {
        timed.current_dir(dir);
    }
    for (key, value) in inner.get_envs() {
        match value {
            Some(value) => timed.env(key, value),
            None => timed.env_remove(key),
        };
    }
    timed
}

/// On macOS the command itself: it has no GNU time, and `posix_spawn` starts the child
/// as a task of its own, so the rusage `wait4` returns is the child's alone.
#[cfg(target_os = "macos")]
fn with_peak_memory(inner: Command, _out: &Path) -> Command {
    inner
}

/// The peak resident memory in KiB, as [`with_peak_memory`] measured it.
#[cfg(not(target_os = "macos"))]
fn peak_memory_kb(_reaped: &testing::Reaped, out: &Path) -> Option<i64> {
    std::fs::read_to_string(out)
        .ok()
        .and_then(|t| t.lines().last().and_then(|l| l.trim().parse().ok()))
}

/// On macOS, what `wait4` reported.
#[cfg(target_os = "macos")]
fn peak_memory_kb(reaped: &testing::Reaped, _out: &Path) -> Option<i64> {
    Some(reaped.max_rss_kb)
}

/// A [`TestCommand::run_bounded`] result.
#[derive(Debug)]
pub struct Bounded {
    pub run: Run,
    /// Peak resident memory of the process, in KiB.
    pub max_rss_kb: i64,
}

/// How many times one command is started under Wine before its "did not start" is taken
/// for pagent's own failure (which `failures_speak.rs` proves never happens natively).
const WINE_ATTEMPTS: u32 = 3;

/// Wine's retries in this test run, all tests together.
static WINE_RETRIES: std::sync::atomic::AtomicUsize = std::sync::atomic::AtomicUsize::new(0);

/// `once`'s output, started again while `did_not_start` says Wine failed to start it, at
/// most [`WINE_ATTEMPTS`] times in all, each retry said by `say` (the command, the attempt).
fn with_wine_retries(
    command: &str,
    mut once: impl FnMut() -> std::process::Output,
    did_not_start: impl Fn(&std::process::Output) -> bool,
    mut say: impl FnMut(&str, u32),
) -> std::process::Output {
    let mut attempts = 0;
    loop {
        attempts += 1;
        let output = once();
        if attempts < WINE_ATTEMPTS && did_not_start(&output) {
            say(command, attempts);
            continue;
        }
        return output;
    }
}

/// Says a retry on the test process's own stderr, which the test harness does not capture
/// (a passing test's `eprintln!` would be swallowed), with the run's count so far: the last
/// such line of a run says how often it retried.
fn say_wine_retry(command: &str, attempt: u32) {
    let count = WINE_RETRIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed) + 1;
    let _ = writeln!(
        std::io::stderr(),
        "test: {command}: Wine did not start it (exit 1, no output), attempt {attempt} of \
         {WINE_ATTEMPTS}; again (Wine retry {count} of this run)"
    );
}

/// Whether `output` is Wine failing to start `pagent.exe`, not pagent: exit 1 with nothing
/// on stdout or stderr. pagent never ends so (every error it returns is reported on
/// stderr), and two CI runs under a slow machine's Wine saw it once each, in the tests
/// that start and kill dozens of processes at once (`crashes.rs`). Only for the Windows
/// binary under Wine (`PAGENT_TEST_WINDOWS`); natively it is a failure like any other.
pub fn wine_did_not_start(output: &std::process::Output) -> bool {
    pagent_test_support::project::testing_windows_bin()
        && output.status.code() == Some(1)
        && output.stdout.is_empty()
        && output.stderr.is_empty()
}

/// The retry is capped: a command Wine never starts is started three times in all, each
/// of the two retries said; one that runs is started once, and nothing is said.
#[test]
fn issue_31_the_wine_retry_is_capped_and_said() {
    use std::os::unix::process::ExitStatusExt;
    let silent = || std::process::Output {
        status: std::process::ExitStatus::from_raw(1 << 8),
        stdout: Vec::new(),
        stderr: Vec::new(),
    };
    let mut said = Vec::new();
    let mut starts = 0;
    let output = with_wine_retries(
        "a command Wine never starts",
        || {
            starts += 1;
            silent()
        },
        |output| output.status.code() == Some(1) && output.stderr.is_empty(),
        |command, attempt| said.push(format!("{command}: attempt {attempt}")),
    );
    assert_eq!((starts, output.status.code()), (3, Some(1)));
    assert_eq!(
        said,
        [
            "a command Wine never starts: attempt 1",
            "a command Wine never starts: attempt 2"
        ]
    );
    said.clear();
    starts = 0;
    with_wine_retries(
        "a command that runs",
        || {
            starts += 1;
            silent()
        },
        |_| false,
        |command, attempt| said.push(format!("{command}: attempt {attempt}")),
    );
    assert_eq!((starts, said.len()), (1, 0));
}

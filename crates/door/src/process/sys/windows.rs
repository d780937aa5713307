//! The process door on Windows: job objects where Unix has process groups, console
//! control events where it has signals, and pipes peeked where it has `poll`.
//!
//! - *A group*: a child of its own group is created suspended and in a new console
//!   process group (`CREATE_SUSPENDED | CREATE_NEW_PROCESS_GROUP`), put into a job object
//!   of its own, then resumed, so nothing it starts (a test runner's workers, a compiler)
//!   can begin outside the job. Killing the group is `TerminateJobObject`: every process
//!   in the job, however deep, as `kill(-pgid, SIGKILL)` is on Unix. A process that
//!   breaks away needs `CREATE_BREAKAWAY_FROM_JOB` and a job that allows it, which
//!   pagent's never do, so unlike `setsid` on Unix there is no way out.
//! - *Ctrl-C*: a new console process group starts with Ctrl-C ignored, so a terminal's
//!   Ctrl-C reaches pagent, not its agents (pagent decides how they stop, as on Unix);
//!   "SIGTERM" is `CTRL_BREAK_EVENT` to the child's group (Node, Python and Rust
//!   programs end on it), and "SIGKILL" the job's end. pagent's own Ctrl-C arrives
//!   through the C runtime's `signal(SIGINT)`, which Windows feeds from its console
//!   control handler (`runner/signals.rs`).
//! - *Output*: anonymous pipes have no `poll`; `PeekNamedPipe` says whether one holds
//!   bytes or has ended, and a short sleep separates looks until the caller's deadline.
//!   Each look is a system call on a handle pagent owns; nothing blocks.
//! - *The shell*: a command line is written for `sh`, so it runs in Git Bash, which
//!   Claude Code on Windows requires and runs its own hooks with: `bash.exe` on the
//!   cleaned search path, else beside Git for Windows' `git.exe` (`Git\cmd\git.exe` ->
//!   `Git\bin\bash.exe`), as Claude Code finds it.

use std::os::windows::io::{AsHandle, AsRawHandle, BorrowedHandle, FromRawHandle, OwnedHandle};
use std::os::windows::process::CommandExt;
use std::path::PathBuf;
use std::process::{Child, Command};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use windows_sys::Win32::Foundation as wf;
use windows_sys::Win32::System::Console as console;
use windows_sys::Win32::System::Diagnostics::ToolHelp as th;
use windows_sys::Win32::System::JobObjects as job;
use windows_sys::Win32::System::Pipes;
use windows_sys::Win32::System::Threading as threading;

use super::Ready;
use crate::process::SearchPath;

/// Stands for Unix's SIGKILL: the whole job is ended.
pub const SIGKILL: Signal = 9;
/// Stands for Unix's SIGTERM: `CTRL_BREAK_EVENT` to the child's console process group.
pub const SIGTERM: Signal = 15;
/// Stands for Unix's SIGINT to one process: Windows has no Ctrl-C for one process of a
/// shared console (it reaches the whole console, pagent too), so it does nothing and the
/// caller's grace period runs out (see [`signal_process`]).
pub const SIGINT: Signal = 2;

/// A "signal": [`SIGKILL`] or [`SIGTERM`].
pub type Signal = i32;
/// A pipe as [`poll_readable`] takes it.
pub type Raw<'a> = BorrowedHandle<'a>;

/// A folder every Windows has and no project can write into.
pub(in crate::process) const NEUTRAL_DIR: &str = "C:\\Windows";

/// The job of each running child of its own group, by process id.
static JOBS: Mutex<Vec<(u32, OwnedHandle)>> = Mutex::new(Vec::new());

/// Git Bash: `bash.exe` on `path`, else beside `git.exe` on it, else where Git for
/// Windows installs it.
pub(in crate::process) fn shell(path: &SearchPath) -> PathBuf {
    if let Some(bash) = path.find("bash") {
        return bash;
    }
    if let Some(git) = path.find("git")
        && let Some(root) = git.parent().and_then(|cmd| cmd.parent())
    {
        let bash = root.join("bin").join("bash.exe");
        if crate::files::is_executable_file(&bash) {
            return bash;
        }
    }
    PathBuf::from("C:\\Program Files\\Git\\bin\\bash.exe")
}

/// The pipe [`poll_readable`] waits on.
pub(in crate::process) fn raw(pipe: &std::io::PipeReader) -> Raw<'_> {
    pipe.as_handle()
}

/// A child's stdout or stderr as a pipe reader.
pub(in crate::process) fn pipe_reader(stream: impl Into<OwnedHandle>) -> std::io::PipeReader {
    std::io::PipeReader::from(stream.into())
}

/// Starts the child suspended, at the head of a new console process group; [`adopt`]
/// puts it in its job and resumes it.
pub(in crate::process) fn own_group(command: &mut Command) {
    command.creation_flags(threading::CREATE_SUSPENDED | threading::CREATE_NEW_PROCESS_GROUP);
}

/// Puts a child started by [`own_group`] into a job of its own, then resumes it. It is
/// always resumed: a child that could not be put in a job runs as a single process (and
/// is killed as one), never left suspended.
pub(in crate::process) fn adopt(child: &Child, own_group: bool) {
    if !own_group {
        return;
    }
    // SAFETY: CreateJobObjectW with no attributes and no name returns a handle or null.
    let handle = unsafe { job::CreateJobObjectW(std::ptr::null(), std::ptr::null()) };
    if !handle.is_null() {
        // SAFETY: a fresh handle nobody else owns.
        let owned = unsafe { OwnedHandle::from_raw_handle(handle) };
        // SAFETY: both handles are open; the child's is owned by `child`.
        let assigned =
            unsafe { job::AssignProcessToJobObject(owned.as_raw_handle(), child.as_raw_handle()) };
        if assigned != 0
            && let Ok(mut jobs) = JOBS.lock()
        {
            jobs.push((child.id(), owned));
        }
    }
    resume_threads(child.id());
}

/// Resumes every thread of process `pid` (a suspended child has one).
fn resume_threads(pid: u32) {
    // SAFETY: a snapshot handle, or INVALID_HANDLE_VALUE.
    let snapshot = unsafe { th::CreateToolhelp32Snapshot(th::TH32CS_SNAPTHREAD, 0) };
    if snapshot == wf::INVALID_HANDLE_VALUE {
        return;
    }
    // SAFETY: a fresh handle nobody else owns.
    let snapshot = unsafe { OwnedHandle::from_raw_handle(snapshot) };
    let mut entry = th::THREADENTRY32 {
        dwSize: std::mem::size_of::<th::THREADENTRY32>() as u32,
        ..Default::default()
    };
    // SAFETY: `entry` is a THREADENTRY32 with its size set, as the calls require.
    let mut more = unsafe { th::Thread32First(snapshot.as_raw_handle(), &raw mut entry) } != 0;
    while more {
        if entry.th32OwnerProcessID == pid {
            // SAFETY: OpenThread returns a handle we own, or null.
            let thread = unsafe {
                threading::OpenThread(threading::THREAD_SUSPEND_RESUME, 0, entry.th32ThreadID)
            };
            if !thread.is_null() {
                // SAFETY: a fresh thread handle, resumed once and closed.
                unsafe {
                    threading::ResumeThread(thread);
                    wf::CloseHandle(thread);
                }
            }
        }
        // SAFETY: as above.
        more = unsafe { th::Thread32Next(snapshot.as_raw_handle(), &raw mut entry) } != 0;
    }
}

/// [`SIGKILL`]: ends every process in the job of `pid` (a child started with
/// [`own_group`]) and lets the job go; [`SIGTERM`]: `CTRL_BREAK_EVENT` to its group.
pub fn signal_group(pid: u32, signal: Signal) {
    if signal == SIGTERM {
        // SAFETY: no memory-safety preconditions; a group that shares no console with
        // pagent does not get it (the caller kills it after its grace period).
        unsafe {
            console::GenerateConsoleCtrlEvent(console::CTRL_BREAK_EVENT, pid);
        }
        return;
    }
    let taken = JOBS.lock().ok().and_then(|mut jobs| {
        let at = jobs.iter().position(|(p, _)| *p == pid)?;
        Some(jobs.swap_remove(at).1)
    });
    match taken {
        // SAFETY: the job handle is open.
        Some(job_handle) => unsafe {
            job::TerminateJobObject(job_handle.as_raw_handle(), 1);
        },
        None => signal_process(pid, signal),
    }
}

/// [`SIGKILL`] to the one process `pid` (a child left in the caller's group); a Windows
/// process has no gentler signal than its group's console event, so [`SIGTERM`] and
/// [`SIGINT`] do nothing here and the caller's grace period runs out.
pub(in crate::process) fn signal_process(pid: u32, signal: Signal) {
    if signal != SIGKILL {
        return;
    }
    // SAFETY: OpenProcess returns a handle we own, or null.
    let handle = unsafe { threading::OpenProcess(threading::PROCESS_TERMINATE, 0, pid) };
    if !handle.is_null() {
        // SAFETY: a fresh process handle, terminated and closed.
        unsafe {
            threading::TerminateProcess(handle, 1);
            wf::CloseHandle(handle);
        }
    }
}

/// Waits up to `timeout` until one of `pipes` holds bytes or has ended; one answer per
/// pipe. Anonymous pipes have no `poll`: each is peeked, then a short sleep.
pub(in crate::process) fn poll_readable(pipes: &[Raw<'_>], timeout: Duration) -> Vec<Ready> {
    let deadline = Instant::now() + timeout;
    loop {
        let ready: Vec<Ready> = pipes.iter().map(|pipe| peek(*pipe)).collect();
        let now = Instant::now();
        if ready.contains(&Ready::Readable) || now >= deadline {
            return ready;
        }
        std::thread::sleep(
            deadline
                .saturating_duration_since(now)
                .min(Duration::from_millis(5)),
        );
    }
}

fn peek(pipe: Raw<'_>) -> Ready {
    let mut available = 0u32;
    // SAFETY: PeekNamedPipe with no buffer only reports the count into `available`.
    let ok = unsafe {
        Pipes::PeekNamedPipe(
            pipe.as_raw_handle(),
            std::ptr::null_mut(),
            0,
            std::ptr::null_mut(),
            &raw mut available,
            std::ptr::null_mut(),
        )
    };
    // A failed peek is a broken pipe (the writers are gone): a read returns the end.
    if ok == 0 || available > 0 {
        Ready::Readable
    } else {
        Ready::Idle
    }
}

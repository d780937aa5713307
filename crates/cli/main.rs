//! The `pagent` binary: capture the environment once, run, map the status to an exit code.
//!
//! Everything else lives in the library (`lib.rs`), where tests and fuzz targets can reach
//! it. The hooks' common case (no loop in this project) is decided before anything is
//! parsed. Nothing here exits with 2: for Claude Code a hook's exit code 2 means "block".

#![forbid(unsafe_code)]
#![warn(clippy::too_many_lines)]

use std::io::IsTerminal;
use std::panic::AssertUnwindSafe;
use std::process::ExitCode;

fn main() -> ExitCode {
    // Inside a contained agent's walls, pagent's binary relays the agent's network to the
    // proxy outside (`--sandbox --allow-host`); nothing else of pagent runs there.
    if let Some(code) = pagent::forward_in_sandbox() {
        return ExitCode::from(code);
    }
    if let Some(code) = pagent::hand_over_to_pagent_bin() {
        return ExitCode::from(code);
    }
    if let Some(status) = pagent::hook_fast_path() {
        return status.into();
    }
    let env = pagent::Env::capture();
    let (stdin, stdout, stderr) = (std::io::stdin(), std::io::stdout(), std::io::stderr());
    let mut io = pagent::Io {
        // A Windows console that cannot act on colours and redraws counts as none.
        stdout_is_terminal: stdout.is_terminal() && pagent::console_takes_controls(),
        stdin_is_terminal: stdin.is_terminal(),
        stdin: &mut stdin.lock(),
        stdout: &mut stdout.lock(),
        stderr: &mut stderr.lock(),
    };
    // A panic leaves nothing half-done that the report below would misread: the state is
    // only ever replaced atomically.
    let status = std::panic::catch_unwind(AssertUnwindSafe(|| {
        pagent::run(std::env::args_os().collect(), &env, &mut io)
    }))
    .unwrap_or_else(|_| {
        pagent::report_panic(&mut std::io::stderr());
        pagent::ExitStatus::Failure
    });
    let _ = io.stdout.flush();
    status.into()
}

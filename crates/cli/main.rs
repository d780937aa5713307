//! The `pagent` binary: capture the environment once, run, map the status to an exit code.
//!
//! Everything else lives in the library (`lib.rs`), where tests and fuzz targets can reach
//! it. The hooks' common case (no loop in this project) is decided before anything is
//! parsed. Nothing here exits with 2: for Claude Code a hook's exit code 2 means "block".

use std::process::ExitCode;

fn main() -> ExitCode {
    if let Some(status) = pagent::hook_fast_path() {
        return status.into();
    }
    let env = pagent::Env::capture();
    let status = std::panic::catch_unwind(|| pagent::run(std::env::args_os().collect(), &env))
        .unwrap_or_else(|_| {
            pagent::report_panic();
            pagent::ExitStatus::Failure
        });
    status.into()
}

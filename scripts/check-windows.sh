#!/usr/bin/env bash
# clippy -D warnings of the whole workspace as Windows (x86_64-pc-windows-gnu) compiles it,
# from x86-64 Linux (or natively, on the release workflow's Windows runner): the binary,
# the library's unit tests (the Windows door's and process door's own among them), and
# the engine and protocol crates with all their targets. So Unix-only code (a libc call,
# `std::os::unix`, a mode) cannot slip into what Windows builds. The integration and
# end-to-end suites are Unix programs (they drive the Windows build under Wine, see
# scripts/test.sh): built for Windows they hold no test (`#![cfg(unix)]`).
#
# Needs scripts/install-tools.sh --cross (the mingw-w64 C compiler for libgit2 and zlib,
# and the Rust target). Shares target/ with the rest; a second run checks only what
# changed. Says how long it took.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
. scripts/cross.sh
case $(uname -s) in
    MINGW* | MSYS* | CYGWIN*) ;; # natively, on the Windows runner
    *) cross_windows || exit 1 ;;
esac

start=$SECONDS
cargo clippy --workspace --all-targets --target x86_64-pc-windows-gnu --locked -- -D warnings
echo "check-windows.sh: clippy for Windows, the whole workspace: $((SECONDS - start)) s" >&2

#!/usr/bin/env bash
# clippy -D warnings for Windows (x86_64-pc-windows-gnu), from x86-64 Linux: the binary,
# the library's unit tests (the Windows door's and process door's own among them), and
# the engine and protocol crates with all their targets. So Unix-only code (a libc call,
# `std::os::unix`, a mode) cannot slip into what Windows builds. The integration and
# end-to-end suites are Unix programs (they drive Windows builds under Wine, see
# scripts/test.sh) and are not built for Windows.
#
# Needs scripts/install-tools.sh --cross (the mingw-w64 C compiler for libgit2 and zlib,
# and the Rust target). Shares target/ with the rest; a second run checks only what
# changed. Each step says how long it took.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
. scripts/cross.sh
case $(uname -s) in
    MINGW* | MSYS* | CYGWIN*) ;; # natively, on the Windows runner
    *) cross_windows || exit 1 ;;
esac

target=x86_64-pc-windows-gnu
timed() { # LABEL COMMAND...: run it, then say how long it took
    local label=$1 start=$SECONDS
    shift
    "$@"
    echo "check-windows.sh: $label: $((SECONDS - start)) s" >&2
}

timed "clippy, the binary" \
    cargo clippy --locked --target "$target" -p pagent --lib --bins -- -D warnings
timed "clippy, the library's unit tests" \
    cargo clippy --locked --target "$target" -p pagent --lib --profile test -- -D warnings
timed "clippy, engine and protocol (all targets)" \
    cargo clippy --locked --target "$target" -p pagent-engine -p pagent-protocol --all-targets -- -D warnings

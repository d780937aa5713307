#!/usr/bin/env bash
# Formatting and lints of this machine's build: `cargo fmt --check` and
# `cargo clippy -D warnings` of the whole workspace, tests included. .ci/run runs it, and
# so does each runner of the release workflow, where clippy sees the code as that
# platform compiles it (scripts/check-macos.sh does the same for macOS from Linux).
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
cargo fmt --all -- --check
case $(uname -s) in
    # Windows: what builds there (the integration and end-to-end suites are Unix programs).
    MINGW* | MSYS* | CYGWIN*) exec scripts/check-windows.sh ;;
esac
cargo clippy --workspace --all-targets --locked -- -D warnings

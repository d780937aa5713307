#!/usr/bin/env bash
# Formatting and lints of this machine's build: `cargo fmt --check` and
# `cargo clippy -D warnings` of the whole workspace, tests included. .ci/run runs it, and
# so does each runner of the release workflow, where clippy sees the code as that
# platform compiles it (scripts/check-macos.sh does the same for macOS from Linux).
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

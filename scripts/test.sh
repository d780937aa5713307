#!/usr/bin/env bash
# The project's test command (the README's, and what .ci/run runs): every crate's unit
# tests and the binary's integration tests. Extra arguments go to `cargo test`.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
cargo test --workspace --locked "$@"

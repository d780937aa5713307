#!/usr/bin/env bash
# The project's test command (the README's, and what .ci/run runs):
#   1. every crate's unit tests and the binary's integration tests;
#   2. the end-to-end suite: the real Claude Code CLI (pinned, installed into target/ by
#      scripts/install-claude-code.sh) against the project's mock Messages API.
# A CLI that cannot be installed is a failure, never a skip. Extra arguments go to both
# `cargo test` runs (e.g. a test name filter).
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."

cargo test --workspace --locked "$@"

claude="$(scripts/install-claude-code.sh | tail -n 1)"
PAGENT_CLAUDE="$claude" cargo test --locked --test e2e "$@" -- --ignored

#!/usr/bin/env bash
# The project's test command (the README's, and what .ci/run runs):
#   1. every crate's unit tests and the binary's integration tests;
#   2. the end-to-end suite against each Claude Code version of the matrix in
#      scripts/clients.sh (the oldest supported and the newest proven), each installed into
#      target/clients/ by scripts/install-client.sh, talking to the project's mock API;
#   3. the same suite's Codex and OpenCode scenarios, with those CLIs installed the same way.
# A CLI that cannot be installed is a failure, never a skip. Extra arguments go to every
# `cargo test` run (e.g. a test name filter).
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
. scripts/clients.sh

cargo test --workspace --locked "$@"

codex="$(scripts/install-client.sh codex | tail -n 1)"
opencode="$(scripts/install-client.sh opencode | tail -n 1)"
for version in "$CLAUDE_CODE_OLDEST" "$CLAUDE_CODE_NEWEST"; do
    claude="$(scripts/install-client.sh claude "$version" | tail -n 1)"
    echo "== end-to-end suite, Claude Code $version ==" >&2
    PAGENT_CLAUDE="$claude" PAGENT_CODEX="$codex" PAGENT_OPENCODE="$opencode" \
        cargo test --locked --test e2e "$@" -- --ignored
done

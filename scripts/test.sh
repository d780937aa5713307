#!/usr/bin/env bash
# The project's test command (the README's, and what .ci/run runs):
#   1. every crate's unit tests and the binary's integration tests, among them the
#      dashboard's in a real headless Chromium (Debian: apt-get install chromium
#      chromium-driver; without them those tests fail and say so, never skip);
#   2. the end-to-end suite against each Claude Code version of the matrix in
#      scripts/clients.sh (the oldest supported and the newest proven), each installed into
#      target/clients/ by scripts/install-client.sh, talking to the project's mock API;
#      The npm scenario (tests/e2e/npm.rs: scripts/release.sh packs the npm packages, npm
#      installs them offline into a scratch prefix, `pagent install` sets up Claude Code)
#      runs with the newest version only: about 15 s.
#   3. the suite's `pagent loop --agent codex|opencode` scenarios, once, with those CLIs
#      installed the same way (they do not involve Claude Code).
# A CLI that cannot be installed is a failure, never a skip. Extra arguments go to every
# `cargo test` run (e.g. a test name filter). Each part says how long it took.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
. scripts/clients.sh

timed() { # LABEL COMMAND...: run it, then say how long it took
    local label=$1 start=$SECONDS
    shift
    "$@"
    echo "test.sh: $label: $((SECONDS - start)) s" >&2
}

timed "unit and integration tests" cargo test --workspace --locked "$@"

for version in "$CLAUDE_CODE_OLDEST" "$CLAUDE_CODE_NEWEST"; do
    claude="$(scripts/install-client.sh claude "$version" | tail -n 1)"
    # The interactive suite reads the terminal UI's screen, which each release redraws
    # its own way (2.1.330 folds hook output and tool calls): it is proven on the oldest
    # version, and the newest runs every `claude -p` scenario. The npm route is proven
    # once, with the newest.
    skip=(--skip agents::)
    if [ "$version" = "$CLAUDE_CODE_OLDEST" ]; then
        skip+=(--skip npm::)
    else
        skip+=(--skip interactive::)
    fi
    PAGENT_CLAUDE="$claude" timed "end-to-end, Claude Code $version" \
        cargo test --locked --test e2e "$@" -- --ignored "${skip[@]}"
done

codex="$(scripts/install-client.sh codex | tail -n 1)"
opencode="$(scripts/install-client.sh opencode | tail -n 1)"
PAGENT_CODEX="$codex" PAGENT_OPENCODE="$opencode" \
    timed "end-to-end, Codex $CODEX_VERSION and OpenCode $OPENCODE_VERSION" \
    cargo test --locked --test e2e "$@" -- --ignored agents::

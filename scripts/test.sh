#!/usr/bin/env bash
# The project's test command (the README's, and what .ci/run runs):
#   1. every crate's unit tests and the binary's integration tests, among them the
#      dashboard's in a real headless Chromium (Debian: apt-get install chromium
#      chromium-driver; without them those tests fail and say so, never skip);
#   2. the end-to-end suite against each Claude Code version of the matrix in
#      scripts/clients.sh (the oldest supported and the newest proven), each installed into
#      target/clients/ by scripts/install-client.sh, talking to the project's mock API;
#      The interactive terminal-UI suite (tests/e2e/interactive/, under tmux) runs on both,
#      about 2 minutes each. The npm scenario (tests/e2e/npm.rs: scripts/release.sh packs
#      the npm packages, npm installs them offline into a scratch prefix, `pagent install`
#      sets up Claude Code) runs with the newest version only: about 15 s.
#   3. the suite's `pagent loop --agent codex|opencode` scenarios, once, with those CLIs
#      installed the same way (they do not involve Claude Code);
#   4. on x86-64 Linux, Linux arm64 under qemu: scripts/release.sh cross-builds the
#      pagent-linux-arm64 package, and the unit and integration tests, built for arm64,
#      run under qemu-aarch64 with that package's binary as the binary under test
#      (PAGENT_TEST_BIN): --version, the hooks, the hostile repositories, everything.
#      It needs the tools of scripts/install-tools.sh --cross (.ci/run installs them);
#      PAGENT_ARM64=0 leaves it out (the release workflow proves arm64 on an arm64
#      runner instead).
# A CLI or a tool that cannot be installed is a failure, never a skip. Extra arguments go
# to every `cargo test` run (e.g. a test name filter). Each part says how long it took.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
. scripts/clients.sh
. scripts/cross.sh

timed() { # LABEL COMMAND...: run it, then say how long it took
    local label=$1 start=$SECONDS
    shift
    "$@"
    echo "test.sh: $label: $((SECONDS - start)) s" >&2
}

timed "unit and integration tests" cargo test --workspace --locked "$@"

for version in "$CLAUDE_CODE_OLDEST" "$CLAUDE_CODE_NEWEST"; do
    claude="$(scripts/install-client.sh claude "$version" | tail -n 1)"
    # The interactive suite (tmux) runs on both: pagent's own voice has to reach the
    # screen of every supported release. The npm route is proven once, with the newest.
    skip=(--skip agents::)
    if [ "$version" = "$CLAUDE_CODE_OLDEST" ]; then
        skip+=(--skip npm::)
    fi
    PAGENT_CLAUDE="$claude" timed "end-to-end, Claude Code $version" \
        cargo test --locked --test e2e "$@" -- --ignored "${skip[@]}"
done

codex="$(scripts/install-client.sh codex | tail -n 1)"
opencode="$(scripts/install-client.sh opencode | tail -n 1)"
PAGENT_CODEX="$codex" PAGENT_OPENCODE="$opencode" \
    timed "end-to-end, Codex $CODEX_VERSION and OpenCode $OPENCODE_VERSION" \
    cargo test --locked --test e2e "$@" -- --ignored agents::

host="$(rustc -vV | sed -n 's/^host: //p')"
if [ "$host" = x86_64-unknown-linux-gnu ] && [ "${PAGENT_ARM64:-1}" != 0 ]; then
    cross_linux_arm64 || {
        echo "test.sh: the Linux arm64 part needs these tools (or PAGENT_ARM64=0 to leave it out)" >&2
        exit 1
    }
    timed "Linux arm64: scripts/release.sh --platform linux-arm64 (cross-built, LTO)" \
        scripts/release.sh --platform linux-arm64 target/npm-arm64
    arm64_bin="$PWD/target/npm-arm64/packages/pagent-linux-arm64/bin/pagent"
    if ! "$arm64_bin" --version >/dev/null 2>&1; then
        echo "test.sh: $arm64_bin does not run here: register qemu-aarch64 with binfmt_misc" \
            "(scripts/install-tools.sh --cross does, as root)" >&2
        exit 1
    fi
    # Under qemu-user, posix_spawn cannot report that a program is missing (qemu runs
    # its vfork as a fork): the process door checks the program before it starts it,
    # so the tests of a missing program hold here too. The emulator's own memory, up to
    # 45 MiB measured, counts in a command's peak: PAGENT_TEST_EMULATOR_KB allows for it.
    PAGENT_TEST_BIN="$arm64_bin" PAGENT_TEST_FOREIGN_BIN="$PWD/target/debug/pagent" \
        PAGENT_TEST_EMULATOR_KB=65536 \
        timed "Linux arm64 under qemu: unit and integration tests" \
        cargo test --workspace --locked --target aarch64-unknown-linux-gnu "$@"
fi

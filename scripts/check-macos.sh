#!/usr/bin/env bash
# `cargo clippy -D warnings` of the whole workspace, tests included (clippy checks the
# code as `cargo check` does: a separate check compiled the workspace twice),
# for both macOS targets (aarch64-apple-darwin, x86_64-apple-darwin), from x86-64 Linux:
# so Linux-only code (a libc item macOS lacks, a field of another name) cannot slip in
# unseen. zig compiles the C dependencies (libgit2, zlib) through cargo-zigbuild; nothing
# is linked, which would need Apple's SDK (see scripts/cross.sh), so the binaries
# themselves are built and tested on the release workflow's macOS runners.
#
# Needs scripts/install-tools.sh --cross. Both targets share target/ with the rest; a
# second run checks only what changed. Each step says how long it took.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
. scripts/cross.sh
cross_zig

timed() { # LABEL COMMAND...: run it, then say how long it took
    local label=$1 start=$SECONDS
    shift
    "$@"
    echo "check-macos.sh: $label: $((SECONDS - start)) s" >&2
}

for target in aarch64-apple-darwin x86_64-apple-darwin; do
    timed "clippy, $target" \
        cargo-zigbuild clippy --locked --workspace --all-targets --target "$target" -- -D warnings
done

#!/usr/bin/env bash
# `cargo clippy -D warnings` of the whole workspace, tests included (clippy checks the
# code as `cargo check` does: a separate check compiled the workspace twice),
# as macOS compiles it, from x86-64 Linux: so Linux-only code (a libc item macOS lacks, a
# field of another name) cannot slip in unseen. One macOS target proves it for both
# (aarch64-apple-darwin; `scripts/check-macos.sh x86_64-apple-darwin` checks the other):
# no code of the workspace differs by CPU (no `cfg(target_arch)` item; the `cfg!` of
# install/platform.rs compiles every branch on every target), and the libc items that
# differ between the two macOS CPUs (`boolean_t`, `malloc_zone_t`, `max_align_t`, the values
# of `PTHREAD_STACK_MIN` and `SHMLBA`), pagent does not use. Checked on 2026-11-27 with
# `grep -rn 'target_arch\|boolean_t\|malloc_zone\|max_align_t' --include=*.rs .`; the
# second target took 82 s of CI's 185 for nothing the first had not seen.
# zig compiles the C dependencies (libgit2, zlib) through cargo-zigbuild; nothing is
# linked, which would need Apple's SDK (see scripts/cross.sh), so the binaries themselves
# are built and tested on the release workflow's macOS runners.
#
# Needs scripts/install-tools.sh --cross. Each target shares target/ with the rest; a
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

targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=(aarch64-apple-darwin)
for target in "${targets[@]}"; do
    timed "clippy, $target" \
        cargo-zigbuild clippy --locked --workspace --all-targets --target "$target" -- -D warnings
done

# How an x86-64 Linux machine builds pagent for the other platforms; sourced by
# scripts/release.sh, scripts/test.sh and scripts/check-macos.sh, so that the one
# release build, the tests under qemu and the macOS checks use the same settings.
#
# - linux-arm64 (aarch64-unknown-linux-gnu): Debian's cross C toolchain
#   (gcc-aarch64-linux-gnu, libc6-dev-arm64-cross) links it and compiles the C
#   dependencies (libgit2, zlib); qemu-aarch64 (qemu-user, registered with binfmt_misc by
#   qemu-user-binfmt) runs what it builds. QEMU_LD_PREFIX lets qemu find the arm64
#   loader and libc of a dynamically linked test binary; the release binary is static.
# - macOS (aarch64-apple-darwin, x86_64-apple-darwin): zig, from PyPI, compiles the C
#   dependencies through cargo-zigbuild. Linking needs Apple's SDK (libgit2 links the
#   Security and CoreFoundation frameworks), which no registry carries: here macOS is
#   checked (`cargo check`, clippy), and built on the release workflow's macOS runners.
# - Windows (x86_64-pc-windows-gnu): Debian's gcc-mingw-w64-x86-64 links it and compiles
#   the C dependencies; Debian's Wine (wine64) runs what it builds, in a prefix of its own
#   under target/wine (cross_windows makes it, once: about 10 s). Wine 8 lacks
#   bcryptprimitives.dll, whose ProcessPrng every Rust program since 1.78 calls at start;
#   scripts/wine/bcryptprimitives.c is a stand-in over RtlGenRandom, built into that prefix
#   only. target/wine/pagent runs the Windows build under Wine with the arguments, stdin
#   and exit code untouched: the binary under test of the integration tests' Windows part.
#
# scripts/install-tools.sh --cross installs all of it; the PyPI tools go to
# target/tools/venv (pinned there).

cross_tools="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)/target/tools/venv/bin"

# Exports what cargo needs to build aarch64-unknown-linux-gnu here, or says what is
# missing and returns 1.
cross_linux_arm64() {
    local target=aarch64-unknown-linux-gnu missing=()
    command -v aarch64-linux-gnu-gcc >/dev/null || missing+=("Debian's gcc-aarch64-linux-gnu and libc6-dev-arm64-cross")
    rustup target list --installed 2>/dev/null | grep -qx "$target" ||
        missing+=("the Rust target (rustup target add $target)")
    if [ ${#missing[@]} -gt 0 ]; then
        printf 'cross: building for %s needs %s; scripts/install-tools.sh --cross installs them\n' \
            "$target" "$(IFS=,; echo "${missing[*]}")" >&2
        return 1
    fi
    export CARGO_TARGET_AARCH64_UNKNOWN_LINUX_GNU_LINKER=aarch64-linux-gnu-gcc
    export CC_aarch64_unknown_linux_gnu=aarch64-linux-gnu-gcc
    export AR_aarch64_unknown_linux_gnu=aarch64-linux-gnu-ar
    export QEMU_LD_PREFIX=/usr/aarch64-linux-gnu
}

# Puts zig and cargo-zigbuild (and actionlint) on PATH, or says what is missing and
# returns 1.
cross_zig() {
    if [ ! -x "$cross_tools/cargo-zigbuild" ]; then
        printf 'cross: no cargo-zigbuild in %s; scripts/install-tools.sh --cross installs it\n' \
            "$cross_tools" >&2
        return 1
    fi
    export PATH="$cross_tools:$PATH"
}

# Exports what cargo needs to build x86_64-pc-windows-gnu here, or says what is missing
# and returns 1. With --wine, also what runs it: a warmed-up prefix in target/wine/prefix,
# a persistent wineserver (cross_windows_done stops it) and the target/wine/pagent wrapper.
cross_windows() {
    local target=x86_64-pc-windows-gnu missing=() repo wine_dir
    command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=("Debian's gcc-mingw-w64-x86-64")
    [ "${1:-}" != --wine ] || command -v wine >/dev/null || missing+=("Debian's wine and wine64")
    rustup target list --installed 2>/dev/null | grep -qx "$target" ||
        missing+=("the Rust target (rustup target add $target)")
    if [ ${#missing[@]} -gt 0 ]; then
        printf 'cross: building for %s needs %s; scripts/install-tools.sh --cross installs them\n' \
            "$target" "$(IFS=,; echo "${missing[*]}")" >&2
        return 1
    fi
    repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"
    wine_dir="$repo/target/wine"
    export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
    export CC_x86_64_pc_windows_gnu=x86_64-w64-mingw32-gcc
    export AR_x86_64_pc_windows_gnu=x86_64-w64-mingw32-ar
    [ "${1:-}" = --wine ] || return 0
    export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
    export WINEPREFIX="$wine_dir/prefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
    mkdir -p -- "$wine_dir"
    if [ ! -f "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ]; then
        wineboot --init </dev/null >/dev/null 2>&1 || true
        x86_64-w64-mingw32-gcc -O2 -shared -o "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" \
            "$repo/scripts/wine/bcryptprimitives.c" "$repo/scripts/wine/bcryptprimitives.def" -ladvapi32
    fi
    # One wineserver (and its services) for the whole run, started with no pipe of a test
    # open: a service started by a test's first `wine` would hold that test's output pipe.
    wineserver -p </dev/null >/dev/null 2>&1 || true
    wine cmd /c exit </dev/null >/dev/null 2>&1 || true
    printf '#!/bin/sh\nexec wine %s "$@"\n' "$repo/target/$target/debug/pagent.exe" >"$wine_dir/pagent"
    chmod 755 "$wine_dir/pagent"
}

# Stops the wineserver cross_windows started (and every Wine process of its prefix).
cross_windows_done() {
    wineserver -k </dev/null >/dev/null 2>&1 || true
}

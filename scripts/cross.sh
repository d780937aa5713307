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

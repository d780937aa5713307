#!/usr/bin/env bash
# Builds the packages of a release, for each platform built here:
#   - the npm packages: `pagent` (the Node launcher, which runs the binary from the
#     platform package, and the plugin's files, so the package is also a complete plugin
#     folder; no install script) and one `pagent-<os>-<cpu>` package per platform,
#     holding the binary with `os`/`cpu` set; `npm pack` for each (OUT_DIR/dist);
#   - the archive of the GitHub release, `pagent-VERSION-TARGET.tar.gz`: a folder of that
#     name holding the binary, README.md and LICENSE (OUT_DIR/archives), which the
#     Homebrew formula and cargo-binstall download (scripts/publish.sh writes the formula
#     and the sums from the archives of every platform).
# The version and the repository come from Cargo.toml.
#
#   scripts/release.sh [--platform NAME]... [OUT_DIR]   (default OUT_DIR: target/npm)
#   scripts/release.sh --matrix                         the platforms and their runners
#
# NAME is a platform of the matrix below; by default, this machine's. A platform is built
# on its own kind of machine (the release workflow, .github/workflows/release.yml, runs
# this on each runner of the matrix), except linux-arm64, which an x86-64 Linux machine
# also cross-builds (Debian's gcc-aarch64-linux-gnu and libc6-dev-arm64-cross, and
# `rustup target add aarch64-unknown-linux-gnu`; scripts/install-tools.sh --cross), and
# win32-x64, which it cross-builds with mingw-w64 and checks under Wine. Linux
# builds are static where the C toolchain has a static libc (x86-64: static-pie), so they
# need no particular libc at run time. Nothing is faked: each binary must say, when run
# (under qemu-aarch64 when cross-built), the version of Cargo.toml and its target. The
# main package names every platform of the matrix as an optional dependency, so npm
# takes the one that matches.
#
# Environment:
#   PAGENT_RELEASE_BIN  use this binary for this machine's package instead of building
#                       one (the tests pass the build they already have; the LTO release
#                       build takes minutes)
#   PAGENT_STATIC=0     build the ordinary (dynamically linked) binary
#
# Publishing is scripts/publish.sh: the platform packages first, then `pagent`.
set -euo pipefail
repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd -- "$repo"

# shellcheck source=cross.sh
. scripts/cross.sh

say() { printf 'release: %s\n' "$*" >&2; }
fail() {
    printf 'release: error: %s\n' "$*" >&2
    exit 1
}

# The matrix: npm platform, Rust target, npm os, npm cpu, binary name, and the runner of
# the release workflow that builds and tests it. Windows is the GNU target, built with
# mingw-w64: the same build here (cross-built, tested under Wine by scripts/test.sh) and
# on the workflow's Windows runner (native, tested there with the real Claude Code CLI).
matrix=(
    "linux-x64    x86_64-unknown-linux-gnu   linux  x64   pagent     ubuntu-24.04"
    "linux-arm64  aarch64-unknown-linux-gnu  linux  arm64 pagent     ubuntu-24.04-arm"
    "darwin-arm64 aarch64-apple-darwin       darwin arm64 pagent     macos-15"
    "darwin-x64   x86_64-apple-darwin        darwin x64   pagent     macos-15-intel"
    "win32-x64    x86_64-pc-windows-gnu      win32  x64   pagent.exe windows-2025"
)

platforms=()
out=target/npm
while [ $# -gt 0 ]; do
    case $1 in
        --matrix)
            for row in "${matrix[@]}"; do
                read -r platform target _ _ _ runner <<<"$row"
                printf '%s %s %s\n' "$platform" "$target" "$runner"
            done
            exit 0
            ;;
        --platform)
            [ $# -ge 2 ] || fail "--platform needs a name"
            platforms+=("$2")
            shift
            ;;
        -*) fail "unknown option $1 (see the top of $0)" ;;
        *) out=$1 ;;
    esac
    shift
done

# A value of Cargo.toml's [workspace.package] (version, repository).
workspace_value() { sed -n '/^\[workspace.package\]/,/^\[/s/^'"$1"' = "\(.*\)"/\1/p' Cargo.toml; }
version="$(workspace_value version)"
[ -n "$version" ] || fail "no version in Cargo.toml's [workspace.package]"
repository="$(workspace_value repository)"
[ -n "$repository" ] || fail "no repository in Cargo.toml's [workspace.package]"
host="$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')"
for row in "${matrix[@]}"; do
    read -r platform target _ <<<"$row"
    # A Windows runner's host is MSVC's; it builds the GNU target of the matrix.
    [ ${#platforms[@]} -gt 0 ] || [ "$target" != "$host" ] || platforms=("$platform")
    [ ${#platforms[@]} -gt 0 ] || [ "$platform" != win32-x64 ] || [[ $host != x86_64-pc-windows-* ]] ||
        platforms=("$platform")
done
[ ${#platforms[@]} -gt 0 ] || fail "this machine ($host) builds no platform of the matrix"
mkdir -p -- "$out"
out="$(cd -- "$out" && pwd -P)"

# Whether the C toolchain CC has a static libc (then the build is static).
static_libc() {
    [ "${PAGENT_STATIC:-1}" != 0 ] && [ -f "$("$1" -print-file-name=libc.a 2>/dev/null || echo /nonexistent)" ]
}

# Builds the binary for TARGET (named EXE) and prints its path.
build() {
    local target=$1 exe=$2 cc=cc
    if [ "$target" = "$host" ] && [ -n "${PAGENT_RELEASE_BIN:-}" ]; then
        [ -f "$PAGENT_RELEASE_BIN" ] && [ -x "$PAGENT_RELEASE_BIN" ] ||
            fail "PAGENT_RELEASE_BIN=$PAGENT_RELEASE_BIN is not an executable file"
        say "using the prebuilt binary $PAGENT_RELEASE_BIN"
        printf '%s\n' "$PAGENT_RELEASE_BIN"
        return
    fi
    if [ "$target" = x86_64-pc-windows-gnu ]; then
        # Cross-built from Linux, or natively on Windows, where the host target is MSVC's
        # and the runner's mingw-w64 builds the GNU one. Static: no MinGW DLL to ship.
        [ "$host" = x86_64-unknown-linux-gnu ] || [[ $host == *-windows-* ]] ||
            fail "$target is built on Windows or x86-64 Linux, not on $host"
        [[ $host == *-windows-* ]] || cross_windows || fail "cannot cross-build $target here"
        say "building the binary for $target (LTO: minutes)"
        RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
            cargo build --release --locked --target "$target" 1>&2 || fail "cargo build failed (see above)"
        printf '%s\n' "$repo/target/$target/release/$exe"
        return
    fi
    if [ "$target" != "$host" ]; then
        [ "$target" = aarch64-unknown-linux-gnu ] && [ "$host" = x86_64-unknown-linux-gnu ] ||
            fail "$target is built on its own runner (see --matrix), not on $host"
        cross_linux_arm64 || fail "cannot cross-build $target here"
        cc=aarch64-linux-gnu-gcc
    fi
    if [[ $target == *-linux-gnu ]] && static_libc "$cc"; then
        say "building the static binary for $target (LTO: minutes)"
        if RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
            cargo build --release --locked --target "$target" 1>&2; then
            printf '%s\n' "$repo/target/$target/release/pagent"
            return
        fi
        say "the static build failed; building the ordinary one"
    fi
    say "building the binary for $target (LTO: minutes)"
    cargo build --release --locked --target "$target" 1>&2 || fail "cargo build failed (see above)"
    printf '%s\n' "$repo/target/$target/release/pagent"
}

# Runs BIN --version, under qemu when it is another CPU's Linux binary, under Wine when it
# is Windows' and this is not Windows.
version_of() {
    local bin=$1 target=$2
    if [ "$target" = "$host" ] || { [[ $target == *-windows-* ]] && [[ $host == *-windows-* ]]; }; then
        "$bin" --version </dev/null
    elif [[ $target == *-windows-* ]]; then
        cross_windows --wine || fail "cannot run $bin to check it: install Wine (scripts/install-tools.sh --cross)"
        wine "$bin" --version </dev/null | tr -d '\r'
        cross_windows_done
    elif command -v "qemu-${target%%-*}" >/dev/null; then
        "qemu-${target%%-*}" "$bin" --version </dev/null
    else
        fail "cannot run $bin to check it: install qemu-user (qemu-${target%%-*})"
    fi
}

rm -rf -- "$out/packages" "$out/dist" "$out/archives" "$out/archive-tree"
mkdir -p -- "$out/packages" "$out/dist" "$out/archives" "$out/archive-tree"

# The archive of BIN (named EXE) for TARGET: pagent-VERSION-TARGET.tar.gz, one folder.
archive() {
    local bin=$1 target=$2 exe=$3 name="pagent-$version-$target"
    mkdir -p -- "$out/archive-tree/$name"
    cp -- "$bin" "$out/archive-tree/$name/$exe"
    chmod 755 "$out/archive-tree/$name/$exe"
    cp -- README.md LICENSE "$out/archive-tree/$name/"
    tar -C "$out/archive-tree" -czf "$out/archives/$name.tar.gz" "$name" ||
        fail "cannot pack $out/archives/$name.tar.gz"
}

# --- the platform packages ------------------------------------------------------------
built=()
for wanted in "${platforms[@]}"; do
    found=
    for row in "${matrix[@]}"; do
        read -r platform target os cpu exe runner <<<"$row"
        [ "$platform" = "$wanted" ] && found=1 && break
    done
    [ -n "$found" ] || fail "no platform $wanted in the matrix (see --matrix)"
    bin="$(build "$target" "$exe")"
    actual="$(version_of "$bin" "$target")" || fail "$bin --version failed"
    [ "$actual" = "pagent $version ($target)" ] ||
        fail "$bin says '$actual', not 'pagent $version ($target)': rebuild it"
    dir="$out/packages/pagent-$platform"
    mkdir -p -- "$dir/bin"
    cp -- "$bin" "$dir/bin/$exe"
    chmod 755 "$dir/bin/$exe"
    archive "$bin" "$target" "$exe"
    cat >"$dir/package.json" <<EOF
{
  "name": "pagent-$platform",
  "version": "$version",
  "description": "The pagent binary for $os $cpu (installed by the pagent package; not used directly).",
  "license": "MIT",
  "repository": "$repository",
  "os": ["$os"],
  "cpu": ["$cpu"],
  "files": ["bin/$exe"],
  "preferUnplugged": true
}
EOF
    printf '# pagent-%s\n\nThe prebuilt `pagent` binary for %s %s. Install `pagent` instead: it depends on this\npackage on this platform.\n' \
        "$platform" "$os" "$cpu" >"$dir/README.md"
    built+=("pagent-$platform")
done

# --- the main package: launcher, plugin files ----------------------------------------
main="$out/packages/pagent"
mkdir -p -- "$main/scripts"
cp -R -- npm/pagent/bin npm/pagent/platforms.js npm/pagent/README.md "$main/"
cp -R -- .claude-plugin hooks commands agents "$main/"
cp -- scripts/pagent "$main/scripts/"
cp -- LICENSE "$main/"
names=()
for row in "${matrix[@]}"; do
    read -r platform _ <<<"$row"
    names+=("pagent-$platform")
done
node -e '
const fs = require("fs");
const [src, dest, version, repository, ...names] = process.argv.slice(1);
const pkg = JSON.parse(fs.readFileSync(src, "utf8"));
pkg.version = version;
pkg.homepage = repository;
pkg.repository = repository;
pkg.optionalDependencies = Object.fromEntries(names.map((name) => [name, version]));
pkg.files = ["bin", "platforms.js", "README.md", "LICENSE", ".claude-plugin", "hooks",
  "commands", "agents", "scripts/pagent"];
fs.writeFileSync(dest, JSON.stringify(pkg, null, 2) + "\n");
' npm/pagent/package.json "$main/package.json" "$version" "$repository" "${names[@]}"
grep -q "\"version\": \"$version\"" "$main/.claude-plugin/plugin.json" ||
    say "warning: .claude-plugin/plugin.json does not say version $version"

# --- npm pack ------------------------------------------------------------------------
for pkg in "${built[@]}" pagent; do
    (cd -- "$out/packages/$pkg" && npm pack --silent --pack-destination "$out/dist" >/dev/null) ||
        fail "npm pack failed in $out/packages/$pkg"
done
rm -rf -- "$out/archive-tree"
say "version $version: packed $(cd -- "$out/dist" && echo *) and $(cd -- "$out/archives" && echo *)"
say "in $out/dist and $out/archives"
for row in "${matrix[@]}"; do
    read -r platform target _ _ _ runner <<<"$row"
    [[ " ${built[*]} " != *" pagent-$platform "* ]] || continue
    also=
    case $target in aarch64-unknown-linux-gnu | x86_64-pc-windows-gnu)
        [ "$host" != x86_64-unknown-linux-gnu ] || also=" (or here: --platform $platform)" ;;
    esac
    say "not built here: pagent-$platform ($target), built on the workflow's $runner runner$also"
done

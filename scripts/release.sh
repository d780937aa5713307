#!/usr/bin/env bash
# Builds the npm packages of a release: `pagent` (the launcher, the postinstall that puts
# the binary in its place, and the plugin's files, so the package is also a complete
# plugin folder) and one `pagent-<os>-<cpu>` package per platform, holding the binary
# with `os`/`cpu` set. Every version comes from Cargo.toml. Then `npm pack` for each.
#
#   scripts/release.sh [OUT_DIR]        default: target/npm (tarballs in OUT_DIR/dist)
#
# Only what this machine can build is built: the host's target (on Linux with glibc, the
# static-pie build of scripts/install.sh, which needs no particular libc at run time).
# The other platforms are listed with the runner and command a release machine needs
# (the CI matrix below), never faked: their packages are not packed here, and the main
# package names them all as optional dependencies, so npm takes the one that matches.
#
# Environment:
#   PAGENT_RELEASE_BIN  use this binary for the host's package instead of building one
#                       (the tests pass the build they already have; the LTO release
#                       build takes minutes)
#   PAGENT_STATIC=0     build the ordinary (dynamically linked) binary
#
# Publishing is not done here: `npm publish` each tarball in OUT_DIR/dist, the platform
# packages first.
set -euo pipefail
repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"
cd -- "$repo"
out="${1:-target/npm}"
mkdir -p -- "$out"
out="$(cd -- "$out" && pwd -P)"

say() { printf 'release: %s\n' "$*" >&2; }
fail() {
    printf 'release: error: %s\n' "$*" >&2
    exit 1
}

version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' Cargo.toml)"
[ -n "$version" ] || fail "no version in Cargo.toml's [workspace.package]"

# The matrix: npm platform, Rust target, npm os, npm cpu, binary name, the runner a
# release needs, and what builds there.
matrix=(
    "linux-x64    x86_64-unknown-linux-gnu   linux  x64   pagent     ubuntu-24.04 (x86-64): RUSTFLAGS='-C target-feature=+crt-static' cargo build --release --locked --target x86_64-unknown-linux-gnu"
    "linux-arm64  aarch64-unknown-linux-gnu  linux  arm64 pagent     ubuntu-24.04-arm (arm64): RUSTFLAGS='-C target-feature=+crt-static' cargo build --release --locked --target aarch64-unknown-linux-gnu"
    "darwin-arm64 aarch64-apple-darwin       darwin arm64 pagent     macos-15 (Apple silicon): cargo build --release --locked --target aarch64-apple-darwin"
    "darwin-x64   x86_64-apple-darwin        darwin x64   pagent     macos-13 (Intel): cargo build --release --locked --target x86_64-apple-darwin"
    "win32-x64    x86_64-pc-windows-msvc     win32  x64   pagent.exe windows-2022: cargo build --release --locked --target x86_64-pc-windows-msvc, once pagent is ported (today it uses Unix process groups, signals and file modes)"
)

host="$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')"

# Builds the host's binary (static where possible) and prints its path.
build_host() {
    if [ -n "${PAGENT_RELEASE_BIN:-}" ]; then
        [ -f "$PAGENT_RELEASE_BIN" ] && [ -x "$PAGENT_RELEASE_BIN" ] ||
            fail "PAGENT_RELEASE_BIN=$PAGENT_RELEASE_BIN is not an executable file"
        say "using the prebuilt binary $PAGENT_RELEASE_BIN"
        printf '%s\n' "$PAGENT_RELEASE_BIN"
        return
    fi
    if [ "${PAGENT_STATIC:-1}" != 0 ] && [[ $host == *-linux-gnu ]] &&
        [ -f "$(cc -print-file-name=libc.a 2>/dev/null || echo /nonexistent)" ]; then
        say "building the static binary for $host (LTO: minutes)"
        if RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
            cargo build --release --locked --target "$host" 1>&2; then
            printf '%s\n' "$repo/target/$host/release/pagent"
            return
        fi
        say "the static build failed; building the ordinary one"
    fi
    say "building the binary for $host (LTO: minutes)"
    cargo build --release --locked 1>&2 || fail "cargo build failed (see above)"
    printf '%s\n' "$repo/target/release/pagent"
}

rm -rf -- "$out/packages" "$out/dist"
mkdir -p -- "$out/packages" "$out/dist"

# --- the platform packages ------------------------------------------------------------
built=()
not_built=()
for row in "${matrix[@]}"; do
    read -r platform target os cpu exe needs <<<"$row"
    if [ "$target" != "$host" ]; then
        not_built+=("pagent-$platform ($target): needs $needs")
        continue
    fi
    bin="$(build_host)"
    actual="$("$bin" --version </dev/null)" || fail "$bin --version failed"
    [ "$actual" = "pagent $version" ] ||
        fail "$bin says '$actual', but Cargo.toml says version $version: rebuild it"
    dir="$out/packages/pagent-$platform"
    mkdir -p -- "$dir/bin"
    cp -- "$bin" "$dir/bin/$exe"
    chmod 755 "$dir/bin/$exe"
    cat >"$dir/package.json" <<EOF
{
  "name": "pagent-$platform",
  "version": "$version",
  "description": "The pagent binary for $os $cpu (installed by the pagent package; not used directly).",
  "license": "MIT",
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

# --- the main package: launcher, postinstall, plugin files ---------------------------
main="$out/packages/pagent"
mkdir -p -- "$main/scripts"
cp -R -- npm/pagent/bin npm/pagent/install.js npm/pagent/platforms.js npm/pagent/README.md "$main/"
cp -R -- .claude-plugin hooks commands plugin agents "$main/"
cp -- scripts/pagent "$main/scripts/pagent"
[ -f LICENSE ] && cp -- LICENSE "$main/"
node -e '
const fs = require("fs");
const [src, dest, version] = process.argv.slice(1);
const pkg = JSON.parse(fs.readFileSync(src, "utf8"));
pkg.version = version;
for (const name of Object.keys(pkg.optionalDependencies)) pkg.optionalDependencies[name] = version;
pkg.files = ["bin", "install.js", "platforms.js", "README.md", ".claude-plugin", "hooks",
  "commands", "plugin", "agents", "scripts/pagent"];
fs.writeFileSync(dest, JSON.stringify(pkg, null, 2) + "\n");
' npm/pagent/package.json "$main/package.json" "$version"
grep -q "\"version\": \"$version\"" "$main/.claude-plugin/plugin.json" ||
    say "warning: .claude-plugin/plugin.json does not say version $version"

# --- npm pack ------------------------------------------------------------------------
for pkg in "${built[@]}" pagent; do
    (cd -- "$out/packages/$pkg" && npm pack --silent --pack-destination "$out/dist" >/dev/null) ||
        fail "npm pack failed in $out/packages/$pkg"
done
say "version $version: packed $(cd -- "$out/dist" && echo *)"
say "in $out/dist"
for line in "${not_built[@]}"; do
    say "not built on this machine: $line"
done

#!/usr/bin/env bash
# Installs pagent from source: builds the binary with cargo, then runs `pagent install`
# (see `pagent install --help`), which sets Claude Code up exactly as `npx pagent install`
# does: the plugin's files staged as a local marketplace (only the plugin's files: Claude
# Code copies a folder marketplace whole, and the repository's target/ is gigabytes), the
# marketplace registered, the plugin pagent@pagent installed (user scope), the binary
# copied into the plugin's data folder (<config>/plugins/data/pagent-pagent/bin/pagent,
# where the hooks look first, whatever Claude Code's PATH), and the short command names
# (/ralph, /pagent-run, ...) written. Without `claude` on PATH only the binary is put in
# place. Safe to run again. Arguments go to `pagent install` (e.g. --no-short-commands).
# To remove everything: `pagent uninstall`.
#
# Environment:
#   CLAUDE_CONFIG_DIR       Claude Code's config folder (default ~/.claude)
#   PAGENT_MARKETPLACE_DIR  where to stage the plugin
#                           (default ${XDG_DATA_HOME:-~/.local/share}/pagent/marketplace)
#   CARGO_INSTALL_ROOT, CARGO_HOME  honoured as cargo honours them
#   PAGENT_STATIC=0         build the ordinary binary, not the static one
set -euo pipefail

script_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
repo_root="$(cd -- "$script_dir/.." && pwd -P)"

say() { printf 'pagent install: %s\n' "$*"; }
fail() {
    printf 'pagent install: error: %s\n' "$*" >&2
    exit 1
}

# --- 1. the binary -----------------------------------------------------------
command -v cargo >/dev/null 2>&1 ||
    fail "cargo is not on PATH; install a Rust toolchain (rustup), then run this again"
# On Linux with glibc, a static-pie build (`+crt-static`, libc from the C toolchain's static
# libraries) skips the dynamic loader: the hooks start about 0.1 ms sooner (BENCHMARKS.md).
# Without a static libc (or elsewhere), or if that build fails, the ordinary build is used.
# PAGENT_STATIC=0 skips it.
host="$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')"
static_args=()
if [ "${PAGENT_STATIC:-1}" != 0 ] && [[ $host == *-linux-gnu ]] &&
    [ -f "$(cc -print-file-name=libc.a 2>/dev/null || echo /nonexistent)" ]; then
    static_args=(--target "$host")
fi
if [ ${#static_args[@]} -gt 0 ]; then
    say "building a static binary: cargo install --locked --path $repo_root --target $host, RUSTFLAGS +crt-static (output below)"
    if ! RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
        cargo install --locked --path "$repo_root" "${static_args[@]}" 1>&2; then
        say "the static build failed; building the ordinary one"
        static_args=()
    fi
fi
if [ ${#static_args[@]} -eq 0 ]; then
    say "building the binary: cargo install --locked --path $repo_root (output below)"
    cargo install --locked --path "$repo_root" 1>&2 || fail "cargo install failed (see its output above)"
fi
installed_bin="${CARGO_INSTALL_ROOT:-${CARGO_HOME:-$HOME/.cargo}}/bin/pagent"
if [ ! -x "$installed_bin" ]; then
    installed_bin="$(command -v pagent || true)"
    [ -n "$installed_bin" ] || fail "cargo install succeeded but no pagent binary was found in cargo's bin folder or on PATH"
fi
say "installed the binary: $installed_bin ($("$installed_bin" --version </dev/null 2>/dev/null || echo 'version unknown'))"

# --- 2. the set-up: the same subcommand the npm route runs ------------------------
# `pagent install` stages the plugin's files, registers the marketplace, installs the
# plugin, copies the binary into the plugin's data folder and writes the short command
# names; it is idempotent and says what it did. `pagent uninstall` undoes it.
exec "$installed_bin" install --from "$repo_root" "$@"

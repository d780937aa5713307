#!/usr/bin/env bash
# Installs pagent from source: builds the binary with cargo, then runs `pagent install`
# (see `pagent install --help`), which sets Claude Code up exactly as `npx pagent install`
# does: the plugin's files staged as a local marketplace (only the plugin's files: Claude
# Code copies a folder marketplace whole, and the repository's target/ is gigabytes), the
# marketplace registered, the plugin pagent@pagent installed (user scope), the binary
# copied into the plugin's data folder (<config>/plugins/data/pagent-pagent/bin/pagent,
# where the hooks look first, whatever Claude Code's PATH), and the short command names
# (/ralph, /pagent-run, ...) written. Without `claude` on PATH only the binary is put in
# place. Safe to run again. Other arguments go to `pagent install`.
# To remove everything: `pagent uninstall`.
#
# Options:
#   --verbose             show cargo's whole output while building
#   --no-short-commands   do not install the short names (/ralph, /pagent-run, ...)
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

verbose=false
pass=()
for arg in "$@"; do
    case $arg in
        --verbose) verbose=true ;;
        -h | --help) sed -n '2,/^set -euo/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" | sed '$d'; exit 0 ;;
        *) pass+=("$arg") ;;
    esac
done

# --- 1. the binary -----------------------------------------------------------
command -v cargo >/dev/null 2>&1 ||
    fail "cargo is not on PATH; install a Rust toolchain (rustup), then run this again"
# cargo prints ~200 lines here; they go to a log, shown whole only on failure (or with
# --verbose). One line says what is happening and how long it usually takes.
estimate="about 4 minutes on 2 cores the first time, seconds when nothing changed"
build() { # LABEL CARGO-INSTALL-ARGS...: build quietly behind one progress line; 0 on success
    local label=$1 build_log="${TMPDIR:-/tmp}/pagent-install.$$.log" pid started=$SECONDS
    shift
    if $verbose; then
        say "$label: cargo install --locked --path $repo_root $*"
        cargo install --locked --path "$repo_root" "$@" 1>&2
        return
    fi
    cargo install --locked --path "$repo_root" "$@" >"$build_log" 2>&1 &
    pid=$!
    if [ -t 1 ]; then
        while kill -0 "$pid" 2>/dev/null; do
            printf '
pagent install: %s (%s): %ds ' "$label" "$estimate" $((SECONDS - started))
            sleep 1
        done
        printf '
'
    else
        say "$label ($estimate)"
    fi
    if ! wait "$pid"; then
        printf 'pagent install: %s failed after %ds; its output:
' "$label" $((SECONDS - started)) >&2
        cat -- "$build_log" >&2
        rm -f -- "$build_log"
        return 1
    fi
    rm -f -- "$build_log"
    say "built the binary in $((SECONDS - started))s"
}
# On Linux with glibc, a static-pie build (`+crt-static`, libc from the C toolchain's static
# libraries) skips the dynamic loader: the hooks start about 0.1 ms sooner (BENCHMARKS.md).
# Without a static libc (or elsewhere), or if that build fails, the ordinary build is used.
# PAGENT_STATIC=0 skips it.
host="$(rustc -vV 2>/dev/null | sed -n 's/^host: //p')"
built=false
if [ "${PAGENT_STATIC:-1}" != 0 ] && [[ $host == *-linux-gnu ]] &&
    [ -f "$(cc -print-file-name=libc.a 2>/dev/null || echo /nonexistent)" ]; then
    if RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
        build "building a static binary" --target "$host"; then
        built=true
    else
        say "the static build failed; building the ordinary one"
    fi
fi
if ! $built; then
    build "building the binary" || fail "cargo install failed (see its output above)"
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
exec "$installed_bin" install --from "$repo_root" "${pass[@]}"

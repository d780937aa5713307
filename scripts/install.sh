#!/usr/bin/env bash
# Installs pagent: the binary with cargo, then (when the `claude` CLI is on
# PATH) the Claude Code plugin, user scope. Safe to run again: every step
# checks what is already there. One line per step on stdout; tool output and
# errors on stderr.
#
# Why the plugin is installed from a staged copy and not from the repository
# root: for a directory marketplace, Claude Code (2.1.197) copies the whole
# marketplace folder into its plugin cache, gitignored files included, so the
# repository root would drag target/ (hundreds of MB: cargo builds, the pinned
# test CLI) and any local secrets along. The staged copy holds only the plugin
# files. Claude Code runs a `"source": "./"` plugin from the marketplace folder
# itself, so running this script again updates the live plugin.
#
# The binary is also copied into the plugin's data folder
# (<config>/plugins/data/pagent-pagent/bin/pagent), where scripts/pagent looks
# for it, so hooks work even when ~/.cargo/bin is not on Claude Code's PATH.
#
# Options:
#   --verbose             show cargo's whole output while building
#   --no-short-commands   do not install the short names (/ralph, /pagent-run, ...)
#   --uninstall-commands  remove the short names pagent installed, and stop
#
# Environment:
#   CLAUDE_CONFIG_DIR       Claude Code's config folder (default ~/.claude)
#   PAGENT_MARKETPLACE_DIR  where to stage the plugin
#                           (default ${XDG_DATA_HOME:-~/.local/share}/pagent/marketplace)
#   CARGO_INSTALL_ROOT, CARGO_HOME  honoured as cargo honours them
set -euo pipefail

plugin_id="pagent@pagent"
script_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
repo_root="$(cd -- "$script_dir/.." && pwd -P)"
config_dir="${CLAUDE_CONFIG_DIR:-$HOME/.claude}"
data_bin="$config_dir/plugins/data/pagent-pagent/bin/pagent"
staging="${PAGENT_MARKETPLACE_DIR:-${XDG_DATA_HOME:-$HOME/.local/share}/pagent/marketplace}"

say() { printf 'pagent install: %s\n' "$*"; }
fail() {
    printf 'pagent install: error: %s\n' "$*" >&2
    exit 1
}

verbose=false
short_commands=true
for arg in "$@"; do
    case $arg in
        --verbose) verbose=true ;;
        --no-short-commands) short_commands=false ;;
        --uninstall-commands)
            "$script_dir/install-commands.sh" --remove --dir "$config_dir/commands"
            exit 0
            ;;
        -h | --help) sed -n '2,/^set -euo/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}" | sed '$d'; exit 0 ;;
        *) fail "unknown argument: $arg (try --help)" ;;
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
            printf 'pagent install: %s (%s): %ds ' "$label" "$estimate" $((SECONDS - started))
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

# Copy into the plugin data folder through a temporary file and a rename, so a
# hook running the old binary at this moment is not disturbed.
copy_to_data_folder() {
    mkdir -p "$(dirname -- "$data_bin")"
    local tmp="$data_bin.tmp.$$"
    cp -- "$installed_bin" "$tmp"
    chmod 755 "$tmp"
    mv -f -- "$tmp" "$data_bin"
    say "copied the binary to the plugin data folder: $data_bin"
}

# --- 2. the plugin -----------------------------------------------------------
if ! command -v claude >/dev/null 2>&1; then
    copy_to_data_folder
    say "claude is not on PATH: skipped the plugin step. To add it later, run scripts/install.sh again once claude is installed, or load it for one session with: claude --plugin-dir $repo_root"
    exit 0
fi

# Stage the plugin files only (see the note at the top).
stage_plugin() {
    [ -n "$staging" ] && [ "$staging" != "/" ] || fail "refusing to stage the plugin in '$staging'"
    local parent new
    parent="$(dirname -- "$staging")"
    mkdir -p "$parent"
    new="$(mktemp -d "$parent/.marketplace.XXXXXX")"
    local item
    for item in .claude-plugin hooks commands scripts plugin agents skills README.md LICENSE; do
        if [ -e "$repo_root/$item" ]; then
            cp -R -- "$repo_root/$item" "$new/"
        fi
    done
    [ -f "$new/.claude-plugin/marketplace.json" ] ||
        fail "$repo_root/.claude-plugin/marketplace.json is missing; is this the pagent repository?"
    chmod 755 "$new"
    rm -rf -- "$staging"
    mv -- "$new" "$staging"
}
stage_plugin
say "staged the plugin files in $staging"

# `marketplace add` is idempotent in 2.1.197: the same folder again prints
# "already on disk"; a different folder under the same name is re-pointed.
if ! out="$(claude plugin marketplace add "$staging" </dev/null 2>&1)"; then
    printf '%s\n' "$out" >&2
    fail "claude plugin marketplace add $staging failed"
fi
case $out in
    *already*) say "marketplace pagent: already registered ($staging)" ;;
    *) say "marketplace pagent: added ($staging)" ;;
esac

# The folder of the installed copy, from `claude plugin list --json`
# (pretty-printed, one key per line); empty when not installed.
installed_path() {
    claude plugin list --json </dev/null 2>/dev/null | awk -v id="\"$plugin_id\"" '
        /"id":/ { mine = index($0, id) > 0 }
        mine && /"installPath":/ {
            sub(/^[^:]*: *"/, ""); sub(/",? *$/, ""); print; exit
        }'
}

install_plugin() {
    local out
    if ! out="$(claude plugin install "$plugin_id" </dev/null 2>&1)"; then
        printf '%s\n' "$out" >&2
        fail "claude plugin install $plugin_id failed"
    fi
}

current="$(installed_path || true)"
if [ -z "$current" ]; then
    install_plugin
    say "plugin $plugin_id: installed (user scope)"
elif [ -d "$current" ] && diff -rq -- "$staging" "$current" >/dev/null 2>&1; then
    say "plugin $plugin_id: already installed and up to date"
else
    # Same version, changed files: `claude plugin update` keeps the old copy
    # (its cache is keyed by version), so reinstall. --keep-data keeps the
    # data folder (and the binary in it) that a plain uninstall deletes.
    if ! out="$(claude plugin uninstall --keep-data "$plugin_id" </dev/null 2>&1)"; then
        printf '%s\n' "$out" >&2
        fail "claude plugin uninstall --keep-data $plugin_id failed"
    fi
    install_plugin
    say "plugin $plugin_id: reinstalled with the current files"
fi

copy_to_data_folder

# --- 3. the short command names ------------------------------------------------
if $short_commands; then
    "$script_dir/install-commands.sh" --launcher "$staging/scripts/pagent" --dir "$config_dir/commands"
else
    say "skipped the short command names (--no-short-commands); the plugin's /pagent:... names work"
fi
say "done: start a new Claude Code session and try /ralph or /pagent:ralph, and /pagent-run or /pagent:run"

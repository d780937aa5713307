#!/usr/bin/env bash
# Installs one pinned agent CLI from npm into <repo>/target/clients/NAME-VERSION/ for the
# end-to-end tests, never globally:
#
#   scripts/install-client.sh claude [VERSION]     # default: CLAUDE_CODE_NEWEST
#   scripts/install-client.sh codex [VERSION]
#   scripts/install-client.sh opencode [VERSION]
#   scripts/install-client.sh claude-win32 [VERSION]
#
# claude-win32 is Claude Code's Windows x64 build (its platform package, taken with
# `npm pack`: npm installs only this system's), for the tests that run it under Wine
# (scripts/test.sh); its version is the package's, since running it needs Wine.
#
# Versions default to scripts/clients.sh. Progress goes to stderr; the last stdout line is
# the absolute path of the executable, so callers can do
#   CLAUDE=$(scripts/install-client.sh claude 2.1.197 | tail -n 1)
# Idempotent: an install that reports the pinned version is reused as is.
#
# Claude Code releases after 2.1.2xx ask for Node 22; npm warns (EBADENGINE) and installs
# anyway, and the native executable they link runs without it. Codex and OpenCode are
# native executables too, taken from their platform packages, so no Node runs in a test.
set -euo pipefail

script_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
repo_root="$(cd -- "$script_dir/.." && pwd -P)"
# shellcheck source=clients.sh
. "$script_dir/clients.sh"

name="${1:-claude}"
case $name in
    claude) package=@anthropic-ai/claude-code default=$CLAUDE_CODE_NEWEST ;;
    claude-win32) package=@anthropic-ai/claude-code-win32-x64 default=$CLAUDE_CODE_NEWEST ;;
    codex) package=@openai/codex default=$CODEX_VERSION ;;
    opencode) package=opencode-ai default=$OPENCODE_VERSION ;;
    *)
        echo "install-client: unknown client '$name' (claude, codex, opencode or claude-win32)" >&2
        exit 1
        ;;
esac
version="${2:-$default}"
prefix="$repo_root/target/clients/$name-$version"

# npm's own cache would keep a second copy of every package (over a gigabyte for the four
# clients, on a CI disk that has little to spare): each install gets a cache of its own,
# removed when it ends.
npm_config_cache="$(mktemp -d "${TMPDIR:-/tmp}/pagent-npm-cache.XXXXXX")"
export npm_config_cache
trap 'rm -rf -- "$npm_config_cache"' EXIT

if [ "$name" = claude-win32 ]; then
    exe="$prefix/claude.exe"
    stamp="$prefix/version.txt"
    if [ -f "$exe" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$version" ]; then
        echo "install-client: $name $version already installed in $prefix" >&2
    else
        command -v npm >/dev/null 2>&1 || {
            echo "install-client: npm is not on PATH; install Node.js 20+ and npm, then run this again" >&2
            exit 1
        }
        echo "install-client: fetching $package@$version into $prefix" >&2
        rm -rf -- "$prefix"
        mkdir -p -- "$prefix/pack"
        npm pack --silent --pack-destination "$prefix/pack" "$package@$version" >/dev/null
        tar -xzf "$prefix"/pack/*.tgz -C "$prefix/pack"
        got="$(sed -n 's/^ *"version": *"\([^"]*\)".*/\1/p' "$prefix/pack/package/package.json")"
        if [ "$got" != "$version" ] || [ ! -f "$prefix/pack/package/claude.exe" ]; then
            echo "install-client: expected $package $version with claude.exe, found '${got:-nothing}'" >&2
            exit 1
        fi
        mv -- "$prefix/pack/package/claude.exe" "$exe"
        rm -rf -- "$prefix/pack"
        printf '%s\n' "$version" >"$stamp"
        echo "install-client: installed $name $version" >&2
    fi
    printf '%s\n' "$exe"
    exit 0
fi

# The executable inside an install: the native binary of the platform package where
# there is one (Codex's and OpenCode's npm entries are Node wrappers around it); npm
# installs only this platform's (Linux or macOS), so the first match is it (the other
# system's pattern matches nothing, which `ls` reports as a failure: ignored).
executable() {
    local found
    case $name in
        claude)
            # On Windows `.bin/claude` is a shell shim; the package's own executable runs
            # from anything (the Windows runner's Python starts it).
            case $(uname -s) in
                MINGW* | MSYS* | CYGWIN*) found="$prefix/node_modules/@anthropic-ai/claude-code/bin/claude.exe" ;;
                *) found="$prefix/node_modules/.bin/claude" ;;
            esac
            ;;
        codex) found="$( (ls -d "$prefix"/node_modules/@openai/codex-{linux,darwin}-*/vendor/*/bin/codex 2>/dev/null || true) | head -n 1)" ;;
        opencode) found="$( (ls -d "$prefix"/node_modules/opencode-{linux,darwin}-*/bin/opencode 2>/dev/null || true) | grep -v baseline | head -n 1)" ;;
    esac
    [ -n "$found" ] || found="$prefix/node_modules/.bin/$name"
    printf '%s\n' "$found"
}

installed_version() {
    # `claude --version` prints "2.1.197 (Claude Code)", `codex --version`
    # "codex-cli 0.169.0", `opencode --version` "1.18.33": take the dotted number.
    local exe
    exe="$(executable)"
    [ -x "$exe" ] || return 1
    "$exe" --version 2>/dev/null | grep -oE '[0-9]+\.[0-9]+\.[0-9]+' | head -n 1
}

if [ "$(installed_version || true)" = "$version" ]; then
    echo "install-client: $name $version already installed in $prefix" >&2
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "install-client: npm is not on PATH; install Node.js 20+ and npm, then run this again" >&2
        exit 1
    fi
    echo "install-client: installing $package@$version into $prefix" >&2
    mkdir -p "$prefix"
    # --prefix keeps it out of the global tree; npm's stdout goes to stderr so that the
    # only stdout line is the path below.
    npm install --prefix "$prefix" --no-save --no-audit --no-fund "$package@$version" 1>&2
    got="$(installed_version || true)"
    if [ "$got" != "$version" ]; then
        echo "install-client: expected $name $version after install, found '${got:-nothing}' at $(executable)" >&2
        exit 1
    fi
    echo "install-client: installed $name $version" >&2
fi

executable

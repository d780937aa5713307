#!/usr/bin/env bash
# Installs the pinned Claude Code CLI into <repo>/target/claude-code/ for the
# end-to-end tests, never globally. Progress goes to stderr; the last stdout
# line is the absolute path of the `claude` executable, so callers can do
#   CLAUDE=$(scripts/install-claude-code.sh | tail -n 1)
# Idempotent: an existing install of the pinned version is reused as is.
#
# Pinned to 2.1.197 because newer releases need Node >= 22 and because the
# facts in CLAUDE-CODE.md (hook JSON, block cap, plugin loading) were observed
# with it. Override with CLAUDE_CODE_VERSION at your own risk.
set -euo pipefail

version="${CLAUDE_CODE_VERSION:-2.1.197}"
script_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
repo_root="$(cd -- "$script_dir/.." && pwd -P)"
prefix="$repo_root/target/claude-code"
claude="$prefix/node_modules/.bin/claude"

installed_version() {
    # `claude --version` prints e.g. "2.1.197 (Claude Code)".
    [ -x "$claude" ] || return 1
    "$claude" --version 2>/dev/null | awk 'NR == 1 { print $1 }'
}

if [ "$(installed_version || true)" = "$version" ]; then
    echo "claude-code: $version already installed in $prefix" >&2
else
    if ! command -v npm >/dev/null 2>&1; then
        echo "claude-code: npm is not on PATH; install Node.js 20+ and npm, then run this again" >&2
        exit 1
    fi
    echo "claude-code: installing @anthropic-ai/claude-code@$version into $prefix" >&2
    mkdir -p "$prefix"
    # --prefix keeps it out of the global tree; stdout of npm goes to stderr so
    # that the only stdout line is the path below.
    npm install --prefix "$prefix" --no-save --no-audit --no-fund \
        "@anthropic-ai/claude-code@$version" 1>&2
    got="$(installed_version || true)"
    if [ "$got" != "$version" ]; then
        echo "claude-code: expected version $version after install, found '${got:-nothing}' at $claude" >&2
        exit 1
    fi
    echo "claude-code: installed $version" >&2
fi

echo "$claude"

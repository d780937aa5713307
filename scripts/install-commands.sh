#!/usr/bin/env bash
# Installs (or removes) the short slash-command names as user-scope Claude Code commands:
# /pagent-run, /pagent-status, /pagent-cancel, /pagent-resume, /ralph and /ralph-cancel.
#
# Claude Code always namespaces a plugin's commands (/pagent:run, /pagent:ralph, ...);
# commands in <config>/commands/NAME.md are not namespaced, so that is where the design's
# short names live. Each file is made from the plugin's own command file, calling the
# launcher given with --launcher (an absolute path) instead of ${CLAUDE_PLUGIN_ROOT}'s,
# and carries a marker line. A file of that name that does not carry the marker is the
# user's own: it is left alone, and the script says so.
#
# Usage: scripts/install-commands.sh [--launcher PATH] [--dir DIR]
#        scripts/install-commands.sh --remove [--dir DIR]
#   --launcher PATH  the scripts/pagent launcher the commands run
#                    (default: this checkout's scripts/pagent)
#   --dir DIR        where the commands go (default: ${CLAUDE_CONFIG_DIR:-~/.claude}/commands)
#   --remove         delete the files this script wrote (those with the marker)
# One line per file on stdout. Exit 1 on a usage error.
set -euo pipefail

script_dir="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")" && pwd -P)"
repo_root="$(cd -- "$script_dir/.." && pwd -P)"
launcher="$script_dir/pagent"
dir="${CLAUDE_CONFIG_DIR:-$HOME/.claude}/commands"
remove=false
marker='<!-- pagent: short command name written by scripts/install-commands.sh; scripts/install-commands.sh --remove deletes it -->'

while [ $# -gt 0 ]; do
    case $1 in
        --launcher) launcher=${2:?--launcher needs a path}; shift 2 ;;
        --dir) dir=${2:?--dir needs a folder}; shift 2 ;;
        --remove) remove=true; shift ;;
        -h | --help) sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; exit 0 ;;
        *) echo "install-commands: unknown argument: $1" >&2; exit 1 ;;
    esac
done
case $launcher in
    /*) ;;
    *) echo "install-commands: --launcher must be an absolute path" >&2; exit 1 ;;
esac

say() { printf 'pagent install: %s\n' "$*"; }

# short name -> the plugin's command file
names=(pagent-run:run pagent-status:status pagent-cancel:cancel pagent-resume:resume
    ralph:ralph ralph-cancel:ralph-cancel)

ours() { [ -f "$1" ] && grep -qF -- "$marker" "$1"; }

if $remove; then
    for pair in "${names[@]}"; do
        file="$dir/${pair%%:*}.md"
        if ours "$file"; then
            rm -f -- "$file"
            say "removed /${pair%%:*} ($file)"
        elif [ -e "$file" ]; then
            say "left $file alone: pagent did not write it"
        fi
    done
    exit 0
fi

mkdir -p -- "$dir"
skipped=()
for pair in "${names[@]}"; do
    short=${pair%%:*}
    file="$dir/$short.md"
    if [ -e "$file" ] && ! ours "$file"; then
        skipped+=("/$short")
        say "kept your own $file: /$short stays yours (pagent's is /pagent:${pair#*:})"
        continue
    fi
    source="$repo_root/commands/${pair#*:}.md"
    text=$(<"$source")
    text=${text//'${CLAUDE_PLUGIN_ROOT}/scripts/pagent'/$launcher}
    # The marker goes right after the front matter.
    front=${text%%$'\n---\n'*}
    body=${text#*$'\n---\n'}
    tmp="$file.tmp.$$"
    printf '%s\n---\n%s\n%s\n' "$front" "$marker" "$body" >"$tmp"
    mv -f -- "$tmp" "$file"
done
say "short command names in $dir: /pagent-run /pagent-status /pagent-cancel /pagent-resume /ralph /ralph-cancel${skipped[*]:+ (except ${skipped[*]})}"

#!/usr/bin/env bash
# scripts/bench/reason-bytes.sh: how many bytes of block reason the built-in prd-to-code
# pipeline sends per iteration. Claude Code (2.1.259 and later) hands every reason to the
# model twice, and shows it to the user as `Stop hook error: <reason>`, so these bytes are
# what each iteration costs in context and screen lines.
#
# The run: `pagent run prd.md` in a temp git project, then for each of the five stages two
# stops with the stage unmet (two re-prompts, with a file changed between them so the
# no-progress check stays quiet), then the stage's files written and a stop that advances
# (the next stage's first prompt). The verifier ends with the promise. One row per Stop
# hook that blocked: stage, kind (re-prompt or entry), bytes, lines.
#
# Usage: scripts/bench/reason-bytes.sh [PAGENT_BINARY]   (default: target/debug/pagent)
# Needs python3 and git.
set -euo pipefail

repo="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)"
bin="${1:-$repo/target/debug/pagent}"
[ -x "$bin" ] || { echo "reason-bytes: no binary at $bin (cargo build first)" >&2; exit 1; }

work="$(mktemp -d)"
trap 'rm -rf -- "$work"' EXIT
project="$work/project"
mkdir -p "$project"
cd "$project"
git init -q
git -c user.name=b -c user.email=b@b commit -q --allow-empty -m init
printf '# Todo app\n\nA command-line todo list: add, list, done.\n' >prd.md

export PAGENT_CONFIG_DIR="$work/config" CLAUDE_CODE_SESSION_ID=bench NO_COLOR=1
unset CLAUDE_PROJECT_DIR
"$bin" --project "$project" run prd.md >"$work/setup.txt"
setup_bytes=$(wc -c <"$work/setup.txt")

stop() { # $1: last assistant message
    python3 -c 'import json,sys; print(json.dumps({"session_id":"bench","hook_event_name":"Stop","cwd":sys.argv[1],"last_assistant_message":sys.argv[2]}))' \
        "$project" "$1" | "$bin" --project "$project" hook stop
}
row() { # $1 stage, $2 kind, stdin: hook output
    python3 -c '
import json, sys
out = sys.stdin.read().strip()
reason = json.loads(out).get("reason", "") if out else ""
print(f"| {sys.argv[1]} | {sys.argv[2]} | {len(reason.encode())} | {reason.count(chr(10)) + 1 if reason else 0} |")
' "$1" "$2"
}
lines() { local n; for n in $(seq "$2"); do echo "line $n of $1"; done >"$1"; }

echo "| stage | reason | bytes | lines |"
echo "| --- | --- | ---: | ---: |"
echo "| architect | set-up output (the first prompt) | $setup_bytes | $(wc -l <"$work/setup.txt") |"
stages=(architect qa security implementer verifier)
for i in "${!stages[@]}"; do
    stage=${stages[$i]}
    for attempt in 1 2; do
        echo "$stage $attempt" >"scratch-$stage-$attempt.txt"
        stop "Working on $stage." | row "$stage" "re-prompt $attempt"
    done
    case $stage in
        architect) lines architecture.md 60 ;;
        qa) lines test-plan.md 40 ;;
        security) lines security-assessment.md 30 ;;
        implementer) mkdir -p src && for f in a b c; do echo "fn $f() {}" >"src/$f.rs"; done ;;
        verifier) stop $'All verified.\n<promise>DONE</promise>' >"$work/last.json"; break ;;
    esac
    next=${stages[$((i + 1))]}
    stop "Stage done." | row "$next" "entry"
done
status="$("$bin" --project "$project" status --json | python3 -c 'import json,sys; print(json.load(sys.stdin)["status"])')"
[ "$status" = complete ] || { echo "reason-bytes: the pipeline did not complete (status $status)" >&2; exit 1; }

#!/usr/bin/env bash
# scripts/bench/monorepo.sh: the no-progress fingerprint on a monorepo (issue 33). A Stop
# in an active Ralph loop (which fingerprints the working tree) against `git status
# --porcelain` of the same repository, in one hyperfine run, and the peak RSS of both.
#
# Usage: scripts/bench/monorepo.sh [FILES]   (default 1000000: a 200 MB index)
#        scripts/bench/monorepo.sh --quick   (CI: 120,000 files, past the old caps)
# It fails when a goal is missed: the Stop within git status's wall (--quick: 1.5x), its
# peak RSS within 64 MiB.
# Environment: PAGENT_BIN (default: the binary as released, built as scripts/bench/binary.sh
# says), RUNS (default 5), TMPDIR.
# Writing the repository takes about 11 minutes for 1M files on a loaded 2-core VM, and
# about 5 GB of disk; it is kept in $TMPDIR/pagent-monorepo-FILES for the next run.
set -euo pipefail
bound=1
if [[ ${1:-} == --quick ]]; then
    # CI's check: an index past the caps the fingerprint once had (100,000 entries), a
    # generous bound for a noisy machine; the repository is not kept.
    shift
    set -- 120000
    bound=1.5 quick=1
fi
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
files=${1:-1000000}
. "$root/scripts/bench/binary.sh"
bin=$(bench_binary "$root")
work=${TMPDIR:-/tmp}/pagent-monorepo-$files
repo=$work/repo cfg=$work/cfg out=$work/out
session=11111111-2222-3333-4444-555555555555
[[ -x $bin ]] || { echo "monorepo.sh: no binary at $bin" >&2; exit 1; }
[[ -e $repo/.git/index ]] || python3 "$root/scripts/bench/gen-repo.py" monorepo "$repo" "$files"
rm -rf "$cfg" "$repo/.claude" "$out"
mkdir -p "$cfg" "$out"
export PAGENT_CONFIG_DIR=$cfg CLAUDE_PROJECT_DIR=$repo
unset PAGENT_DRIVER CLAUDE_CODE_SESSION_ID PAGENT_PROJECT_DIR || true
CLAUDE_CODE_SESSION_ID=$session "$bin" --project "$repo" ralph --force --max-iterations 1000 \
    "Fix the bug" >/dev/null
state=$repo/.claude/pagent-pipeline.json
cp "$state" "$out/saved.json"
# The session's transcript: its last turn, after the loop began, ends on the hook's message.
python3 "$root/scripts/gen-transcript.py" "$out/t.jsonl" 16K --session "$session" --cwd "$repo" \
    --loop-turn "Still working on it."
python3 - "$out/in.json" "$repo" "$session" "$out/t.jsonl" <<'PY'
import json, sys
out, cwd, session, transcript = sys.argv[1:5]
with open(out, "w") as f:
    json.dump({"session_id": session, "transcript_path": transcript, "cwd": cwd,
               "hook_event_name": "Stop", "stop_hook_active": True,
               "last_assistant_message": "Still working on it."}, f)
PY
git -C "$repo" status --porcelain >/dev/null # as a user's repository would be: git has looked
# The state and the generation the set-up recorded in the user's folder, both put back
# before each Stop (copying only the state back would be a rollback, which pagent refuses).
cp -a "$cfg/projects" "$out/saved-projects"
restore="cp $(printf %q "$out/saved.json") $(printf %q "$state") && rm -rf $(printf %q "$cfg/projects")"
restore+=" && cp -a $(printf %q "$out/saved-projects") $(printf %q "$cfg/projects")"
eval "$restore"
"$bin" hook stop <"$out/in.json" | grep -q '"decision":"block"\|additionalContext' ||
    { echo "monorepo.sh: the Stop hook did not block" >&2; exit 1; }
grep -Eq '"fingerprint": ?"[0-9a-f]' "$state" ||
    { echo "monorepo.sh: no fingerprint in the state: the check stood aside" >&2; exit 1; }
peak=0
for _ in 1 2 3; do
    eval "$restore"
    /usr/bin/time -o "$out/time" -f "%M" "$bin" hook stop <"$out/in.json" >/dev/null
    kib=$(cat "$out/time")
    ((kib > peak)) && peak=$kib
    echo "peak RSS, pagent hook stop: $kib KiB"
    /usr/bin/time -f "peak RSS, git status --porcelain: %M KiB" git -C "$repo" status --porcelain >/dev/null
done
hyperfine -w 1 -r "${RUNS:-5}" --export-json "$out/monorepo.json" \
    --prepare "$restore" -n "pagent hook stop" "$(printf %q "$bin") hook stop < $(printf %q "$out/in.json")" \
    --prepare true -n "git status --porcelain" "git -C $(printf %q "$repo") status --porcelain"
python3 - "$out/monorepo.json" "$bound" <<'PY'
import json, sys
r = {x["command"]: x for x in json.load(open(sys.argv[1]))["results"]}
s, g = r["pagent hook stop"], r["git status --porcelain"]
ms = lambda r: "%.1f ms (%.1f-%.1f)" % (r["median"] * 1e3, r["min"] * 1e3, r["max"] * 1e3)
ratio = s["median"] / g["median"]
print("Stop %s, git status %s: %.2fx (medians)" % (ms(s), ms(g), ratio))
# The goals (issue 33): within git status's wall on the same repository (1.5x under --quick's
# generous bound for a noisy machine), and 64 MiB.
bound = float(sys.argv[2])
if ratio > bound:
    sys.exit("monorepo.sh: goal missed: the Stop took %.2fx git status, over %gx" % (ratio, bound))
PY
((peak <= 64 * 1024)) || { echo "monorepo.sh: goal missed: the Stop's peak RSS $peak KiB, over 64 MiB" >&2; exit 1; }
[[ -z ${quick:-} ]] || rm -rf -- "$work"

#!/usr/bin/env bash
# scripts/bench/huge-index.sh: the cost of a Stop in a repository whose git index is huge
# (issue 19, finding 7), measured with GNU time on the binary given.
#
#   scripts/bench/huge-index.sh BINARY SIZE_MB [DIR]
#   PATH_LEN=40 scripts/bench/huge-index.sh BINARY 15     # just under the cap, short paths
#
# Builds a git repository in DIR (default: a new temp folder) whose index, written by git
# itself (`git update-index --index-info`), holds entries of PATH_LEN-character paths
# (default 4,000) to one blob until it is about SIZE_MB megabytes: the shape of a small
# repository whose checkout writes a huge index (long, deeply nested paths compress to
# almost nothing in a pack). The files themselves are not checked out. Then it sets up a Ralph loop there with
# BINARY, runs `BINARY hook stop` once to warm the page cache, and five times under
# `/usr/bin/time -v`, printing each run's wall time and peak RSS and the hook's answer.
set -euo pipefail
bin="$(cd -- "$(dirname -- "$1")" && pwd -P)/$(basename -- "$1")"
size_mb="$2"
dir="${3:-$(mktemp -d)}"
mkdir -p "$dir/project" "$dir/config"
project="$dir/project"
cd "$project"
git init -q .
blob="$(printf 'x\n' | git hash-object -w --stdin)"
python3 - "$blob" "$size_mb" "${PATH_LEN:-4000}" <<'EOF' | git update-index --index-info
import sys
blob, size_mb, path_len = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
# Folders of up to 99 characters, then an 8-character file name: PATH_LEN characters.
rest, parts = path_len - 9, []
while rest > 0:
    parts.append("d" * min(99, rest - 1 if rest > 1 else 1))
    rest -= len(parts[-1]) + 1
prefix = "/".join(parts)
entry_bytes = (62 + path_len + 8) // 8 * 8  # fixed fields, the path, padding
count = size_mb * 1024 * 1024 // entry_bytes
for i in range(count):
    sys.stdout.write(f"100644 {blob}\t{prefix}/f{i:07d}\n")
EOF
ls -l .git/index
export PAGENT_CONFIG_DIR="$dir/config" CLAUDE_PROJECT_DIR="$project"
session=35f641a1-e3ce-47f3-8fb7-50415b29808a
CLAUDE_CODE_SESSION_ID=$session "$bin" ralph --max-iterations 1000 --no-progress-limit 3 "Fix the bug" >/dev/null
input="{\"session_id\":\"$session\",\"cwd\":\"$project\",\"hook_event_name\":\"Stop\",\"last_assistant_message\":\"Still working.\"}"
# Each run starts from the state just set up: the state file and the user's folder (which
# remembers the newest generation, and the notices given) are copied back before it.
cp .claude/pagent-pipeline.json "$dir/state.json"
cp -a "$dir/config" "$dir/config.saved"
restore() {
    cp "$dir/state.json" .claude/pagent-pipeline.json
    rm -rf "$dir/config" && cp -a "$dir/config.saved" "$dir/config"
}
echo "$input" | "$bin" hook stop > "$dir/first-answer.json"
for run in 1 2 3 4 5; do
    restore
    echo "$input" | /usr/bin/time -v "$bin" hook stop 2> "$dir/time-$run.txt" > "$dir/answer-$run.json"
    wall=$(grep 'Elapsed (wall clock)' "$dir/time-$run.txt" | awk '{print $NF}')
    rss=$(grep 'Maximum resident set size' "$dir/time-$run.txt" | awk '{print $NF}')
    echo "run $run: wall $wall, max RSS $rss KiB"
done
echo "first answer: $(head -c 600 "$dir/first-answer.json")"
echo "kept in $dir"

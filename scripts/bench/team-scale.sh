#!/usr/bin/env bash
# scripts/bench/team-scale.sh WORKERS STORIES [PAGENT]: a team of WORKERS workers (each
# its own clone and HOME, `-j 1`) landing STORIES independent stories with a fake agent,
# against `pagent parallel -j WORKERS --merge` on the same plan on one machine (then one
# push), over a bare remote served by `git daemon` on 127.0.0.1 (issue 32's scale
# figures). Prints one line: workers, stories, parallel's wall time, the team's, their
# ratio, pushes rejected per landing, landings per minute; then where a story's time
# went on its worker (from its claim to its loop's end, and from there to its landing,
# read from the workers' timestamped lines). AGENT_SECONDS=S (exported) makes the fake
# agent take S seconds per story (default 0: the coordination alone).
set -euo pipefail

workers=${1:?workers}
n=${2:?stories}
pagent=${3:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/pagent}
[ -x "$pagent" ] || { echo "no pagent at $pagent (cargo build --release)"; exit 1; }
base=$(mktemp -d)
trap 'kill "$daemon" 2>/dev/null || true; [ -n "${KEEP:-}" ] || rm -rf "$base"' EXIT
export GIT_CONFIG_NOSYSTEM=1
mkhome() {
  mkdir -p "$1"
  HOME=$1 git config --global user.name bench
  HOME=$1 git config --global user.email bench@example.invalid
  HOME=$1 git config --global init.defaultBranch main
}
mkhome "$base/home"
export HOME=$base/home

cat > "$base/agent.sh" <<'EOF'
cat > /dev/null
sleep "${AGENT_SECONDS:-0}"
mkdir -p work
echo "done" > "work/$(basename "$PWD").txt"
echo '<promise>DONE</promise>'
EOF
sed -i "s/\${AGENT_SECONDS:-0}/${AGENT_SECONDS:-0}/" "$base/agent.sh"

stories=""
for i in $(seq 1 "$n"); do
  id=$(printf 'US-%03d' "$i")
  stories="$stories${stories:+,}{\"id\":\"$id\",\"title\":\"Story $i\",\"description\":\"Write work/$id.txt.\",\"acceptanceCriteria\":[\"it exists\"],\"priority\":$i,\"passes\":false}"
done
mkdir -p "$base/served"
git init -q --bare "$base/served/remote.git"
git init -q "$base/seed"
(cd "$base/seed" && printf '{"project":"bench","userStories":[%s]}\n' "$stories" > prd.json \
  && echo bench > README.md && git add -A && git commit -qm seed \
  && git push -q "$base/served/remote.git" main)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
git daemon --export-all --enable=receive-pack --reuseaddr --listen=127.0.0.1 --port="$port" \
  --base-path="$base/served" "$base/served" > /dev/null 2>&1 &
daemon=$!
url=git://127.0.0.1:$port/remote.git
sleep 0.5
cp -a "$base/served/remote.git" "$base/pristine.git"

now() { date +%s.%N; }

# pagent parallel -j WORKERS on one machine, then one push.
git clone -q "$url" "$base/par"
t0=$(now)
(cd "$base/par" && "$pagent" parallel prd.json -j "$workers" --merge --trust \
  --command "sh $base/agent.sh" --check true > "$base/parallel.log" 2>&1 \
  && git push -q origin HEAD:main)
t1=$(now)
par=$(echo "$t1 - $t0" | bc)

# The team: the remote as it was, one start, WORKERS workers.
rm -rf "$base/served/remote.git" && cp -a "$base/pristine.git" "$base/served/remote.git"
git clone -q "$url" "$base/starter"
(cd "$base/starter" && "$pagent" team start prd.json --name scale --lease 1m --check true \
  --command "sh $base/agent.sh" > /dev/null)
for w in $(seq 1 "$workers"); do
  mkhome "$base/home-w$w"
  HOME=$base/home-w$w git clone -q "$url" "$base/w$w"
done
t0=$(now)
pids=()
for w in $(seq 1 "$workers"); do
  (cd "$base/w$w" && HOME=$base/home-w$w "$pagent" team work --team scale -j 1 --name "w$w" \
    --command "sh $base/agent.sh" --check true 2>&1 | while IFS= read -r l; do echo "$(date +%s.%N) $l"; done > "$base/w$w.log") &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid"; done
t1=$(now)
team=$(echo "$t1 - $t0" | bc)

landed=$(git --git-dir="$base/served/remote.git" log --first-parent --format=%s main | grep -c '^pagent: land ' || true)
[ "$landed" = "$n" ] || { echo "the team landed $landed of $n"; tail -5 "$base"/w*.log; exit 1; }
rejected=$(cat "$base"/w*.log | grep -oE '\(([0-9]+) pushes were rejected|\(1 push was rejected' \
  | grep -oE '[0-9]+' | paste -sd+ - | bc 2>/dev/null || echo 0)
rejected=${rejected:-0}
printf 'workers %s  stories %s  parallel %.1f s  team %.1f s  ratio %.2f  rejected per landing %.2f  landings per minute %.1f\n' \
  "$workers" "$n" "$par" "$team" "$(echo "$team / $par" | bc -l)" "$(echo "$rejected / $n" | bc -l)" \
  "$(echo "$n * 60 / $team" | bc -l)"
# Per story, on its worker: claimed -> landing begins (the loop: the agent, the runner)
# -> landed (the landing: fetch, merge, tick, gate, the atomic push, and every retry).
cat "$base"/w*.log | awk '
  $2 ~ /^\[US-/ { s = $2; gsub(/[][]/, "", s) }
  $2 ~ /^\[US-/ && $3 == "claimed" { c[s] = $1 }
  $2 ~ /^\[US-/ && $3 == "landing" { if (!(s in l)) l[s] = $1 }
  $2 ~ /^\[US-/ && $3 == "landed" { d[s] = $1 }
  END {
    for (s in d) if ((s in c) && (s in l)) { n++; work += l[s] - c[s]; land += d[s] - l[s] }
    if (n) printf "per story: loop %.1f s, landing %.1f s (mean of %d)\n", work / n, land / n, n
  }'

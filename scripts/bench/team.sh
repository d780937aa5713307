#!/usr/bin/env bash
# scripts/bench/team.sh [N] [PAGENT]: what a team's coordination costs per story (issue 32).
#
# A bare remote served by `git daemon` on 127.0.0.1, a plan of N independent stories
# (default 8) and a fake agent (a sh script that writes the story's file and says DONE),
# timed in one hyperfine run (these machines are noisy: the differences are the figures):
#
#   plain:    per story, the fake agent in a clone, `git commit`, `git push` to the shared
#             branch: the least any tool pays to get N stories' work onto a remote;
#   parallel: `pagent parallel -j 1` on the same plan (worktrees, the loop runner, the
#             local merge and the gate `true`), then one `git push`: pagent without a team;
#   team:     `pagent team work -j 1` of one worker on the published team: the same loops
#             plus everything of the team's: claims (create-only pushes), lease renewals
#             with the work in progress, the atomic landing with leases and the plan's tick,
#             and the fetches before each.
#
# (team - parallel) / N is the team's coordination per story; (team - plain) / N all of
# pagent's cost per story over a bare push. The remote is restored before every run.
set -euo pipefail

n=${1:-8}
pagent=${2:-$(cd "$(dirname "$0")/../.." && pwd)/target/release/pagent}
[ -x "$pagent" ] || { echo "no pagent at $pagent (cargo build --release)"; exit 1; }
base=$(mktemp -d)
trap 'kill "$daemon" 2>/dev/null || true; rm -rf "$base"' EXIT
export HOME=$base/home GIT_CONFIG_NOSYSTEM=1
mkdir -p "$HOME"
git config --global user.name bench
git config --global user.email bench@example.invalid
git config --global init.defaultBranch main

cat > "$base/agent.sh" <<'EOF'
cat > /dev/null
mkdir -p work
echo "done" > "work/$(basename "$PWD").txt"
echo '<promise>DONE</promise>'
EOF

# The plan: N stories, no dependencies.
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
git clone -q "$url" "$base/clone0"
cp -a "$base/clone0" "$base/pristine-clone"

# Restores the remote and the clone (and, for the team, publishes the team).
cat > "$base/reset.sh" <<EOF
set -e
rm -rf "$base/served/remote.git" "$base/clone" "$base/home/.local" "$base/home/.cache"
cp -a "$base/pristine.git" "$base/served/remote.git"
cp -a "$base/pristine-clone" "$base/clone"
if [ "\${1:-}" = team ]; then
  cd "$base/clone" && "$pagent" team start prd.json --name bench --lease 5m --check true \
    --command "sh $base/agent.sh" > /dev/null
fi
EOF
cat > "$base/plain.sh" <<EOF
set -e
cd "$base/clone"
for i in \$(seq 1 $n); do
  id=\$(printf 'US-%03d' "\$i")
  mkdir -p "\$id" && (cd "\$id" && echo story | sh "$base/agent.sh" > /dev/null)
  git add -A && git commit -qm "\$id" && git push -q origin HEAD:main
done
EOF
cat > "$base/parallel.sh" <<EOF
set -e
cd "$base/clone"
"$pagent" parallel prd.json -j 1 --merge --trust --command "sh $base/agent.sh" --check true > /dev/null 2>&1
git push -q origin HEAD:main
EOF
cat > "$base/team.sh" <<EOF
set -e
cd "$base/clone"
"$pagent" team work --team bench -j 1 --name w1 --command "sh $base/agent.sh" --check true > /dev/null 2>&1
EOF

# One run of each first, to fail loudly rather than time a failure.
for what in plain parallel team; do
  sh "$base/reset.sh" "$what"
  sh "$base/$what.sh" || { echo "$what failed"; exit 1; }
done
landed=$(git --git-dir="$base/served/remote.git" log --first-parent --oneline main | wc -l)
echo "the team landed $((landed - 1)) commits on main for $n stories"

hyperfine --warmup 1 --runs "${RUNS:-5}" --export-markdown "${OUT:-/dev/stdout}" \
  -n plain --prepare "sh $base/reset.sh plain" "sh $base/plain.sh" \
  -n parallel --prepare "sh $base/reset.sh parallel" "sh $base/parallel.sh" \
  -n team --prepare "sh $base/reset.sh team" "sh $base/team.sh"

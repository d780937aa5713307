#!/usr/bin/env bash
# scripts/bench/dashboard.sh: what `pagent dashboard` costs with 20 loops listed.
#
# Sets up 20 loops in 20 scratch projects (under a scratch PAGENT_CONFIG_DIR): 14 Ralph
# loops and 6 pipelines, set up as in a Claude Code session, each after a few Stop hooks
# (so they have iterations, feedback and event logs). Starts the dashboard, then asks it
# what an open page asks: GET /api/loops once a second for 60 s (the list), then GET
# /api/loops/<id> once a second for 30 s (a pipeline's own page, whose stages are measured
# on the disk at every request). Reports, from /proc, the dashboard's resident memory
# (now and peak) and its CPU time over each window as a share of one core, idle first
# (no page open, 20 s), and the median and slowest answer of each kind of request.
#
# Usage: scripts/bench/dashboard.sh [--quick]   (--quick: 5 s windows, for CI)
# Environment: PAGENT_BIN=path measures that binary instead of building one. Needs
# python3. Linux only (/proc).
set -euo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)
list_secs=60 page_secs=30 idle_secs=20
[[ ${1:-} == --quick ]] && list_secs=5 page_secs=5 idle_secs=5

if [[ -n ${PAGENT_BIN:-} ]]; then
    bin=$PAGENT_BIN
else
    bin=${CARGO_TARGET_DIR:-$root/target}/release/pagent
    cargo build --release --locked --quiet --manifest-path "$root/Cargo.toml"
fi
unset CLAUDE_PROJECT_DIR CLAUDE_CODE_SESSION_ID PAGENT_DRIVER PAGENT_DASHBOARD_TOKEN

tmp=$(mktemp -d "${TMPDIR:-/tmp}/pagent-dashboard-bench.XXXXXX")
dash=
cleanup() { [[ -z $dash ]] || kill "$dash" 2>/dev/null || true; rm -rf "$tmp"; }
trap cleanup EXIT
export PAGENT_CONFIG_DIR=$tmp/config HOME=$tmp/home NO_COLOR=1
mkdir -p "$HOME"

session=bench-0000-4000-8000-000000000001
stop_input() { # PROJECT MESSAGE
    python3 -c 'import json,sys; print(json.dumps({"session_id": sys.argv[1], "cwd": sys.argv[2],
        "hook_event_name": "Stop", "stop_hook_active": False, "last_assistant_message": sys.argv[3]}))' \
        "$session" "$1" "$2"
}
for i in $(seq -w 1 20); do
    p=$tmp/projects/app-$i
    mkdir -p "$p"
    git -C "$p" init -q
    if ((10#$i % 10 < 3)); then
        printf '# PRD %s\nA todo app.\n' "$i" >"$p/prd.md"
        (cd "$p" && CLAUDE_CODE_SESSION_ID=$session "$bin" run prd.md >/dev/null)
    else
        CLAUDE_CODE_SESSION_ID=$session "$bin" --project "$p" ralph --no-progress-limit 0 \
            --max-cost 5 "Task $i: make the tests in module $i pass" >/dev/null
    fi
    for n in 1 2 3; do
        stop_input "$p" "Not yet ($n)." | CLAUDE_PROJECT_DIR=$p "$bin" hook stop >/dev/null
    done
done
listed=$("$bin" status --all --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[[ $listed == 20 ]] || { echo "dashboard.sh: $listed loops listed, not 20" >&2; exit 1; }

"$bin" dashboard --no-open >"$tmp/dash.out" 2>&1 &
dash=$!
for _ in $(seq 100); do grep -q token= "$tmp/dash.out" 2>/dev/null && break; sleep 0.1; done
url=$(head -n 1 "$tmp/dash.out" | sed 's/^pagent dashboard: //')

python3 - "$dash" "$url" "$idle_secs" "$list_secs" "$page_secs" <<'EOF'
import json, os, statistics, sys, time, urllib.request

pid, url, idle, list_secs, page_secs = sys.argv[1], sys.argv[2], *map(int, sys.argv[3:])
base, token = url.split("/?token=")
tick = os.sysconf("SC_CLK_TCK")

def cpu():  # the process's user + system time, in seconds
    fields = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / tick

def memory():
    status = dict(l.split(":", 1) for l in open(f"/proc/{pid}/status"))
    mib = lambda key: int(status[key].split()[0]) / 1024
    return mib("VmRSS"), mib("VmHWM"), int(status["Threads"])

def get(path):
    request = urllib.request.Request(base + path, headers={"X-Pagent-Token": token})
    started = time.perf_counter()
    body = urllib.request.urlopen(request).read()
    return time.perf_counter() - started, json.loads(body)

def window(secs, path):
    times, c0, t0 = [], cpu(), time.perf_counter()
    while time.perf_counter() - t0 < secs:
        due = t0 + len(times) + 1
        if path:
            times.append(get(path)[0])
        else:
            times.append(0)
        time.sleep(max(0, due - time.perf_counter()))
    share = (cpu() - c0) / (time.perf_counter() - t0)
    return share, times

rows = []
share, _ = window(idle, None)
rows.append(("idle, no page open", f"{idle} s", share, None))
_, loops = get("/api/loops")
assert len(loops["loops"]) == 20, len(loops["loops"])
share, times = window(list_secs, "/api/loops")
rows.append(("the list (`GET /api/loops`, 1/s)", f"{list_secs} s", share, times))
pipeline = next(l for l in loops["loops"] if l["kind"] == "pipeline")
share, times = window(page_secs, f"/api/loops/{pipeline['id']}")
rows.append(("a pipeline's page (`GET /api/loops/<id>`, 1/s)", f"{page_secs} s", share, times))
rss, hwm, threads = memory()

print("| window | length | CPU (share of one core) | answer: median | slowest |")
print("| --- | --- | --- | --- | --- |")
for name, length, share, times in rows:
    med = f"{statistics.median(times) * 1000:.1f} ms" if times else "-"
    top = f"{max(times) * 1000:.1f} ms" if times else "-"
    print(f"| {name} | {length} | {share * 100:.2f}% | {med} | {top} |")
print()
print(f"Memory: {rss:.1f} MiB resident at the end, {hwm:.1f} MiB at most; {threads} threads.")
EOF

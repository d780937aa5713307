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
# Then the hooks beside it (issue 33: the dashboard costs the hooks nothing): 80 more loops
# (100 in all), and the Stop hook of an active loop (it blocks and writes the state the
# page reads) and of a project without a loop, in hyperfine runs with no dashboard
# running and with the dashboard serving two pages that poll as the
# real page does (every loop's list and a pipeline's own page, once a second), alternating
# twice so that the machine's drift falls on both. The figure is the hook's median open
# over its median closed: at most 1.1 (--quick: 1.5 over 2 x 20 runs); a miss fails the
# script.
#
# Usage: scripts/bench/dashboard.sh [--quick]   (--quick: 5 s windows, for CI)
# Environment: PAGENT_BIN=path measures that binary instead of building one. Needs
# python3. Linux only (/proc).
set -euo pipefail

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/../.." && pwd -P)
list_secs=60 page_secs=30 idle_secs=20
[[ ${1:-} == --quick ]] && list_secs=5 page_secs=5 idle_secs=5

. "$root/scripts/bench/binary.sh"
bin=$(bench_binary "$root")
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

# --- the hooks, with the dashboard closed and open (issue 33) -----------------------------
command -v hyperfine >/dev/null || { echo "dashboard.sh: hyperfine is needed for the hooks' part" >&2; exit 1; }
runs=200 bound=1.1
[[ ${1:-} == --quick ]] && runs=20 bound=1.5
for i in $(seq 21 100); do
    p=$tmp/projects/app-$i
    mkdir -p "$p"
    git -C "$p" init -q
    CLAUDE_CODE_SESSION_ID=$session "$bin" --project "$p" ralph --no-progress-limit 0 \
        --max-iterations 1000 "Task $i: make the tests in module $i pass" >/dev/null
    stop_input "$p" "Not yet." | CLAUDE_PROJECT_DIR=$p "$bin" hook stop >/dev/null
done
listed=$("$bin" status --all --json | python3 -c 'import json,sys; print(len(json.load(sys.stdin)))')
[[ $listed == 100 ]] || { echo "dashboard.sh: $listed loops listed, not 100" >&2; exit 1; }
active=$tmp/projects/app-100 plain=$tmp/projects/plain
mkdir -p "$plain" && git -C "$plain" init -q
stop_input "$active" "Not yet." >"$tmp/stop-active.json"
stop_input "$plain" "Done." >"$tmp/stop-plain.json"
hooks() { # NAME: one hyperfine run of both hooks, /bin/true for scale (sh's start-up subtracted)
    hyperfine --runs "$runs" --warmup 3 --style none --export-json "$tmp/$1.json" \
        -n "Stop, active loop" "CLAUDE_PROJECT_DIR=$active $bin hook stop < $tmp/stop-active.json" \
        -n "Stop, no loop" "CLAUDE_PROJECT_DIR=$plain $bin hook stop < $tmp/stop-plain.json" \
        -n "/bin/true" "/bin/true < $tmp/stop-active.json" >/dev/null
}
close_dashboard() {
    [[ -z $poller ]] || kill "$poller" 2>/dev/null || true
    [[ -z $dash ]] || { kill "$dash" 2>/dev/null; wait "$dash" 2>/dev/null || true; }
    poller= dash=
}
open_dashboard() { # the dashboard, and two pages polling as the real page does
    rm -f "$tmp/polling"
    "$bin" dashboard --no-open >"$tmp/dash.out" 2>&1 &
    dash=$!
    for _ in $(seq 100); do grep -q token= "$tmp/dash.out" 2>/dev/null && break; sleep 0.1; done
    url=$(head -n 1 "$tmp/dash.out" | sed 's/^pagent dashboard: //')
    python3 -c '
import json, sys, time, urllib.request
base, token = sys.argv[1].split("/?token=")
def get(path):
    request = urllib.request.Request(base + path, headers={"X-Pagent-Token": token})
    return json.loads(urllib.request.urlopen(request).read())
loops = get("/api/loops")["loops"]
assert len(loops) == 100, len(loops)
pipeline = next(l for l in loops if l["kind"] == "pipeline")
open(sys.argv[2], "w").close()
while True:  # every loop listed, and a pipeline page
    get("/api/loops")
    get("/api/loops/" + pipeline["id"])
    time.sleep(1)
' "$url" "$tmp/polling" &
    poller=$!
    for _ in $(seq 100); do [[ -e $tmp/polling ]] && break; sleep 0.1; done
    [[ -e $tmp/polling ]] && kill -0 "$poller" ||
        { echo "dashboard.sh: the page could not read the dashboard" >&2; exit 1; }
}
poller=
trap 'close_dashboard; rm -rf "$tmp"' EXIT
# Closed and open alternate twice, so that a drift of the machine falls on both.
for round in 1 2; do
    close_dashboard
    hooks "closed-$round"
    open_dashboard
    hooks "open-$round"
done
close_dashboard
python3 -c '
import json, statistics, sys
bound = float(sys.argv[1])
runs = {}
for state in ("closed", "open"):
    for round in ("1", "2"):
        for r in json.load(open("%s/%s-%s.json" % (sys.argv[2], state, round)))["results"]:
            runs.setdefault((state, r["command"]), []).extend(r["times"])
print()
print("| Stop hook, 100 loops listed | dashboard closed | dashboard open, two pages polling | open / closed |")
print("| --- | ---: | ---: | ---: |")
missed = []
for name in ("Stop, active loop", "Stop, no loop", "/bin/true"):
    c = statistics.median(runs[("closed", name)])
    o = statistics.median(runs[("open", name)])
    if name == "/bin/true":
        print("| for scale: /bin/true (sh start-up subtracted) | %.2f ms | %.2f ms | - |" % (c * 1e3, o * 1e3))
        continue
    figure = o / c
    print("| %s | %.2f ms | %.2f ms | %.2fx (goal: at most %gx) |" % (name, c * 1e3, o * 1e3, figure, bound))
    if figure > bound:
        missed.append("%s: %.2fx" % (name, figure))
print()
print("Medians of %d runs each (two rounds, closed and open alternating), hyperfine through sh" % len(runs[("closed", "/bin/true")]))
print("with its start-up subtracted (hyperfine before 1.17 cannot feed stdin without it).")
if missed:
    sys.exit("dashboard.sh: the dashboard slows the hooks: " + ", ".join(missed))
' "$bound" "$tmp"

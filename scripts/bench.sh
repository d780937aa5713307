#!/usr/bin/env bash
# scripts/bench.sh: whole-process timings of `pagent hook stop`, the command Claude Code
# runs every time the model tries to stop, each against /bin/true measured in the same
# hyperfine run (these machines are noisy, so the ratio is the figure to quote).
#
# Cases:
#   1. no state file: a git project without .claude/pagent-pipeline.json;
#   2. an active Ralph loop whose hook blocks, with transcripts of two sizes (1 MB and
#      100 MB; --full adds 1 GB), with `last_assistant_message` in the hook input (the
#      transcript is not read) and without it (the hook reads the transcript backwards);
#   3. a long line: the last message follows an Edit of an 8 MB file, whose result line
#      (the whole original file) the hook must read backwards to its start; no message in
#      the input (--quick: a 1 MB line);
#   4. peak RSS of the hook without `last_assistant_message`, per transcript size.
# For scale it also times an empty Rust `fn main() {}` (the floor for any Rust program) and
# one `git status` of the loop's project.
# Before timing, every configuration is run once and its output checked: the loop cases
# must print a block decision, and the transcript cases must really read the transcript
# (a promise appended to it must end the loop). A failed check exits non-zero.
#
# Usage: scripts/bench.sh [--quick | --full]
#   (default)  1 MB and 100 MB transcripts; 500 timed runs (no state), 200 (loop), 20 (long line)
#   --quick    tiny transcripts, 3 runs, no warmup: CI's check that this script works
#   --full     adds a 1 GB transcript (needs ~2.5 GB free in $TMPDIR)
# Environment: PAGENT_BIN=path benchmarks that binary instead of building one.
# Results: a markdown table on stdout (also target/bench/summary.md) and hyperfine JSON
# exports in target/bench/. Needs python3 (transcript generator, JSON checks); hyperfine
# for timings (--quick runs without it); /usr/bin/time for peak RSS (skipped without it).

set -euo pipefail

usage() { sed -n '2,/^$/s/^# \{0,1\}//p' "${BASH_SOURCE[0]}"; }

mode=default
for arg in "$@"; do
    case $arg in
        --quick) mode=quick ;;
        --full) mode=full ;;
        -h | --help) usage; exit 0 ;;
        *) echo "bench.sh: unknown argument: $arg" >&2; usage >&2; exit 1 ;;
    esac
done

root=$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)
out_dir=$root/target/bench
gen=$root/scripts/gen-transcript.py
session=bench-0000-4000-8000-000000000001

# Whatever Claude Code or `pagent loop` set around us must not leak into the hook.
unset CLAUDE_PROJECT_DIR CLAUDE_CODE_SESSION_ID PAGENT_DRIVER PAGENT_CONFIG_DIR

die() { echo "bench.sh: $*" >&2; exit 1; }
note() { echo "bench.sh: $*" >&2; }

command -v python3 >/dev/null || die "python3 is needed (transcript generator, JSON checks)"
have_hyperfine=false
command -v hyperfine >/dev/null && have_hyperfine=true
[[ $have_hyperfine == true || $mode == quick ]] || die "hyperfine is needed for timings"
# hyperfine >= 1.17 feeds stdin from a file with --input, so no shell is needed. Older ones
# run `sh -c 'CMD < FILE'` and subtract the time sh takes to start, measured before.
have_input=false
[[ $have_hyperfine == true ]] && hyperfine --help 2>/dev/null | grep -q -- '--input' && have_input=true
have_time=false
[[ -x /usr/bin/time ]] && have_time=true

# Transcript sizes; timed runs and warmups for the no-state, loop and long-line cases; the
# long line's length.
case $mode in
    quick) sizes=(32K 256K) nostate=(3 0) loop=(3 0) long=(3 0) long_line=1M ;;
    default) sizes=(1M 100M) nostate=(500 50) loop=(200 20) long=(20 2) long_line=8M ;;
    full) sizes=(1M 100M 1G) nostate=(500 50) loop=(200 20) long=(20 2) long_line=8M ;;
esac

# --- the binary ----------------------------------------------------------------------
if [[ -n ${PAGENT_BIN:-} ]]; then
    bin=$PAGENT_BIN
else
    bin=${CARGO_TARGET_DIR:-$root/target}/release/pagent
    # A no-op when the binary is up to date; never benchmark a stale build.
    note "cargo build --release --locked"
    cargo build --release --locked --quiet --manifest-path "$root/Cargo.toml"
fi
[[ -x $bin ]] || die "no binary at $bin"

# --- scratch space -------------------------------------------------------------------
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pagent-bench.XXXXXX")
trap 'rm -rf -- "$tmp"' EXIT
mkdir -p "$out_dir"
rm -f "$out_dir"/*.json "$out_dir/summary.md"

if [[ $mode == full ]]; then
    free_kb=$(df -Pk "$tmp" | awk 'NR == 2 { print $4 }')
    ((free_kb > 2500000)) || die "--full needs ~2.5 GB free in $tmp (have ${free_kb} KiB)"
fi

# sh-quote a word (hyperfine runs commands through sh).
q() { printf '%q' "$1"; }

make_project() { # DIR: a small git project with committed and uncommitted changes
    local dir=$1
    [[ $dir == "$tmp"/* ]] || die "make_project: $dir is not inside $tmp"
    mkdir -p "$dir/src" "$dir/tests"
    python3 - "$dir/src" <<'EOF'
import sys
for i in range(1, 31):
    with open("%s/mod%d.rs" % (sys.argv[1], i), "w") as f:
        for n in range(60):
            f.write("pub fn f%d_%d(x: u32) -> u32 { x.wrapping_mul(%d) }\n" % (n, i, n))
EOF
    printf '[package]\nname = "demo"\nversion = "0.1.0"\nedition = "2021"\n' >"$dir/Cargo.toml"
    printf '# demo\n' >"$dir/README.md"
    git -C "$dir" -c init.defaultBranch=main init -q
    git -C "$dir" add -A
    git -C "$dir" -c user.name=bench -c user.email=bench@localhost commit -qm init
    echo "// edited" >>"$dir/src/mod1.rs"
    echo "// edited" >>"$dir/src/mod2.rs"
    echo "#[test] fn t() {}" >"$dir/tests/new.rs"
}

hook_input() { # OUT PROJECT TRANSCRIPT [LAST_MESSAGE]: Claude Code's Stop hook input
    python3 - "$session" "$@" <<'EOF'
import json, sys
session, out, cwd, transcript = sys.argv[1:5]
hook = {"session_id": session, "transcript_path": transcript,
        "cwd": cwd, "prompt_id": "bench-prompt", "permission_mode": "bypassPermissions",
        "effort": {"level": "high"}, "hook_event_name": "Stop", "stop_hook_active": True}
if len(sys.argv) > 5:
    hook["last_assistant_message"] = sys.argv[5]
hook["background_tasks"] = []
hook["session_crons"] = []
with open(out, "w") as f:
    json.dump(hook, f, ensure_ascii=False, separators=(",", ":"))
EOF
}

# --- case 1: no state file -----------------------------------------------------------
plain=$tmp/plain
make_project "$plain"
hook_input "$tmp/stop-plain.json" "$plain" "$tmp/none.jsonl" "Done for now."

# --- case 2: an active Ralph loop ------------------------------------------------------
proj=$tmp/loop
cfg=$tmp/cfg
make_project "$proj"
CLAUDE_CODE_SESSION_ID=$session PAGENT_CONFIG_DIR=$cfg \
    "$bin" --project "$proj" ralph --max-iterations 1000 --no-progress-limit 0 \
    --promise DONE "Fix the bug" >/dev/null || die "pagent ralph could not start a loop"
state=$proj/.claude/pagent-pipeline.json
saved=$tmp/saved-state.json
cp "$state" "$saved"
restore="cp $(q "$saved") $(q "$state")"

mkdir -p "$tmp/transcripts" # outside the project, as Claude Code keeps them
declare -A transcript
for size in "${sizes[@]}"; do
    transcript[$size]=$tmp/transcripts/$size.jsonl
    note "generating a $size transcript"
    python3 "$gen" "${transcript[$size]}" "$size" --session "$session" --cwd "$proj"
done
long_transcript=$tmp/transcripts/long-line.jsonl
note "generating a ${sizes[0]} transcript whose last tool result line is $long_line"
python3 "$gen" "$long_transcript" "${sizes[0]}" --tail-line "$long_line" \
    --session "$session" --cwd "$proj"
# Let the kernel write the new transcripts back now: left dirty, they are flushed during the
# timings (the hook's fsync waits for them on ext4), which buries the figures in noise.
sync

run_hook() { # PROJECT INPUT: run the hook once, stdout to stdout
    CLAUDE_PROJECT_DIR=$1 PAGENT_CONFIG_DIR=$cfg "$bin" hook stop <"$2"
}

is_block() { # reads hook stdout; true for a block decision
    python3 -c 'import json, sys
sys.exit(json.loads(sys.stdin.read() or "{}").get("decision") != "block")'
}

state_status() { # the loop's status in the state file
    python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["status"])' "$state"
}

# The last message of a finished task, appended to a transcript by the checks below.
done_line='{"parentUuid":null,"isSidechain":false,"message":{"id":"msg_bench_done",'
done_line+='"type":"message","role":"assistant","content":[{"type":"text",'
done_line+='"text":"All fixed. <promise>DONE</promise>"}]},"type":"assistant","uuid":"bench-done"}'

# --- checks: each configuration does what it is meant to, before any timing ---------------
out=$(run_hook "$plain" "$tmp/stop-plain.json") || die "no-state hook failed"
[[ -z $out ]] || die "no-state hook printed something: $out"
[[ ! -e $plain/.claude ]] || die "no-state hook wrote into the project"

for size in "${sizes[@]}"; do
    t=${transcript[$size]}
    hook_input "$tmp/stop-$size-msg.json" "$proj" "$t" "Iteration 9: still failing, not done."
    hook_input "$tmp/stop-$size-nomsg.json" "$proj" "$t"
    for kind in msg nomsg; do
        cp "$saved" "$state"
        out=$(run_hook "$proj" "$tmp/stop-$size-$kind.json") || die "$size/$kind: the hook failed"
        is_block <<<"$out" || die "$size/$kind: expected a block decision, got: $out"
    done
    # Without last_assistant_message the answer must come from the transcript: a promise
    # appended to it ends the loop. Then the transcript is put back as it was.
    bytes=$(stat -c %s "$t")
    printf '%s\n' "$done_line" >>"$t"
    cp "$saved" "$state"
    out=$(run_hook "$proj" "$tmp/stop-$size-nomsg.json") ||
        die "$size: the hook failed on a finished transcript"
    if is_block <<<"$out" || [[ $(state_status) != complete ]]; then
        die "$size: the hook did not see the promise at the end of the transcript: $out"
    fi
    truncate -s "$bytes" "$t"
done
hook_input "$tmp/stop-long.json" "$proj" "$long_transcript"
cp "$saved" "$state"
out=$(run_hook "$proj" "$tmp/stop-long.json") || die "long line: the hook failed"
is_block <<<"$out" || die "long line: expected a block decision, got: $out"
cp "$saved" "$state"
note "checks passed: no-state allows silently; every loop configuration blocks"

# --- timings -----------------------------------------------------------------------------
# The floor for any Rust program: an empty `fn main() {}` built like the release binary.
floor=
if command -v rustc >/dev/null; then
    echo 'fn main() {}' >"$tmp/empty.rs"
    rustc -C opt-level=3 -C strip=symbols -o "$tmp/empty" "$tmp/empty.rs" && floor=$tmp/empty
fi

rows=() # name|hyperfine json
events=$proj/.claude/pagent/events.jsonl
blocks() { grep -c '"action":"block"' "$events" 2>/dev/null || true; }

bench() { # NAME RUNS WARMUP PROJECT INPUT PREPARE(may be empty) [-N]
    local name=$1 n=$2 w=$3 project=$4 input=$5 prepare=$6 noshell=${7:-}
    local json=$out_dir/$name.json before expected
    before=$(blocks)
    sync
    if [[ $have_hyperfine == true ]]; then
        expected=$((n + w))
        local args=(--runs "$n" --warmup "$w" --export-json "$json" --style basic)
        [[ -n $prepare ]] && args+=(--prepare "$prepare")
        if [[ $noshell == -N ]]; then
            # No shell, stdin is /dev/null: valid only where the hook never reads stdin.
            args+=(-N -n "pagent hook stop" -n "/bin/true" "$(q "$bin") hook stop" "/bin/true")
            [[ -z $floor ]] || args+=(-n "Rust fn main() {}" "$(q "$floor")")
        elif [[ $have_input == true ]]; then
            args+=(-N --input "$input"
                -n "pagent hook stop" -n "/bin/true" "$(q "$bin") hook stop" "/bin/true")
        else
            args+=(--shell sh
                -n "pagent hook stop" -n "/bin/true"
                "$(q "$bin") hook stop < $(q "$input")"
                "/bin/true < $(q "$input")")
        fi
        # hyperfine fails if any run exits non-zero.
        CLAUDE_PROJECT_DIR=$project PAGENT_CONFIG_DIR=$cfg hyperfine "${args[@]}" >&2
    else
        local i out
        expected=3
        for i in 1 2 3; do
            [[ -z $prepare ]] || sh -c "$prepare"
            out=$(run_hook "$project" "$input") || die "$name: the hook failed"
            if [[ $project == "$plain" ]]; then
                [[ -z $out ]] || die "$name: the no-state hook printed: $out"
            else
                is_block <<<"$out" || die "$name: expected a block decision, got: $out"
            fi
        done
    fi
    # Every timed loop run must have blocked: each block is one line in the event log.
    if [[ $project == "$proj" ]] && (($(blocks) - before != expected)); then
        die "$name: $expected runs but $(($(blocks) - before)) block events in $events"
    fi
    rows+=("$name|$json")
}

bench no-state "${nostate[@]}" "$plain" "$tmp/stop-plain.json" ""
bench no-state-noshell "${nostate[@]}" "$plain" "$tmp/stop-plain.json" "" -N
for size in "${sizes[@]}"; do
    bench "loop-$size-msg" "${loop[@]}" "$proj" "$tmp/stop-$size-msg.json" "$restore"
    bench "loop-$size-transcript" "${loop[@]}" "$proj" "$tmp/stop-$size-nomsg.json" "$restore"
done
bench long-line "${long[@]}" "$proj" "$tmp/stop-long.json" "$restore"
# For scale: the block decision above includes a fingerprint of the working tree (libgit2,
# in-process); here is what one `git status` of the same project costs.
if [[ $have_hyperfine == true ]]; then
    sync
    hyperfine -N --runs "${loop[0]}" --warmup "${loop[1]}" --export-json "$out_dir/git-status.json" \
        --style basic -n "git status --porcelain" -n "/bin/true" \
        "git -C $(q "$proj") status --porcelain" "/bin/true" >&2
    rows+=("git-status|$out_dir/git-status.json")
fi

# --- peak RSS -------------------------------------------------------------------------------
rss_rows=() # label|KiB
max_rss() { # LABEL PROJECT INPUT RESTORE(yes|no) COMMAND...: median of 5 runs, in KiB
    local label=$1 project=$2 input=$3 restore_state=$4 i all=()
    shift 4
    for i in 1 2 3 4 5; do
        [[ $restore_state == no ]] || cp "$saved" "$state"
        CLAUDE_PROJECT_DIR=$project PAGENT_CONFIG_DIR=$cfg \
            /usr/bin/time -v -o "$tmp/time.txt" "$@" <"$input" >/dev/null \
            || die "$label: failed under /usr/bin/time"
        all+=("$(awk -F': ' '/Maximum resident set size/ { print $2 }' "$tmp/time.txt")")
    done
    rss_rows+=("$label|$(printf '%s\n' "${all[@]}" | sort -n | sed -n 3p)")
}
if [[ $have_time == true ]]; then
    max_rss "/bin/true" "$plain" "$tmp/stop-plain.json" no /bin/true
    max_rss "no state file" "$plain" "$tmp/stop-plain.json" no "$bin" hook stop
    for size in "${sizes[@]}"; do
        max_rss "loop, $size transcript, with last_assistant_message" \
            "$proj" "$tmp/stop-$size-msg.json" yes "$bin" hook stop
        max_rss "loop, $size transcript, read from the transcript" \
            "$proj" "$tmp/stop-$size-nomsg.json" yes "$bin" hook stop
    done
    max_rss "loop, ${sizes[0]} transcript, last tool result line $long_line, read from the transcript" \
        "$proj" "$tmp/stop-long.json" yes "$bin" hook stop
    cp "$saved" "$state"
else
    note "/usr/bin/time not found: peak RSS skipped"
fi

# --- the report -------------------------------------------------------------------------------
{
    built=$bin
    if [[ -z ${PAGENT_BIN:-} ]] && commit=$(git -C "$root" rev-parse --short HEAD 2>/dev/null); then
        git -C "$root" diff --quiet HEAD 2>/dev/null || commit="$commit plus uncommitted changes"
        built="the release build of $commit"
    fi
    echo "pagent $("$bin" --version 2>/dev/null | awk '{ print $NF }') ($built), mode: $mode," \
        "$(nproc) CPUs, $(hyperfine --version 2>/dev/null || echo 'no hyperfine')"
    for size in "${sizes[@]}"; do
        printf '%s transcript: %s bytes, %s lines\n' "$size" \
            "$(stat -c %s "${transcript[$size]}")" "$(wc -l <"${transcript[$size]}")"
    done
    echo
    how=$([[ $have_input == true ]] && echo "hyperfine -N --input FILE" ||
        echo "sh -c 'CMD < FILE' with sh's start-up subtracted (hyperfine before 1.17 has no --input)")
    python3 - "$how" "${sizes[0]} transcript, last tool result line $long_line" "${rows[@]}" <<'EOF'
import json, os, sys
print("Hook input on stdin: %s." % sys.argv[1])
print("Medians; ratio and difference against /bin/true measured in the same hyperfine run.")
if "sh -c" in sys.argv[1]:
    print("Through sh, the ratio leans on hyperfine's estimate of sh's start-up (noisy);")
    print("the difference does not.")
print()
labels = {
    "no-state": "no state file",
    "no-state-noshell": "no state file (-N, stdin /dev/null)",
    "git-status": "for scale: `git status --porcelain` of the loop's project (-N)",
    "long-line": "loop blocks, %s, read from the transcript" % sys.argv[2],
}
print("| case | median | /bin/true | ratio | difference | runs |")
print("|---|---:|---:|---:|---:|---:|")
for row in sys.argv[3:]:
    name, path = row.split("|")
    label = labels.get(name)
    if label is None:
        _, size, kind = name.split("-", 2)
        how = "with last_assistant_message" if kind == "msg" else "read from the transcript"
        label = "loop blocks, %s transcript, %s" % (size, how)
    if not os.path.exists(path):
        print("| %s | ok | - | - | - | 3 |" % label)
        continue
    results = json.load(open(path))["results"]
    true = next(r for r in results if r["command"] == "/bin/true")
    for r in results:
        if r is true:
            continue
        what = label if r is results[0] else "%s (-N)" % r["command"]
        # A median at or below zero means the shell start-up correction swallowed it:
        # the machine was too noisy during the calibration.
        ratio = "%.2fx" % (r["median"] / true["median"]) if true["median"] > 0 else "n/a (noise)"
        print("| %s | %.2f ms | %.2f ms | %s | %+.2f ms | %d |" % (
            what, r["median"] * 1e3, true["median"] * 1e3, ratio,
            (r["median"] - true["median"]) * 1e3, len(r["times"])))
EOF
    if ((${#rss_rows[@]})); then
        echo
        echo "| peak RSS | median of 5 |"
        echo "|---|---:|"
        for row in "${rss_rows[@]}"; do
            printf '| %s | %s KiB |\n' "${row%|*}" "${row##*|}"
        done
    fi
} | tee "$out_dir/summary.md"

# Memory must not grow with the transcript: warn (the numbers are in the table).
if ((${#rss_rows[@]})); then
    first=$(printf '%s\n' "${rss_rows[@]}" | awk -F'|' '/ transcript, read from/ { print $2; exit }')
    last=$(printf '%s\n' "${rss_rows[@]}" | awk -F'|' '/ transcript, read from/ { v = $2 } END { print v }')
    if ((last > first + 2048)); then
        note "warning: peak RSS grows with the transcript (${first} KiB -> ${last} KiB)"
    fi
fi
[[ $have_hyperfine == false ]] || note "hyperfine exports in $out_dir"

#!/usr/bin/env bash
# scripts/bench.sh: whole-process timings of pagent's hooks and of `pagent loop`, each
# against a baseline measured in the same hyperfine run (these machines are noisy, so the
# ratio is the figure to quote).
#
# Stop hook (`pagent hook stop`, run every time the model tries to stop), vs /bin/true:
#   1. no state file: a git project without .claude/pagent-pipeline.json;
#   2. an active Ralph loop whose hook blocks, with transcripts of two sizes (1 MB and
#      100 MB; --full adds 1 GB), with `last_assistant_message` in the hook input (the
#      transcript is not read) and without it (the hook reads the transcript backwards);
#   3. a long line: the last message follows an Edit of an 8 MB file, whose result line
#      (the whole original file) the hook must read backwards to its start; no message in
#      the input (--quick: a 1 MB line);
# PostToolUse hook (`pagent hook post-tool-use`, run after every tool call), vs /bin/true:
#   4. no state file (and no user config): a captured Write payload on stdin;
#   5. a JSON check of a 1 MB file in an active Ralph loop owned by the payload's session:
#      a valid file, the same file with a syntax error at its end, and for scale the valid
#      one named by a payload that does not carry its contents (--quick: 16 KB);
# `pagent loop`:
#   6. per iteration: a fake agent (sh script) that answers at once, the loop finishing at
#      iteration 1 and at iteration 11 (--quick: 3); the difference over 10 iterations,
#      against the fake agent run alone; and the 11-iteration loop with --sandbox against
#      the same loop uncontained (not in --quick; needs bwrap);
# A repository of 20,000 committed files, 100 of them modified (--quick: 2,000 and 20, so
#    that the Stop's fixed cost does not hide the fingerprint's):
#   7. a pipeline stage whose exit condition is {"all": [{"file_exists": "architecture.md",
#      "min_lines": 50}, {"directory_exists": "src", "min_files": 3}]}, unmet: the Stop
#      hook counts src/ and blocks; vs /bin/true and `git status --porcelain`;
#   8. an active Ralph loop: the Stop hook blocks, computing the working-tree fingerprint;
#      vs `git status --porcelain` and /bin/true;
# 9. peak RSS of the hooks, per transcript size and for the cases above;
# 10. the hooks as Claude Code runs them: hooks/hooks.json's exec form (`command` plus
#     `args`, no shell: the launcher scripts/pagent, which execs the binary) for an
#     installed plugin (the binary in $CLAUDE_PLUGIN_DATA/bin, no target/ beside it), beside
#     the shell form hooks.json had before issue 20 (`sh -c` of a line that execs the
#     installed binary itself), `sh -c` of the bare binary, the binary alone and /bin/true,
#     in the same hyperfine run: Stop with no state file, Stop in an active loop (the larger
#     transcript, message given), PostToolUse idle.
# 11. a night's disk (issue 33): the soak test tests/integration/soak.rs, `pagent loop
#     --command` with an agent that prints 1 MB a run under a 24 MiB log cap; it asserts
#     the runs folder under the cap, resident memory flat and the last 100 iterations'
#     overhead within noise of the first 100, and prints the figures (default: 300
#     iterations, about 2 min; --full: the issue's 2,000; --quick skips it: CI runs it with
#     300 in `cargo test`). It runs the debug build, as the test suite does.
# For scale it also times an empty Rust `fn main() {}` (the floor for any Rust program) and
# one `git status` of the loop's project.
# Before timing, each configuration is run once and refused if it does not behave, by a
# one-line sanity check (a loop's Stop blocks, an idle hook prints nothing and writes
# nothing, the broken JSON file is reported, `pagent loop` succeeds); what each
# configuration does is proven by the integration tests (tests/integration/benchmarked.rs
# and the tests it names). After timing, the event logs must hold one event per run. A
# failed check exits non-zero.
#
# Usage: scripts/bench.sh [--quick | --full]
#   (default)  1 MB and 100 MB transcripts, 20,000 files (about 1 min after the build)
#   --quick    small inputs (a 48 MB transcript), 20-30 runs: CI's check that this script
#              works and that each goal row (issue 33) holds within a generous bound (~40 s)
#   --full     adds a 1 GB transcript (needs ~2.5 GB free in $TMPDIR; about 1.5 min)
# The binary: the one a release ships to this machine (static on Linux, built as
# scripts/bench/binary.sh says). Environment: PAGENT_BIN=path benchmarks that binary
# instead of building one. Scratch
# files go to $TMPDIR (else /tmp): the projects live there, so that is the file system
# measured.
# Results: a markdown table on stdout (also target/bench/summary.md) and hyperfine JSON
# exports in target/bench/. Needs python3 (generators, JSON checks) and git; hyperfine
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
unset CLAUDE_PROJECT_DIR CLAUDE_CODE_SESSION_ID PAGENT_DRIVER PAGENT_CONFIG_DIR \
    CLAUDE_PLUGIN_DATA CLAUDE_PLUGIN_ROOT PAGENT_LAUNCHER_SEEN

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
# long line's length; the JSON file's size and its runs; the iterations of the long
# `pagent loop` run and its runs; the large repository's files, how many are modified, and
# its runs.
case $mode in
    quick)
        sizes=(32K 48M) nostate=(30 3) loop=(20 2) long=(3 0) long_line=1M
        json_size=16K post=(3 0) iterations=3 loops=(3 0) files=2000 modified=20 big=(10 1)
        ;;
    default | full)
        sizes=(1M 100M) nostate=(500 50) loop=(200 20) long=(20 2) long_line=8M
        json_size=1M post=(200 20) iterations=11 loops=(60 5) files=20000 modified=100 big=(40 4)
        [[ $mode == default ]] || sizes+=(1G)
        ;;
esac
command -v git >/dev/null || die "git is needed (test projects)"

# --- the binary ----------------------------------------------------------------------
. "$root/scripts/bench/binary.sh"
bin=$(bench_binary "$root")
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
    # Committed files older than their index, as in a user's repository (gen-repo.py does
    # the same). Files written in the second their index was ("racily clean", as git
    # says) are read and hashed again by every git status and every fingerprint until git
    # rewrites the index: a project made and committed at once would time that race.
    find "$dir" -type f -exec python3 -c 'import os, sys, time
t = time.time() - 60
for path in sys.argv[1:]:
    os.utime(path, (t, t))' {} +
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

post_tool_input() { # OUT PROJECT TOOL FILE [bare]: Claude Code's PostToolUse hook input
    # As Claude Code 2.1.197 sends it (tests/fixtures/claude-code-2.1.197/): a Write
    # carries the file's contents twice (tool_input.content and tool_response.content).
    # "bare" leaves the contents out: a synthetic payload, to see what parsing them costs.
    python3 - "$session" "$@" <<'EOF'
import json, sys
session, out, cwd, tool, path = sys.argv[1:6]
bare = sys.argv[6:] == ["bare"]
content = "" if bare else open(path, encoding="utf-8").read()
if tool == "Write":
    tool_input = {"file_path": path, "content": content}
    response = {"type": "create", "filePath": path, "content": content,
                "structuredPatch": [], "originalFile": None, "userModified": False}
    if bare:
        del tool_input["content"], response["content"]
else:
    sys.exit("post_tool_input: unknown tool " + tool)
hook = {"session_id": session, "transcript_path": cwd + ".jsonl", "cwd": cwd,
        "prompt_id": "bench-prompt", "permission_mode": "bypassPermissions",
        "effort": {"level": "high"}, "hook_event_name": "PostToolUse", "tool_name": tool,
        "tool_input": tool_input, "tool_response": response,
        "tool_use_id": "toolu_bench_000000000000000001", "duration_ms": 8}
with open(out, "w") as f:
    json.dump(hook, f, ensure_ascii=False, separators=(",", ":"))
EOF
}

started=$SECONDS

# --- Stop, case 1: no state file -------------------------------------------------------
plain=$tmp/plain
make_project "$plain"
hook_input "$tmp/stop-plain.json" "$plain" "$tmp/none.jsonl" "Done for now."

# --- Stop, case 2: an active Ralph loop --------------------------------------------------
proj=$tmp/loop
cfg=$tmp/cfg
make_project "$proj"
CLAUDE_CODE_SESSION_ID=$session PAGENT_CONFIG_DIR=$cfg \
    "$bin" --project "$proj" ralph --max-iterations 1000 --no-progress-limit 0 \
    --promise DONE "Fix the bug" >/dev/null || die "pagent ralph could not start a loop"
state=$proj/.claude/pagent-pipeline.json
saved=$tmp/saved-state.json
cp "$state" "$saved"
# Copying an older state back is a rollback, which pagent refuses (it remembers the newest
# generation in the user's config folder, the marker projects/KEY/newest, a symlink whose
# target is the number): put that record back to the saved state's generation too, as a
# user's folder holds it before that Stop. (Deleting the record instead, as this script
# once did, had every timed Stop create the folders a set-up had already made, and replace
# no record.) The record must exist: a KEY computed wrongly fails the run rather than time
# a different Stop.
restore_cmd() { # SAVED STATE: the shell command that puts both back
    local root key generation
    root=$(cd "$(dirname "$2")/.." && pwd -P)
    key=$(printf %s "$root" | sha256sum | cut -c1-32)
    generation=$(grep -o '"generation": *[0-9]*' "$1" | grep -o '[0-9]*$')
    [[ -n $generation ]] || die "no generation in $1"
    [[ -L $cfg/projects/$key/newest ]] || die "no generation recorded for $root in $cfg"
    printf 'cp %s %s && ln -sfn %s %s' "$(q "$1")" "$(q "$2")" "$generation" \
        "$(q "$cfg/projects/$key/newest")"
}
restore_state() {
    local cmd
    cmd=$(restore_cmd "$1" "$2") || exit 1
    eval "$cmd" || die "cannot restore $2"
}
restore=$(restore_cmd "$saved" "$state") || exit 1

mkdir -p "$tmp/transcripts" # outside the project, as Claude Code keeps them
declare -A transcript
# The message the Stop ends on: the last line of every transcript (a turn after the loop
# began), as Claude Code writes it before it runs the Stop hook.
last_message="Iteration 9: still failing, not done."
for size in "${sizes[@]}"; do
    transcript[$size]=$tmp/transcripts/$size.jsonl
    note "generating a $size transcript"
    python3 "$gen" "${transcript[$size]}" "$size" --session "$session" --cwd "$proj" \
        --loop-turn "$last_message"
done
long_transcript=$tmp/transcripts/long-line.jsonl
note "generating a ${sizes[0]} transcript whose last tool result line is $long_line"
python3 "$gen" "$long_transcript" "${sizes[0]}" --tail-line "$long_line" \
    --session "$session" --cwd "$proj"

# --- PostToolUse, case 4: no state file, no user config ------------------------------------
empty_cfg=$tmp/cfg-empty # PAGENT_CONFIG_DIR without config.json (nor anything else)
mkdir -p "$empty_cfg"
printf 'hello world\n' >"$plain/hello.txt"
post_tool_input "$tmp/post-plain.json" "$plain" Write "$plain/hello.txt"

# --- PostToolUse, case 5: a JSON check in a loop the payload's session owns ----------------
edit=$tmp/edit
make_project "$edit"
CLAUDE_CODE_SESSION_ID=$session PAGENT_CONFIG_DIR=$cfg \
    "$bin" --project "$edit" ralph --max-iterations 1000 "Fix the data" >/dev/null ||
    die "pagent ralph could not start a loop in $edit"
note "generating a $json_size JSON file, and one with a syntax error at its end"
python3 "$root/scripts/bench/gen-json.py" "$edit/data.json" "$json_size"
python3 "$root/scripts/bench/gen-json.py" "$edit/broken.json" "$json_size" --broken
post_tool_input "$tmp/post-json.json" "$edit" Write "$edit/data.json"
post_tool_input "$tmp/post-broken.json" "$edit" Write "$edit/broken.json"
post_tool_input "$tmp/post-bare.json" "$edit" Write "$edit/data.json" bare

# --- case 10: the launcher of an installed plugin ---------------------------------------------
# hooks.json runs "${CLAUDE_PLUGIN_ROOT}/scripts/pagent" hook ...; scripts/install.sh puts the
# binary in the plugin's data folder. PAGENT_BIN is emptied for these runs.
launcher=$tmp/plugin/scripts/pagent
mkdir -p "${launcher%/*}" "$tmp/plugin-data/bin"
cp "$root/scripts/pagent" "$launcher"
cp "$bin" "$tmp/plugin-data/bin/pagent"
# What Claude Code runs for a hook in exec form (`"command"` and `"args"`): the program with
# its arguments, no shell, ${CLAUDE_PLUGIN_ROOT} substituted in each (the research notes,
# docs/claude-code.md), with CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA in the environment.
hook_command() { # HOOK [ROOT]: hooks.json's exec form for that hook, as shell words
    python3 -c 'import json, shlex, sys
hooks = json.load(open(sys.argv[1]))["hooks"]
event = {"stop": "Stop", "post-tool-use": "PostToolUse"}[sys.argv[2]]
hook = hooks[event][0]["hooks"][0]
words = [hook["command"]] + hook.get("args", [])
print(" ".join(shlex.quote(w.replace("${CLAUDE_PLUGIN_ROOT}", sys.argv[3])) for w in words))' \
        "$root/hooks/hooks.json" "$1" "${2:-$tmp/plugin}"
}
# `pagent install` (and the npm package's postinstall-free route) stage the binary itself
# as the plugin's scripts/pagent (issue 33): the exec form then starts pagent, no shell.
staged=$tmp/staged
mkdir -p "$staged/scripts"
cp "$bin" "$staged/scripts/pagent"
# The shell form hooks.json had before issue 20, run by Claude Code as `/bin/sh -c LINE`.
shell_form() { # HOOK
    printf '%s' "p=\"\$CLAUDE_PLUGIN_DATA/bin/pagent\"; if [ -z \"\${PAGENT_BIN:-}\" ] && [ -n \"\${CLAUDE_PLUGIN_DATA:-}\" ] && [ ! -e \"\${CLAUDE_PLUGIN_ROOT}/target\" ] && [ -f \"\$p\" ] && [ -x \"\$p\" ]; then exec \"\$p\" hook $1; fi; exec \"\${CLAUDE_PLUGIN_ROOT}/scripts/pagent\" hook $1"
}
plugin_env=(CLAUDE_PLUGIN_ROOT="$tmp/plugin" CLAUDE_PLUGIN_DATA="$tmp/plugin-data" PAGENT_BIN=)
through_launcher() { # HOOK PROJECT CONFIG INPUT: the hook once, as Claude Code runs it
    env "${plugin_env[@]}" CLAUDE_PROJECT_DIR="$2" PAGENT_CONFIG_DIR="$3" \
        sh -c "exec $(hook_command "$1")" <"$4"
}

# --- `pagent loop`, case 6: a fake agent that answers at once -----------------------------
runner=$tmp/runner
make_project "$runner"
# done-at-N.sh makes the promise at iteration N (PAGENT_ITERATION is set by pagent loop).
for n in 1 "$iterations"; do
    cat >"$tmp/done-at-$n.sh" <<EOF
#!/bin/sh
# A fake agent: reads its prompt, answers at once, makes the promise at iteration $n.
cat >/dev/null
if [ "\${PAGENT_ITERATION:-0}" -ge $n ]; then echo '<promise>DONE</promise>'; else echo 'Not done yet.'; fi
EOF
done
printf 'Fix the bug\n' >"$tmp/prompt.txt"
loop_cmd() { # N: the `pagent loop` command line whose agent promises at iteration N (sh words)
    printf "%s --project %s loop --quiet --command %s ralph --max-iterations %d --no-progress-limit 0 %s" \
        "$(q "$bin")" "$(q "$runner")" "$(q "sh $tmp/done-at-$1.sh")" $(($1 + 10)) "$(q "Fix the bug")"
}

# --- a large repository, cases 7 and 8 ---------------------------------------------------------
big_repo=$tmp/big
note "generating a git repository of $files files, $modified of them then modified"
big_started=$SECONDS
python3 "$root/scripts/bench/gen-repo.py" create "$big_repo" "$files"
python3 "$root/scripts/bench/gen-repo.py" modify "$big_repo" "$modified"
big_seconds=$((SECONDS - big_started))
printf '# PRD\n\nBuild the thing.\n' >"$big_repo/prd.md"
for i in $(seq 10); do echo "Architecture, line $i."; done >"$big_repo/architecture.md"
cat >"$tmp/workflow.json" <<'EOF'
{"name": "bench", "description": "one stage: an architecture and the code",
 "stages": [{"name": "build",
   "prompt": "Write architecture.md (at least 50 lines), then the code under src/.",
   "exit_when": {"all": [{"file_exists": "architecture.md", "min_lines": 50},
                         {"directory_exists": "src", "min_files": 3}]}}]}
EOF
# Both loops are set up in the same project, one after the other (--force); each case's
# --prepare copies its own saved state back.
CLAUDE_CODE_SESSION_ID=$session PAGENT_CONFIG_DIR=$cfg \
    "$bin" --project "$big_repo" run --workflow "$tmp/workflow.json" --max-iterations 1000 \
    prd.md >/dev/null || die "pagent run could not start a pipeline in $big_repo"
big_state=$big_repo/.claude/pagent-pipeline.json
cp "$big_state" "$tmp/saved-pipeline.json"
CLAUDE_CODE_SESSION_ID=$session PAGENT_CONFIG_DIR=$cfg \
    "$bin" --project "$big_repo" ralph --force --max-iterations 1000 "Fix the bug" >/dev/null ||
    die "pagent ralph could not start a loop in $big_repo"
cp "$big_state" "$tmp/saved-ralph.json"
python3 "$gen" "$tmp/transcripts/big.jsonl" 16K --session "$session" --cwd "$big_repo" \
    --loop-turn "Still working on it."
hook_input "$tmp/stop-big.json" "$big_repo" "$tmp/transcripts/big.jsonl" "Still working on it."
git -C "$big_repo" status --porcelain >/dev/null # as a user's repository would be: git has looked

# Let the kernel write the new files back now: left dirty, they are flushed during the
# timings (the hook's fsync waits for them on ext4), which buries the figures in noise.
sync

run_hook() { # PROJECT INPUT: run the hook once, stdout to stdout
    CLAUDE_PROJECT_DIR=$1 PAGENT_CONFIG_DIR=$cfg "$bin" hook stop <"$2"
}

is_block() { # reads hook stdout; true for a re-prompt (additionalContext, or a block decision)
    python3 -c 'import json, sys
out = json.loads(sys.stdin.read() or "{}")
context = out.get("hookSpecificOutput", {}).get("additionalContext")
sys.exit(out.get("decision") != "block" and not context)'
}

count_events() { # PROJECT ACTION: lines with that action in the project's event log
    grep -c "\"action\":\"$2\"" "$1/.claude/pagent/events.jsonl" 2>/dev/null || true
}

run_post() { # PROJECT CONFIG_DIR INPUT: the PostToolUse hook once, stdout to stdout
    CLAUDE_PROJECT_DIR=$1 PAGENT_CONFIG_DIR=$2 "$bin" hook post-tool-use <"$3"
}

# --- sanity: a configuration that does not behave is not timed ---------------------------
# One line each: what every configuration does is proven by the integration tests
# (tests/integration/benchmarked.rs, and the tests it names); here only that this binary,
# on these inputs, still does it.
silent() { [[ -z $1 ]] || die "$2: expected no output, got: $1"; }
blocks() { is_block <<<"$1" || die "$2: expected a block decision, got: $1"; }
silent "$(run_hook "$plain" "$tmp/stop-plain.json" || echo "exit $?")" "no-state Stop"
for size in "${sizes[@]}"; do
    hook_input "$tmp/stop-$size-msg.json" "$proj" "${transcript[$size]}" "$last_message"
    hook_input "$tmp/stop-$size-nomsg.json" "$proj" "${transcript[$size]}"
    for kind in msg nomsg; do
        restore_state "$saved" "$state"
        blocks "$(run_hook "$proj" "$tmp/stop-$size-$kind.json")" "Stop, $size/$kind"
    done
done
hook_input "$tmp/stop-long.json" "$proj" "$long_transcript"
restore_state "$saved" "$state"
blocks "$(run_hook "$proj" "$tmp/stop-long.json")" "Stop, long line"
silent "$(run_post "$plain" "$empty_cfg" "$tmp/post-plain.json" || echo "exit $?")" "no-state PostToolUse"
silent "$(run_post "$edit" "$cfg" "$tmp/post-json.json" || echo "exit $?")" "PostToolUse, valid JSON"
[[ $(run_post "$edit" "$cfg" "$tmp/post-broken.json") == *broken.json* ]] || die "PostToolUse: the broken JSON file is not reported"
for n in 1 "$iterations"; do
    rm -rf "$runner/.claude"
    sh -c "$(loop_cmd "$n")" >/dev/null || die "pagent loop (done at $n) failed"
done
rm -rf "$runner/.claude"
for kind in pipeline ralph; do
    restore_state "$tmp/saved-$kind.json" "$big_state"
    blocks "$(run_hook "$big_repo" "$tmp/stop-big.json")" "$kind in $big_repo"
done
silent "$(through_launcher stop "$plain" "$cfg" "$tmp/stop-plain.json" || echo "exit $?")" "launcher: no-state Stop"
restore_state "$saved" "$state"
blocks "$(through_launcher stop "$proj" "$cfg" "$tmp/stop-${sizes[1]}-msg.json")" "launcher: Stop in a loop"
restore_state "$saved" "$state"
[[ ! -e $plain/.claude && -z $(ls -A "$empty_cfg") ]] || die "a no-state hook wrote something"
note "sanity checks passed"

# --- timings -----------------------------------------------------------------------------
# The floor for any Rust program: an empty `fn main() {}` built like the release binary.
floor=
if command -v rustc >/dev/null; then
    echo 'fn main() {}' >"$tmp/empty.rs"
    rustc -C opt-level=3 -C strip=symbols -o "$tmp/empty" "$tmp/empty.rs" && floor=$tmp/empty
fi

# Report rows: LABEL|JSON|SUBJECT|BASELINE, SUBJECT and BASELINE being hyperfine command
# names in that export; or SUBJECT = slope:FIRST:LAST:STEPS, the difference of two
# commands' medians divided by STEPS.
rows=()
row() { rows+=("$1|$2|$3|$4"); }
# A row of the issue-33 table, with its goal: LABEL JSON SUBJECT BASELINE GOAL QUICK. GOAL is
# the ratio the default and --full runs must stay under (a miss is marked in the table);
# QUICK is the generous bound --quick holds on a noisy CI machine with 5 runs, where a
# miss fails the script: it catches a change that makes a hook several times slower (the
# larger transcript, 48 MB, is past where a loop's first Stop used to read 32 MiB).
goal() { if (($# > 4)); then rows+=("$1|$2|$3|$4|$5|$6"); else row "$@"; fi; }

bench() { # NAME RUNS WARMUP PROJECT INPUT PREPARE(may be empty) [-N]: the Stop hook
    local name=$1 n=$2 w=$3 project=$4 input=$5 prepare=$6 noshell=${7:-}
    local json=$out_dir/$name.json before expected
    before=$(count_events "$proj" block)
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
    if [[ $project == "$proj" ]] && (($(count_events "$proj" block) - before != expected)); then
        die "$name: $expected runs but $(($(count_events "$proj" block) - before)) block events"
    fi
}

timed() { # NAME RUNS WARMUP INPUT(may be empty) PREPARE(may be empty) NAME CMD [NAME CMD...]
    # One hyperfine run of the named commands (sh words), stdin from INPUT. The caller's
    # environment assignments reach the commands. Without hyperfine (--quick), each command
    # runs once (the checks above already ran each configuration).
    local name=$1 n=$2 w=$3 input=$4 prepare=$5
    shift 5
    local json=$out_dir/$name.json args=() names=() i
    sync
    if [[ $have_hyperfine != true ]]; then
        for ((i = 2; i <= $#; i += 2)); do
            [[ -z $prepare ]] || sh -c "$prepare"
            sh -c "${!i} < ${input:-/dev/null}" >/dev/null || die "$name: '${!i}' failed"
        done
        timed_runs=1
        return
    fi
    args=(--runs "$n" --warmup "$w" --export-json "$json" --style basic)
    [[ -z $prepare ]] || args+=(--prepare "$prepare")
    # No shell where stdin is not needed or hyperfine can feed it (--input, 1.17 and
    # later); older ones go through sh, whose start-up hyperfine subtracts.
    if [[ -z $input ]]; then
        args+=(-N)
    elif [[ $have_input == true ]]; then
        args+=(-N --input "$input")
    else
        args+=(--shell sh)
    fi
    while (($#)); do
        names+=(-n "$1")
        if [[ $have_input == true || -z $input ]]; then
            args+=("$2")
        else
            args+=("$2 < $(q "$input")")
        fi
        shift 2
    done
    hyperfine "${names[@]}" "${args[@]}" >&2
    timed_runs=$((n + w))
}

bench no-state "${nostate[@]}" "$plain" "$tmp/stop-plain.json" ""
row "no state file" "$out_dir/no-state.json" "pagent hook stop" /bin/true
bench no-state-noshell "${nostate[@]}" "$plain" "$tmp/stop-plain.json" "" -N
goal "no state file (\`-N\`, stdin /dev/null)" "$out_dir/no-state-noshell.json" "pagent hook stop" /bin/true 1.2 3
[[ -z $floor ]] || row "for scale: empty Rust \`fn main() {}\` (\`-N\`)" \
    "$out_dir/no-state-noshell.json" "Rust fn main() {}" /bin/true
for size in "${sizes[@]}"; do
    # The largest transcript's rows are goals: a loop's first Stop (each run starts from the
    # state as set up) reads only what the loop added, whatever came before it.
    bounds=()
    [[ $size != "${sizes[-1]}" ]] || bounds=(4 15)
    bench "loop-$size-msg" "${loop[@]}" "$proj" "$tmp/stop-$size-msg.json" "$restore"
    goal "loop blocks, $size transcript, a loop's first Stop, \`last_assistant_message\` given" \
        "$out_dir/loop-$size-msg.json" "pagent hook stop" /bin/true "${bounds[@]}"
    bench "loop-$size-transcript" "${loop[@]}" "$proj" "$tmp/stop-$size-nomsg.json" "$restore"
    goal "loop blocks, $size transcript, a loop's first Stop, read from the transcript" \
        "$out_dir/loop-$size-transcript.json" "pagent hook stop" /bin/true "${bounds[@]}"
done
# A later Stop: the state as an earlier Stop left it (its cursor at the end of what the
# transcript held then), and one new turn since, which ends on the hook's message.
later_transcript=$tmp/transcripts/later.jsonl
head -n -1 "${transcript[${sizes[-1]}]}" >"$later_transcript"
hook_input "$tmp/stop-later.json" "$proj" "$later_transcript" "$last_message"
restore_state "$saved" "$state"
run_hook "$proj" "$tmp/stop-later.json" >/dev/null || die "the earlier Stop failed"
cp "$state" "$tmp/saved-later.json"
tail -n 1 "${transcript[${sizes[-1]}]}" >>"$later_transcript"
later=$(restore_cmd "$tmp/saved-later.json" "$state") || exit 1
bench "loop-later" "${loop[@]}" "$proj" "$tmp/stop-later.json" "$later"
goal "loop blocks, ${sizes[-1]} transcript, a later Stop, \`last_assistant_message\` given" \
    "$out_dir/loop-later.json" "pagent hook stop" /bin/true 4 15
restore_state "$saved" "$state"
bench long-line "${long[@]}" "$proj" "$tmp/stop-long.json" "$restore"
row "loop blocks, ${sizes[0]} transcript, last tool result line $long_line, read from the transcript" \
    "$out_dir/long-line.json" "pagent hook stop" /bin/true
# For scale: the block decision above includes a fingerprint of the working tree (libgit2,
# in-process); here is what one `git status` of the same project costs.
timed git-status "${loop[@]}" "" "" "git status --porcelain" "git -C $(q "$proj") status --porcelain" \
    /bin/true /bin/true
row "for scale: \`git status --porcelain\` of the loop's project" "$out_dir/git-status.json" \
    "git status --porcelain" /bin/true

# PostToolUse.
CLAUDE_PROJECT_DIR=$plain PAGENT_CONFIG_DIR=$empty_cfg \
    timed post-no-state "${nostate[@]}" "$tmp/post-plain.json" "" \
    "pagent hook post-tool-use" "$(q "$bin") hook post-tool-use" /bin/true /bin/true
row "PostToolUse, no state file (Write payload)" "$out_dir/post-no-state.json" \
    "pagent hook post-tool-use" /bin/true
[[ ! -e $plain/.claude && -z $(ls -A "$empty_cfg") ]] || die "no-state PostToolUse wrote something"
for kind in json broken bare; do
    checks=$(count_events "$edit" check)
    CLAUDE_PROJECT_DIR=$edit PAGENT_CONFIG_DIR=$cfg \
        timed "post-$kind" "${post[@]}" "$tmp/post-$kind.json" "" \
        "pagent hook post-tool-use" "$(q "$bin") hook post-tool-use" /bin/true /bin/true
    (($(count_events "$edit" check) - checks == timed_runs)) ||
        die "post-$kind: $timed_runs runs but $(($(count_events "$edit" check) - checks)) check events"
done
payload() { # FILE: its size, for a label
    local bytes
    bytes=$(stat -c %s "$1")
    if ((bytes < 10240)); then echo "$bytes-byte payload"; else echo "$((bytes / 1024)) KiB payload"; fi
}
row "PostToolUse, loop, JSON check of a $json_size file, valid ($(payload "$tmp/post-json.json"))" \
    "$out_dir/post-json.json" "pagent hook post-tool-use" /bin/true
row "PostToolUse, loop, JSON check of a $json_size file, error at its end ($(payload "$tmp/post-broken.json"))" \
    "$out_dir/post-broken.json" "pagent hook post-tool-use" /bin/true
row "for scale: the valid file, payload without its contents ($(payload "$tmp/post-bare.json"), synthetic)" \
    "$out_dir/post-bare.json" "pagent hook post-tool-use" /bin/true

# The hooks through the launcher, as Claude Code runs them, beside the binary alone.
launcher_case() { # NAME HOOK PROJECT CONFIG INPUT PREPARE RUNS WARMUP
    local plugin_root=$tmp/plugin plugin_data=$tmp/plugin-data
    CLAUDE_PLUGIN_ROOT=$plugin_root CLAUDE_PLUGIN_DATA=$plugin_data PAGENT_BIN= \
        CLAUDE_PROJECT_DIR=$3 PAGENT_CONFIG_DIR=$4 \
        timed "$1" "$7" "$8" "$5" "$6" \
        "hooks.json, $2" "$(hook_command "$2")" \
        "hooks.json staged, $2" "$(hook_command "$2" "$staged")" \
        "shell form, $2" "sh -c $(q "$(shell_form "$2")")" \
        "sh -c binary, $2" "sh -c $(q "$(q "$bin") hook $2")" \
        "binary, $2" "$(q "$bin") hook $2" \
        /bin/true /bin/true
}
launcher_rows() { # LABEL NAME HOOK
    local json=$out_dir/$2.json
    row "$1: hooks.json's exec form, against the shell form it replaced" "$json" "hooks.json, $3" "shell form, $3"
    row "$1: hooks.json's exec form, against \`sh -c\` of the bare binary" "$json" "hooks.json, $3" "sh -c binary, $3"
    row "$1: hooks.json's exec form, against the binary alone" "$json" "hooks.json, $3" "binary, $3"
    # A goal with no loop (the hooks' common case: the issue's row); in a blocking loop the
    # state's write on the disk dominates both, and the row is for reading.
    local bounds=(1.1 2)
    [[ $2 != *loop* ]] || bounds=()
    goal "$1: hooks.json's exec form of a staged binary (\`pagent install\`, npm), against the binary alone" \
        "$json" "hooks.json staged, $3" "binary, $3" "${bounds[@]}"
    row "$1: the binary alone, against \`/bin/true\`" "$json" "binary, $3" /bin/true
    row "$1: hooks.json's exec form, against \`/bin/true\`" "$json" "hooks.json, $3" /bin/true
}
# With no state neither hook reads its stdin (the no-state rows above prove it with `-N`),
# so where hyperfine cannot feed it without sh (before 1.17), these run with -N and stdin
# from /dev/null: through sh, whose start-up hyperfine subtracts, a staged binary and the
# binary alone both came out at 0.00 ms (noise), a ratio no goal can be held to.
idle_input() { if [[ $have_input == true ]]; then echo "$1"; fi; }
launcher_case launcher-stop-no-state stop "$plain" "$cfg" "$(idle_input "$tmp/stop-plain.json")" "" "${nostate[@]}"
launcher_rows "Stop, no state file" launcher-stop-no-state stop
blocks=$(count_events "$proj" block)
launcher_case launcher-stop-loop stop "$proj" "$cfg" "$tmp/stop-${sizes[1]}-msg.json" "$restore" "${loop[@]}"
launcher_rows "Stop, loop blocks, ${sizes[1]} transcript, message given" launcher-stop-loop stop
(($(count_events "$proj" block) - blocks == 5 * timed_runs)) ||
    die "launcher-stop-loop: $((5 * timed_runs)) hook runs but $(($(count_events "$proj" block) - blocks)) block events"
restore_state "$saved" "$state"
launcher_case launcher-post-no-state post-tool-use "$plain" "$empty_cfg" "$(idle_input "$tmp/post-plain.json")" "" "${nostate[@]}"
launcher_rows "PostToolUse, no state file" launcher-post-no-state post-tool-use
[[ ! -e $plain/.claude && -z $(ls -A "$empty_cfg") ]] || die "launcher: no-state hooks wrote something"

# pagent loop: no state file before every run (of every command), so each run starts a
# new loop. The event log and the agents' logs (.claude/pagent/runs) stay and grow.
PAGENT_CONFIG_DIR=$cfg timed loop-runner "${loops[@]}" "$tmp/prompt.txt" \
    "rm -f $(q "$runner/.claude/pagent-pipeline.json")" \
    "pagent loop, 1 iteration" "$(loop_cmd 1)" \
    "pagent loop, $iterations iterations" "$(loop_cmd "$iterations")" \
    "sh done-at-$iterations.sh < prompt.txt" "sh $(q "$tmp/done-at-$iterations.sh")"
# Every run completed (hyperfine stops at a non-zero exit), after the right number of
# iterations: one `complete` event per loop, one `block` per iteration before the last.
(($(count_events "$runner" complete) == 2 * timed_runs &&
    $(count_events "$runner" block) == (iterations - 1) * timed_runs)) ||
    die "loop-runner: $timed_runs runs, but $(count_events "$runner" complete) complete and $(count_events "$runner" block) block events"
row "\`pagent loop\`, 1 iteration, whole process" "$out_dir/loop-runner.json" \
    "pagent loop, 1 iteration" "sh done-at-$iterations.sh < prompt.txt"
row "\`pagent loop\`, $iterations iterations, whole process" "$out_dir/loop-runner.json" \
    "pagent loop, $iterations iterations" "sh done-at-$iterations.sh < prompt.txt"
row "\`pagent loop\`, per iteration: ($iterations-iteration run − 1-iteration run) / $((iterations - 1))" \
    "$out_dir/loop-runner.json" \
    "slope:pagent loop, 1 iteration:pagent loop, $iterations iterations:$((iterations - 1))" \
    "sh done-at-$iterations.sh < prompt.txt"

# `pagent loop --sandbox` (issue 35): the same loop with its agent inside bubblewrap,
# against the same loop uncontained in one hyperfine run. The agent is a copy in the
# project (the walls' /tmp is their own). Not in --quick (CI's time), nor without bwrap.
if [[ $mode != quick ]] && command -v bwrap >/dev/null; then
    cp "$tmp/done-at-$iterations.sh" "$runner/.bench-agent.sh"
    sandbox_cmd() { # FLAGS: `pagent loop FLAGS` with that agent, to $iterations iterations
        printf "%s --project %s loop --quiet %s--command %s ralph --max-iterations %d --no-progress-limit 0 %s" \
            "$(q "$bin")" "$(q "$runner")" "$1" "$(q "sh .bench-agent.sh")" $((iterations + 10)) "$(q "Fix the bug")"
    }
    PAGENT_CONFIG_DIR=$cfg timed loop-sandbox "$((loops[0] / 3 + 1))" "${loops[1]}" "$tmp/prompt.txt" \
        "rm -f $(q "$runner/.claude/pagent-pipeline.json")" \
        "pagent loop, $iterations iterations" "$(sandbox_cmd "")" \
        "pagent loop --sandbox, $iterations iterations" "$(sandbox_cmd "--sandbox ")"
    row "\`pagent loop --sandbox\`, $iterations iterations, whole process, against the same loop uncontained" \
        "$out_dir/loop-sandbox.json" "pagent loop --sandbox, $iterations iterations" \
        "pagent loop, $iterations iterations"
fi

# The large repository.
for kind in pipeline ralph; do
    blocks=$(count_events "$big_repo" block)
    big_restore=$(restore_cmd "$tmp/saved-$kind.json" "$big_state") || exit 1
    CLAUDE_PROJECT_DIR=$big_repo PAGENT_CONFIG_DIR=$cfg \
        timed "big-$kind" "${big[@]}" "$tmp/stop-big.json" \
        "$big_restore" \
        "pagent hook stop" "$(q "$bin") hook stop" \
        "git status --porcelain" "git -C $(q "$big_repo") status --porcelain" /bin/true /bin/true
    (($(count_events "$big_repo" block) - blocks == timed_runs)) ||
        die "big-$kind: $timed_runs runs but $(($(count_events "$big_repo" block) - blocks)) block events"
done
restore_state "$tmp/saved-ralph.json" "$big_state"
what="$files files, $modified modified"
row "pipeline stage check (\`file_exists\` + \`directory_exists src\`), blocks; $what" \
    "$out_dir/big-pipeline.json" "pagent hook stop" /bin/true
row "the same, against \`git status --porcelain\` of that repository" \
    "$out_dir/big-pipeline.json" "pagent hook stop" "git status --porcelain"
row "ralph loop blocks (no-progress fingerprint); $what" \
    "$out_dir/big-ralph.json" "pagent hook stop" /bin/true
goal "the same, against \`git status --porcelain\` of that repository" \
    "$out_dir/big-ralph.json" "pagent hook stop" "git status --porcelain" 1.2 3
row "for scale: \`git status --porcelain\`; $what" \
    "$out_dir/big-ralph.json" "git status --porcelain" /bin/true

# --- peak RSS -------------------------------------------------------------------------------
rss_rows=() # label|KiB
max_rss() { # LABEL PROJECT INPUT RESTORE(state file to copy back, or no) COMMAND...
    # Median of 5 runs, in KiB; the hook runs with PAGENT_CONFIG_DIR=$rss_cfg.
    local label=$1 project=$2 input=$3 restore_from=$4 i all=()
    shift 4
    for i in 1 2 3 4 5; do
        [[ $restore_from == no ]] || restore_state "$restore_from" "$project/.claude/pagent-pipeline.json"
        CLAUDE_PROJECT_DIR=$project PAGENT_CONFIG_DIR=${rss_cfg:-$cfg} \
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
            "$proj" "$tmp/stop-$size-msg.json" "$saved" "$bin" hook stop
        max_rss "loop, $size transcript, read from the transcript" \
            "$proj" "$tmp/stop-$size-nomsg.json" "$saved" "$bin" hook stop
    done
    max_rss "loop, ${sizes[0]} transcript, last tool result line $long_line, read from the transcript" \
        "$proj" "$tmp/stop-long.json" "$saved" "$bin" hook stop
    restore_state "$saved" "$state"
    rss_cfg=$empty_cfg max_rss "PostToolUse, no state file" "$plain" "$tmp/post-plain.json" no \
        "$bin" hook post-tool-use
    max_rss "PostToolUse, JSON check of a $json_size file ($(payload "$tmp/post-json.json"))" \
        "$edit" "$tmp/post-json.json" no "$bin" hook post-tool-use
    max_rss "Stop, pipeline stage check; $what" "$big_repo" "$tmp/stop-big.json" \
        "$tmp/saved-pipeline.json" "$bin" hook stop
    max_rss "Stop, ralph loop (fingerprint); $what" "$big_repo" "$tmp/stop-big.json" \
        "$tmp/saved-ralph.json" "$bin" hook stop
    max_rss "git status --porcelain; $what" "$big_repo" "$tmp/stop-big.json" no \
        git -C "$big_repo" status --porcelain
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
    echo "pagent $("$bin" --version 2>/dev/null | awk '{ print $2 }') ($built), mode: $mode," \
        "$(nproc) CPUs, $(hyperfine --version 2>/dev/null || echo 'no hyperfine')"
    for size in "${sizes[@]}"; do
        printf '%s transcript: %s bytes, %s lines\n' "$size" \
            "$(stat -c %s "${transcript[$size]}")" "$(wc -l <"${transcript[$size]}")"
    done
    printf 'JSON file: %s bytes, %s lines; Write payloads: %s bytes (valid), %s (broken)\n' \
        "$(stat -c %s "$edit/data.json")" "$(wc -l <"$edit/data.json")" \
        "$(stat -c %s "$tmp/post-json.json")" "$(stat -c %s "$tmp/post-broken.json")"
    printf 'Large repository: %s files committed, %s modified, 2 untracked; generated in %d s\n' \
        "$(git -C "$big_repo" ls-files | wc -l)" "$modified" "$big_seconds"
    echo
    how=$([[ $have_input == true ]] && echo "hyperfine -N --input FILE" ||
        echo "sh -c 'CMD < FILE' with sh's start-up subtracted (hyperfine before 1.17 has no --input)")
    python3 - "$how" "$mode" "$out_dir/missed" "${rows[@]}" <<'EOF'
import json, os, sys
mode, missed_path = sys.argv[2], sys.argv[3]
missed = []
# Through sh (hyperfine before 1.17), /bin/true's median is what is left after hyperfine
# subtracts sh's start-up: next to nothing, and noise. A goal's ratio then takes /bin/true
# as timed without a shell in this run (no-state-noshell.json) where that is larger.
floor = 0.0
noshell = os.path.join(os.path.dirname(missed_path), "no-state-noshell.json")
if "sh -c" in sys.argv[1] and os.path.exists(noshell):
    floor = {r["command"]: r for r in json.load(open(noshell))["results"]}["/bin/true"]["median"]
print("Hook input on stdin: %s." % sys.argv[1])
print("Medians; ratio and difference against the baseline measured in the same hyperfine run.")
if "sh -c" in sys.argv[1]:
    print("Through sh, the ratio leans on hyperfine's estimate of sh's start-up (noisy);")
    print("the difference does not.")
print()
print("Goal: the issue's bound on the ratio (--quick: the generous bound CI holds).")
print()
print("| case | median | baseline | baseline median | ratio | difference | runs | goal |")
print("|---|---:|---:|---:|---:|---:|---:|---|")
for row in sys.argv[4:]:
    label, path, subject, baseline, *bounds = row.split("|")
    bound = None
    if bounds:
        bound = float(bounds[1] if mode == "quick" else bounds[0])
    if not os.path.exists(path):
        print("| %s | checked, not timed | `%s` | - | - | - | - | - |" % (label, baseline))
        continue
    results = {r["command"]: r for r in json.load(open(path))["results"]}
    base = results[baseline]["median"]
    if subject.startswith("slope:"):
        _, first, last, steps = subject.split(":")
        median = (results[last]["median"] - results[first]["median"]) / int(steps)
        runs = len(results[last]["times"])
    else:
        median = results[subject]["median"]
        runs = len(results[subject]["times"])
    # A median at or below zero means the shell start-up correction swallowed it:
    # the machine was too noisy during the calibration.
    ratio = "%.2fx" % (median / base) if base > 0 else "n/a (noise)"
    verdict = "-"
    if bound is not None:
        if baseline == "/bin/true" and base < floor:
            base = floor
            ratio = "%.2fx (/bin/true without sh)" % (median / base)
        held = base > 0 and median / base <= bound
        verdict = "≤ %gx: %s" % (bound, "holds" if held else "**missed**")
        if not held:
            missed.append("%s: %s, goal ≤ %gx" % (label, ratio, bound))
    print("| %s | %.2f ms | `%s` | %.2f ms | %s | %+.2f ms | %d | %s |" % (
        label, median * 1e3, baseline, base * 1e3, ratio, (median - base) * 1e3, runs, verdict))
with open(missed_path, "w") as f:
    f.write("".join(m + "\n" for m in missed))
EOF
    if ((${#rss_rows[@]})); then
        echo
        echo "| peak RSS | median of 5 |"
        echo "|---|---:|"
        for row in "${rss_rows[@]}"; do
            printf '| %s | %s KiB |\n' "${row%|*}" "${row##*|}"
        done
    fi
    echo
    echo "Run time: $((SECONDS - started)) s after the build."
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
# The goals (issue 33): --quick fails on a miss of its generous bounds; the default and
# --full runs say which goals they missed (a loaded machine misses them honestly).
if [[ -s $out_dir/missed ]]; then
    note "goals missed:"
    sed 's/^/  /' "$out_dir/missed" >&2
    [[ $mode != quick ]] || die "a goal row is past its bound (see the table above)"
fi
if [[ $have_time == true ]]; then
    fingerprint_kib=$(printf '%s\n' "${rss_rows[@]}" | awk -F'|' '/^Stop, ralph loop \(fingerprint\)/ { print $2 }')
    ((fingerprint_kib <= 64 * 1024)) ||
        die "goal missed: the Stop with the fingerprint took $fingerprint_kib KiB, over 64 MiB"
fi

# --- case 11: a night's disk --------------------------------------------------------------
if [[ $mode != quick ]]; then
    soak=300
    [[ $mode == default ]] || soak=2000
    note "soak: $soak iterations of pagent loop, 1 MB a run (the test asserts the bounds)"
    PAGENT_SOAK_ITERATIONS=$soak cargo test --locked --test integration -- \
        soak::a_nights_loop --nocapture 2>&1 | grep '^soak: ' | tee -a "$out_dir/summary.md" ||
        die "the soak test failed: PAGENT_SOAK_ITERATIONS=$soak cargo test --test integration soak::"
fi

#!/usr/bin/env bash
# Fuzzes every parser pagent runs on input it does not control, each target for SECONDS
# (default 60), seeding the corpora from the captured fixtures. Needs cargo-fuzz
# (installed on first use); runs on stable Rust without a sanitizer (`--sanitizer none`:
# the code under test is safe Rust, and a panic, an abort or a hang is what we look for).
#
#   scripts/fuzz.sh            # 60 s per target
#   scripts/fuzz.sh 5          # CI's smoke run
#   scripts/fuzz.sh 600 state_file
#
# A crash is saved under fuzz/artifacts/TARGET/ and makes the script fail; add the input
# as a regression test named after what it found.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
seconds="${1:-60}"
shift || true
all=(hook_input state_file workflow transcript_tail promise stream_line syntax verdict
    plan_prd_json plan_chief plan_spec_kit plan_kiro plan_ralphex plan_issues)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || targets=("${all[@]}")

command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked

seed() {
    local target="$1" dir="fuzz/corpus/$1"
    mkdir -p "$dir"
    [ -z "$(ls -A "$dir")" ] || return 0
    local fixtures=tests/fixtures/claude-code-2.1.197 n=0
    case "$target" in
        hook_input)
            cat "$fixtures"/*_stdin.jsonl | grep -v '^$' | while IFS= read -r line; do
                n=$((n + 1)); printf '%s' "$line" > "$dir/fixture-$n.json"
            done ;;
        state_file)
            cp tests/fixtures/state/*.json "$dir/" ;;
        workflow)
            cp crates/engine/builtin/workflows/*.json "$dir/" ;;
        transcript_tail)
            cp "$fixtures"/*transcript*.jsonl "$dir/" ;;
        promise)
            printf 'Finished.\n<promise>DONE</promise>' > "$dir/plain"
            printf 'Say `<promise>DONE</promise>`\n```\n<promise>DONE</promise>\n```\n> <promise>X</promise>\0X' > "$dir/quoted" ;;
        plan_*)
            # Every reader starts from every format's fixture: each is another's stranger.
            cp tests/fixtures/plans/* "$dir/"
            printf '<!-- pagent: GitHub issues -->\n# GitHub issues: x\n\n- [ ] #1 A\n  body\n- [x] #2 B\n' > "$dir/issues.md" ;;
        verdict)
            printf 'Checked.\n{"met": false, "missing": ["no test for the empty input"], "files": ["src/parse.rs:12"]}' > "$dir/not-met"
            printf 'The format is {"met": true}.\n```json\n{"met": true, "missing": []}\n```' > "$dir/met" ;;
        stream_line)
            # Real recordings live in one folder per client version: keep the names apart.
            for f in tests/fixtures/agents/*.jsonl tests/fixtures/agents/*/*.jsonl; do
                cp "$f" "$dir/$(printf '%s' "${f#tests/fixtures/agents/}" | tr / -)"
            done ;;
        syntax)
            # The first byte picks the format: 0 JSON, 1 TOML, 2 YAML.
            for f in crates/engine/builtin/workflows/*.json tests/fixtures/state/*.json; do
                n=$((n + 1)); { printf '\000'; cat "$f"; } > "$dir/json-$n"
            done
            { printf '\001'; cat Cargo.toml; } > "$dir/toml-cargo"
            printf '\001a = [[1, 2], {b = "x"}]\n[t.u]\nv = 1\n' > "$dir/toml-nested"
            printf '\002a: 1\nb:\n  - x\n  - {c: [d, e]}\n---\nf: "g"\n' > "$dir/yaml-doc"
            printf '\002top:\n- - - - [x]\n' > "$dir/yaml-nested" ;;
    esac
}

# Every target is built first, in one cargo run (side by side on every CPU, where one
# build per target ran one after the other: most of CI's fuzz time), and a target that
# does not build fails here. Then the targets run as many at a time as there are CPUs,
# each for SECONDS on a core of its own, and each one's summary is printed in order once
# all are done. A run that finds a crash, or ends otherwise than by its time running out,
# fails the script.
for target in "${targets[@]}"; do
    seed "$target"
done
# A smoke run (CI's, 10 s or less a target) proves each target builds, runs and finds
# nothing quickly: an unoptimised build does that, and builds in well under half the time
# of the optimised one (one codegen unit, LTO-like), which only a long run pays back.
mode=()
[ "$seconds" -gt 10 ] || mode=(--dev)
if [ $# -eq 0 ]; then # every target
    cargo fuzz build --sanitizer none ${mode[@]+"${mode[@]}"}
else
    for target in "${targets[@]}"; do
        cargo fuzz build --sanitizer none ${mode[@]+"${mode[@]}"} "$target"
    done
fi

logs=$(mktemp -d)
trap 'rm -rf -- "$logs"' EXIT
cpus=$(nproc 2>/dev/null || getconf _NPROCESSORS_ONLN 2>/dev/null || echo 1)
running=0
for target in "${targets[@]}"; do
    if [ "$running" -ge "$cpus" ]; then # each runs SECONDS: a batch ends together
        wait
        running=0
    fi
    {
        status=0
        cargo fuzz run --sanitizer none ${mode[@]+"${mode[@]}"} "$target" "fuzz/corpus/$target" -- \
            -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
            >"$logs/$target" 2>&1 </dev/null || status=$?
        echo "$status" >"$logs/$target.status"
    } &
    running=$((running + 1))
done
wait

failed=0
for target in "${targets[@]}"; do
    echo "== $target: ${seconds}s" >&2
    grep -E '^(Done [0-9]+ runs|stat::number_of_executed_units|stat::average_exec_per_sec|==[0-9]+==|SUMMARY|thread .* panicked)' \
        "$logs/$target" || true
    if [ -n "$(ls -A "fuzz/artifacts/$target" 2>/dev/null)" ]; then
        echo "fuzz: $target found a crash: $(ls "fuzz/artifacts/$target")" >&2
        failed=1
    elif [ "$(cat "$logs/$target.status")" != 0 ]; then
        echo "fuzz: $target failed (exit $(cat "$logs/$target.status")); its last lines:" >&2
        tail -n 20 "$logs/$target" >&2
        failed=1
    fi
done
exit "$failed"

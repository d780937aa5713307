#!/usr/bin/env bash
# Mutation testing of the engine (crates/engine) with cargo-mutants: each mutant is a small
# change to the code (a `>` made `>=`, a function body replaced by a default) and a test
# must fail for it; a mutant no test notices is a place where the tests do not pin the
# behaviour. Not part of CI: the whole engine is several hundred mutants and takes about
# an hour on two cores, and a surviving mutant needs a reader's judgement (some are
# equivalent), not a red build. The survivors we keep and why are in docs/mutants.md.
#
#   scripts/mutants.sh                               # the whole engine
#   scripts/mutants.sh crates/engine/src/state.rs    # one file (or several, or globs)
#   MUTANTS_JOBS=2 scripts/mutants.sh                # more parallel builds
#   scripts/mutants.sh -- --re 'Timestamp::parse'    # anything after -- goes to cargo-mutants
#   scripts/mutants.sh -- --iterate                  # only what the last run did not catch
#
# Works on a copy of the tree (never `--in-place`), so the worktree is never left mutated
# if the run is interrupted. Output is in $MUTANTS_OUT/mutants.out (default target/mutants;
# missed.txt lists the survivors, diff/ shows each one). Prints caught, missed, timeout
# and unviable counts and the score caught / (caught + missed + timeout); unviable mutants
# (ones that do not compile) count for neither side. With MUTANTS_MIN_SCORE=95 the script
# fails below 95%.
set -euo pipefail
export LC_ALL=C # one sort order for comm
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."

files=()
extra=()
while [ $# -gt 0 ]; do
    case "$1" in
        --) shift; extra=("$@"); break ;;
        *) files+=(--file "$1"); shift ;;
    esac
done

command -v cargo-mutants >/dev/null 2>&1 || {
    echo "mutants.sh: cargo-mutants is not installed (cargo install cargo-mutants --locked)" >&2
    exit 1
}

out="${MUTANTS_OUT:-target/mutants}"
mkdir -p "$out"
status=0
# --lib --tests: the engine has no doctests, and building them costs every mutant a
# rustdoc run. The test timeout is 20 s at least: the property tests take 1-3 s on a
# loaded machine, and a mutant that makes a loop spin forever (`i += 1` made `i *= 1`)
# should cost as little as it can.
cargo mutants \
    --package pagent-engine \
    --profile mutants \
    --jobs "${MUTANTS_JOBS:-1}" \
    --output "$out" \
    --cargo-test-arg=--lib --cargo-test-arg=--tests \
    --minimum-test-timeout 20 \
    --no-times \
    "${files[@]}" "${extra[@]}" || status=$?

# cargo-mutants exits 2 for missed mutants and 3 for timeouts: findings, reported below.
# Anything else non-zero (usage, a failing baseline) is the run itself failing.
case "$status" in
    0 | 2 | 3) ;;
    *) echo "mutants.sh: cargo-mutants failed (exit $status)" >&2; exit "$status" ;;
esac

# With `-- --iterate`, cargo-mutants skips what earlier runs caught and lists it in
# previously_caught.txt; those count as caught if the mutant still exists unchanged (same
# file, line, column and replacement) in the code as it is now.
dir="$out/mutants.out"
lines() { if [ -f "$dir/$1.txt" ]; then sort -u "$dir/$1.txt"; fi; }
filters=()
for arg in "${extra[@]}"; do [ "$arg" = --iterate ] || filters+=("$arg"); done
current=$(cargo mutants --package pagent-engine "${files[@]}" "${filters[@]}" --list | sort -u)
count() { comm -12 <(echo "$current") <(lines "$1") | grep -c . || true; }
caught=$(comm -12 <(echo "$current") <(sort -u <(lines caught) <(lines previously_caught)) | grep -c . || true)
missed=$(count missed)
timeout=$(count timeout)
unviable=$(count unviable)
viable=$((caught + missed + timeout))
score=$(awk -v c="$caught" -v v="$viable" 'BEGIN { if (v == 0) print "n/a"; else printf "%.1f", 100 * c / v }')

echo
echo "$(echo "$current" | grep -c .) mutants: caught $caught, missed $missed, timeout $timeout, unviable $unviable"
echo "score: $score% (caught / (caught + missed + timeout) = $caught / $viable)"
if [ "$missed" -gt 0 ]; then
    echo
    echo "survivors ($dir/missed.txt):"
    comm -12 <(echo "$current") <(lines missed) | sed 's/^/  /'
fi
if [ "$timeout" -gt 0 ]; then
    echo
    echo "timeouts ($dir/timeout.txt):"
    comm -12 <(echo "$current") <(lines timeout) | sed 's/^/  /'
fi

if [ -n "${MUTANTS_MIN_SCORE:-}" ] && [ "$score" != "n/a" ]; then
    if awk -v s="$score" -v m="$MUTANTS_MIN_SCORE" 'BEGIN { exit !(s < m) }'; then
        echo "mutants.sh: score $score% is below MUTANTS_MIN_SCORE=$MUTANTS_MIN_SCORE%" >&2
        exit 1
    fi
fi

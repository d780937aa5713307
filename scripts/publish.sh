#!/usr/bin/env bash
# Publishes a release's npm packages, as packed by scripts/release.sh on each runner of
# the release workflow: every platform package first, then `pagent`, which depends on
# them, so that no one can install a `pagent` whose platform package is not there yet.
#
#   scripts/publish.sh [--dry-run] [--tag TAG] DIR...
#
# DIR... hold the tarballs (pagent-<platform>-VERSION.tgz, and pagent-VERSION.tgz in one
# of them). Before anything is published it checks that the set is whole and of one
# version: the main package's optional dependencies are exactly the platform packages
# present, each at the main package's version, and TAG (default: $GITHUB_REF_NAME, as the
# workflow sets it on a tag) is vVERSION. A package already published at that version is
# skipped, so a run that stopped half-way can be run again.
#
# Publishing uses provenance (`--provenance`: the workflow run that built the package is
# attested, which needs the workflow's `id-token: write`), with npm's trusted publishing
# (the same OIDC token, npm 11.5.1 or newer, each package set up to trust this repository's
# release workflow) or, when NODE_AUTH_TOKEN is set, that token. --dry-run checks the
# set and runs `npm publish --dry-run`, which sends nothing: the workflow does that on
# every pull request, and it runs here too.
set -euo pipefail

fail() {
    printf 'publish: error: %s\n' "$*" >&2
    exit 1
}
say() { printf 'publish: %s\n' "$*" >&2; }

dry_run=false
tag=${GITHUB_REF_NAME:-}
dirs=()
while [ $# -gt 0 ]; do
    case $1 in
        --dry-run) dry_run=true ;;
        --tag)
            [ $# -ge 2 ] || fail "--tag needs a value"
            tag=$2
            shift
            ;;
        -*) fail "unknown option $1 (see the top of $0)" ;;
        *) dirs+=("$1") ;;
    esac
    shift
done
[ ${#dirs[@]} -gt 0 ] || fail "no folder of tarballs given (see the top of $0)"

# The package.json inside a tarball.
manifest() { tar -xzOf "$1" package/package.json; }
field() { node -e 'const p = JSON.parse(require("fs").readFileSync(0, "utf8")); console.log(eval(process.argv[1]) ?? "")' "$1"; }

mains=()
platform_files=()
for dir in "${dirs[@]}"; do
    [ -d "$dir" ] || fail "$dir is not a folder"
    for file in "$dir"/*.tgz; do
        [ -e "$file" ] || continue
        case $(basename -- "$file") in
            pagent-[0-9]*) mains+=("$file") ;;
            pagent-*) platform_files+=("$file") ;;
            *) fail "$file is not a pagent package" ;;
        esac
    done
done
[ ${#mains[@]} -eq 1 ] || fail "expected one main package (pagent-VERSION.tgz), found ${#mains[@]}: ${mains[*]:-none}"
main=${mains[0]}
version="$(manifest "$main" | field p.version)"
[ -n "$version" ] || fail "$main has no version"
if [ -n "$tag" ] && [ "$tag" != "v$version" ]; then
    fail "the tag $tag does not name version $version (tag v$version to release it)"
fi
$dry_run || [ -n "$tag" ] || fail "no tag: publishing needs --tag vVERSION (or GITHUB_REF_NAME)"

# name=version of each platform package present, then what the main package wants.
have=()
for file in "${platform_files[@]}"; do
    have+=("$(manifest "$file" | field 'p.name + "=" + p.version')")
done
want=()
while IFS= read -r line; do
    [ -n "$line" ] && want+=("$line")
done < <(manifest "$main" | field 'Object.entries(p.optionalDependencies || {}).map(([n, v]) => n + "=" + v).join("\n")')
sorted() { printf '%s\n' "$@" | sort; }
if [ "$(sorted "${have[@]}")" != "$(sorted "${want[@]}")" ]; then
    missing="$(comm -13 <(sorted "${have[@]}") <(sorted "${want[@]}") | tr '\n' ' ')"
    extra="$(comm -23 <(sorted "${have[@]}") <(sorted "${want[@]}") | tr '\n' ' ')"
    fail "pagent $version depends on packages that are not here: ${missing:-none}; here but not depended on: ${extra:-none}"
fi
say "pagent $version: ${#platform_files[@]} platform packages, then pagent"

flags=(--access public)
if $dry_run; then
    flags+=(--dry-run)
else
    flags+=(--provenance)
fi
if [ -z "${NODE_AUTH_TOKEN:-}" ] && ! $dry_run; then
    npm_version="$(npm --version)"
    [ "$(printf '%s\n' 11.5.1 "$npm_version" | sort -V | head -n 1)" = 11.5.1 ] ||
        fail "npm $npm_version cannot do trusted publishing (11.5.1 or newer can); set NODE_AUTH_TOKEN or use a newer npm"
elif [ -n "${NODE_AUTH_TOKEN:-}" ] && ! $dry_run; then
    # npm reads the token from a user config naming the registry's host; the host is
    # whatever registry npm is set up with. ${NODE_AUTH_TOKEN} stays a reference.
    registry="$(npm config get registry)"
    userconfig="$(mktemp)"
    trap 'rm -f -- "$userconfig"' EXIT
    host="${registry#*://}"
    printf '//%s:_authToken=${NODE_AUTH_TOKEN}\n' "${host%/}/" >"$userconfig"
    export NPM_CONFIG_USERCONFIG="$userconfig"
fi

for file in "${platform_files[@]}" "$main"; do
    name="$(manifest "$file" | field p.name)"
    if ! $dry_run && [ "$(npm view "$name@$version" version 2>/dev/null || true)" = "$version" ]; then
        say "$name@$version is published already: skipped"
        continue
    fi
    say "npm publish $(basename -- "$file") ${flags[*]}"
    npm publish "$file" "${flags[@]}"
done
say "done: pagent $version$($dry_run && echo ' (dry run: nothing was sent)')"

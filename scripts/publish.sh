#!/usr/bin/env bash
# Publishes a release to every registry, from what scripts/release.sh made on each runner
# of the release workflow. Everything is checked before anything is sent, and each step
# skips what an earlier run of the same release sent already, so a run that stopped
# half-way can be run again.
#
#   scripts/publish.sh [--dry-run] [--tag TAG] [--out DIR] DIR...
#
# DIR... hold the npm tarballs (pagent-<platform>-VERSION.tgz, and pagent-VERSION.tgz in
# one of them) and the archives (pagent-VERSION-TARGET.tar.gz). The checks:
#   - the set is whole and of one version: the main npm package's optional dependencies
#     are exactly the platform packages present, each at its version; there is one
#     archive for each target of `scripts/release.sh --matrix`; TAG (default:
#     $GITHUB_REF_NAME, as the workflow sets it on a tag) is vVERSION;
#   - the repository (Cargo.toml's, the one setting: scripts/set-repository.sh) is a real
#     one for a real run, and in the workflow the repository the workflow runs in;
#   - the release's assets, written into OUT (default target/release-assets): the
#     archives, SHA256SUMS, and the Homebrew formula pagent.rb (scripts/formula.sh),
#     which must be valid Ruby (`ruby -c`) whose sums match the archives and whose install
#     and test pass here (scripts/check-formula.rb);
#   - for a real run, a section of CHANGELOG.md for VERSION (the release's notes).
# Then, in this order (each a dry run with --dry-run, which sends nothing):
#   1. the GitHub release vVERSION with those assets and notes (`gh`, with GH_TOKEN; the
#      workflow attests the assets first): what the formula and cargo-binstall download;
#   2. crates.io, each crate after those it depends on (scripts/publish-crates.sh, with
#      CARGO_REGISTRY_TOKEN);
#   3. npm: every platform package, then `pagent`, which depends on them, so that no one
#      can install a `pagent` whose binary is not there yet; with provenance (the
#      workflow run that built the package is attested: the workflow's `id-token: write`)
#      through npm's trusted publishing (npm 11.5.1 or newer, each package set up to trust
#      this repository's release workflow) or, when NODE_AUTH_TOKEN is set, that token;
#   4. the Homebrew tap, when HOMEBREW_TAP_TOKEN is set: Formula/pagent.rb in the
#      repository OWNER/homebrew-pagent beside this one (`brew install OWNER/pagent/pagent`).
#      Without it the formula is only an asset of the release, and this says so.
# The release workflow runs it with --dry-run on every pull request and push to main, for
# real on a tag vX.Y.Z. RELEASING.md has the one human step and the secrets.
set -euo pipefail
repo_root="$(cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.." && pwd -P)"

fail() {
    printf 'publish: error: %s\n' "$*" >&2
    exit 1
}
say() { printf 'publish: %s\n' "$*" >&2; }

dry_run=false
tag=${GITHUB_REF_NAME:-}
out="$repo_root/target/release-assets"
dirs=()
while [ $# -gt 0 ]; do
    case $1 in
        --dry-run) dry_run=true ;;
        --tag | --out)
            [ $# -ge 2 ] || fail "$1 needs a value"
            if [ "$1" = --tag ]; then tag=$2; else out=$2; fi
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
workspace_value() { sed -n '/^\[workspace.package\]/,/^\[/s/^'"$1"' = "\(.*\)"/\1/p' "$repo_root/Cargo.toml"; }
sorted() { printf '%s\n' "$@" | sort; }

# --- what is here ------------------------------------------------------------------
mains=()
platform_files=()
archives=()
for dir in "${dirs[@]}"; do
    [ -d "$dir" ] || fail "$dir is not a folder"
    for file in "$dir"/*.tgz "$dir"/*.tar.gz; do
        [ -e "$file" ] || continue
        case $(basename -- "$file") in
            pagent-[0-9]*.tar.gz) archives+=("$file") ;;
            pagent-[0-9]*.tgz) mains+=("$file") ;;
            pagent-*.tgz) platform_files+=("$file") ;;
            *) fail "$file is not a pagent package" ;;
        esac
    done
done
[ ${#mains[@]} -eq 1 ] || fail "expected one main package (pagent-VERSION.tgz), found ${#mains[@]}: ${mains[*]:-none}"
main=${mains[0]}
version="$(manifest "$main" | field p.version)"
[ -n "$version" ] || fail "$main has no version"
[ "$version" = "$(workspace_value version)" ] ||
    fail "the packages are version $version, Cargo.toml says $(workspace_value version)"
if [ -n "$tag" ] && [ "$tag" != "v$version" ]; then
    fail "the tag $tag does not name version $version (tag v$version to release it)"
fi
$dry_run || [ -n "$tag" ] || fail "no tag: publishing needs --tag vVERSION (or GITHUB_REF_NAME)"

# --- the repository: the one setting ---------------------------------------------------
repository="$(workspace_value repository)"
case $repository in
    https://*) ;;
    *) fail "Cargo.toml's repository '$repository' is not an https:// address" ;;
esac
if [[ $repository == *.invalid/* ]]; then
    $dry_run || fail "Cargo.toml's repository is still the placeholder $repository: set it with scripts/set-repository.sh URL (RELEASING.md)"
    say "the repository is still the placeholder $repository (a real run refuses it)"
fi
if [ -n "${GITHUB_REPOSITORY:-}" ] && ! $dry_run &&
    [ "$repository" != "${GITHUB_SERVER_URL:-}/$GITHUB_REPOSITORY" ]; then
    fail "Cargo.toml's repository is $repository, but this workflow runs in ${GITHUB_SERVER_URL:-}/$GITHUB_REPOSITORY"
fi

# --- the npm set ---------------------------------------------------------------------
have=()
for file in "${platform_files[@]}"; do
    have+=("$(manifest "$file" | field 'p.name + "=" + p.version')")
done
want=()
while IFS= read -r line; do
    [ -n "$line" ] && want+=("$line")
done < <(manifest "$main" | field 'Object.entries(p.optionalDependencies || {}).map(([n, v]) => n + "=" + v).join("\n")')
if [ "$(sorted "${have[@]}")" != "$(sorted "${want[@]}")" ]; then
    missing="$(comm -13 <(sorted "${have[@]}") <(sorted "${want[@]}") | tr '\n' ' ')"
    extra="$(comm -23 <(sorted "${have[@]}") <(sorted "${want[@]}") | tr '\n' ' ')"
    fail "pagent $version depends on packages that are not here: ${missing:-none}; here but not depended on: ${extra:-none}"
fi

# --- the archives: one per target of the matrix -----------------------------------------
want=()
while read -r _ target _; do
    want+=("pagent-$version-$target.tar.gz")
done < <("$repo_root/scripts/release.sh" --matrix)
have=()
for file in "${archives[@]}"; do have+=("$(basename -- "$file")"); done
if [ "$(sorted "${have[@]}")" != "$(sorted "${want[@]}")" ]; then
    missing="$(comm -13 <(sorted "${have[@]}") <(sorted "${want[@]}") | tr '\n' ' ')"
    extra="$(comm -23 <(sorted "${have[@]}") <(sorted "${want[@]}") | tr '\n' ' ')"
    fail "the release's archives are not whole: missing ${missing:-none}; not of this release: ${extra:-none}"
fi
say "pagent $version: ${#platform_files[@]} platform packages and pagent for npm, ${#archives[@]} archives"

# --- the release's assets: archives, sums, formula --------------------------------------
rm -rf -- "$out"
mkdir -p -- "$out"
cp -- "${archives[@]}" "$out/"
(
    cd -- "$out"
    if command -v sha256sum >/dev/null; then
        sha256sum -- pagent-*.tar.gz
    else
        shasum -a 256 -- pagent-*.tar.gz
    fi
) >"$out/SHA256SUMS"
"$repo_root/scripts/formula.sh" --version "$version" --repository "$repository" "$out" >"$out/pagent.rb"
ruby -c "$out/pagent.rb" >/dev/null || fail "the formula $out/pagent.rb is not valid Ruby"
ruby "$repo_root/scripts/check-formula.rb" "$out/pagent.rb" "$out" >&2 ||
    fail "the formula $out/pagent.rb does not match the archives"
notes="$out/notes.md"
awk -v v="$version" '
    /^## / { inside = ($2 == v || $2 == "[" v "]") ; if (inside) { found = 1; next } }
    inside { print }
    END { exit !found }
' "$repo_root/CHANGELOG.md" >"$notes" || {
    $dry_run || fail "CHANGELOG.md has no section \"## $version\" for the release's notes"
    say "CHANGELOG.md has no section for $version yet (a real run refuses that)"
}
say "the release's assets are in $out: $(cd -- "$out" && echo *)"

# --- 1. the GitHub release ----------------------------------------------------------------
assets=("$out"/pagent-*.tar.gz "$out/SHA256SUMS" "$out/pagent.rb")
if $dry_run; then
    say "dry run: would create the GitHub release v$version with ${#assets[@]} assets"
elif gh release view "v$version" >/dev/null 2>&1; then
    gh release upload "v$version" "${assets[@]}" --clobber
    say "GitHub release v$version: there already; its assets uploaded again"
else
    gh release create "v$version" "${assets[@]}" --title "pagent $version" --notes-file "$notes" --verify-tag
    say "GitHub release v$version: created"
fi

# --- 2. crates.io ---------------------------------------------------------------------------
if $dry_run; then
    "$repo_root/scripts/publish-crates.sh" --dry-run
else
    "$repo_root/scripts/publish-crates.sh"
fi

# --- 3. npm -----------------------------------------------------------------------------------
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

# --- 4. the Homebrew tap ----------------------------------------------------------------------
tap="${repository%/*}/homebrew-pagent"
if $dry_run; then
    say "dry run: would put pagent.rb in the tap $tap when HOMEBREW_TAP_TOKEN is set"
elif [ -z "${HOMEBREW_TAP_TOKEN:-}" ]; then
    say "HOMEBREW_TAP_TOKEN is not set: the formula is an asset of the release only (RELEASING.md)"
else
    clone="$(mktemp -d)"
    auth="AUTHORIZATION: basic $(printf 'x-access-token:%s' "$HOMEBREW_TAP_TOKEN" | base64 | tr -d '\n')"
    git -c http.extraheader="$auth" clone --quiet --depth 1 "$tap.git" "$clone"
    mkdir -p -- "$clone/Formula"
    cp -- "$out/pagent.rb" "$clone/Formula/pagent.rb"
    if git -C "$clone" diff --quiet && [ -z "$(git -C "$clone" status --porcelain)" ]; then
        say "the tap $tap has this formula already"
    else
        git -C "$clone" add Formula/pagent.rb
        git -C "$clone" -c user.name="github-actions[bot]" -c user.email="41898282+github-actions[bot]@users.noreply.github.com" \
            commit --quiet -m "pagent $version"
        git -C "$clone" -c http.extraheader="$auth" push --quiet origin HEAD
        say "the tap $tap: pagent $version"
    fi
    rm -rf -- "$clone"
fi
say "done: pagent $version$($dry_run && echo ' (dry run: nothing was sent)')"

#!/usr/bin/env bash
# Sets the project's repository address, the one setting every registry reads: Cargo.toml's
# `repository` (and `homepage`), from which the crates, the npm packages, the Homebrew
# formula's URLs and cargo-binstall's come at release time. The plugin manifests
# (.claude-plugin/plugin.json and marketplace.json), which Claude Code reads as they are,
# and the pages that show the marketplace command repeat it; this script rewrites every
# file of the repository that names the old address, and a test keeps the manifests equal
# to Cargo.toml's (tests/integration/release.rs). RELEASING.md says when to run it.
#
#   scripts/set-repository.sh https://github.com/OWNER/NAME
#
# The address is the repository's web page: https://, no trailing `/`, no `.git` (the
# marketplace command adds `.git`, the release's assets are under its
# releases/download/).
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."

fail() {
    printf 'set-repository: error: %s\n' "$*" >&2
    exit 1
}

[ $# -eq 1 ] || fail "usage: scripts/set-repository.sh https://HOST/OWNER/NAME"
new=$1
[[ $new =~ ^https://[A-Za-z0-9.-]+(:[0-9]+)?/[A-Za-z0-9._~/-]+$ ]] ||
    fail "'$new' is not an https:// address of a repository (letters, digits and . _ ~ - / only)"
case $new in
    */ | *.git) fail "give the repository's page, without a trailing / or .git: $new" ;;
esac
old="$(sed -n '/^\[workspace.package\]/,/^\[/s/^repository = "\(.*\)"/\1/p' Cargo.toml)"
[ -n "$old" ] || fail "no repository in Cargo.toml's [workspace.package]"
if [ "$old" = "$new" ]; then
    echo "set-repository: the repository is $new already" >&2
    exit 0
fi

# The repository's address, and the Homebrew tap's beside it (OWNER/homebrew-pagent,
# which `brew tap` reads): every tracked text file naming the old one gets the new one,
# where the address is followed by something other than a name character (so .../pagent
# never rewrites .../pagent-x).
changed=()
for pair in "$old $new" "${old%/*}/homebrew-pagent ${new%/*}/homebrew-pagent"; do
    read -r from to <<<"$pair"
    files=()
    while IFS= read -r -d '' file; do
        files+=("$file")
    done < <(git grep -z -l -I -F -e "$from" -- .)
    escaped_from="$(printf '%s' "$from" | sed 's/[.[\*^$/]/\\&/g')"
    escaped_to="$(printf '%s' "$to" | sed 's/[&/\]/\\&/g')"
    for file in ${files[@]+"${files[@]}"}; do
        sed -E -i.bak "s/${escaped_from}([^A-Za-z0-9_-]|\$)/${escaped_to}\\1/g" "$file"
        rm -f -- "$file.bak"
        changed+=("$file")
    done
done
[ ${#changed[@]} -gt 0 ] || fail "no file names $old"
echo "set-repository: $old -> $new in: $(printf '%s\n' "${changed[@]}" | sort -u | tr '\n' ' ')" >&2
echo "set-repository: check with: cargo test --test integration -- release::" >&2

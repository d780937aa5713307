#!/usr/bin/env bash
# Publishes the workspace's crates to crates.io, each after the workspace crates it
# depends on, so that `cargo install pagent` (and `cargo binstall pagent`) work. The list
# and the order come from `cargo metadata`, never from this file: a crate added to the
# workspace is published without a change here, and one with `publish = false` (the test
# support crate) never is.
#
#   scripts/publish-crates.sh [--dry-run]
#
# --dry-run packs and builds every publishable crate as crates.io would get it, sending
# nothing: one `cargo publish --dry-run -p A -p B ...` of them all, where cargo puts each
# crate not published yet in a local registry for the crates after it to build against. The release
# workflow runs it on every pull request (through scripts/publish.sh), .ci/run too.
#
# A real run publishes one crate at a time in that order (cargo waits until each is
# available before the next is built against it) with the token in
# CARGO_REGISTRY_TOKEN; a crate whose version is published already is skipped, so a run
# that stopped half-way can be run again.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."

say() { printf 'publish-crates: %s\n' "$*" >&2; }
fail() {
    printf 'publish-crates: error: %s\n' "$*" >&2
    exit 1
}

dry_run=false
case ${1:-} in
    --dry-run) dry_run=true ;;
    "") ;;
    *) fail "unknown argument $1 (see the top of $0)" ;;
esac

# The publishable workspace members, each after the members it depends on (normal and
# build dependencies; dev-dependencies are left out of a published crate).
metadata="$(cargo metadata --format-version 1 --no-deps --locked)" ||
    fail "cannot read the workspace's crates from cargo metadata"
order="$(node -e '
const meta = JSON.parse(require("fs").readFileSync(0, "utf8"));
const members = new Set(meta.workspace_members);
const pkgs = meta.packages.filter((p) => members.has(p.id));
const byName = new Map(pkgs.map((p) => [p.name, p]));
const publishable = (p) => !(Array.isArray(p.publish) && p.publish.length === 0);
const done = new Set(), out = [];
function visit(p, path) {
  if (done.has(p.name)) return;
  if (path.includes(p.name)) throw new Error("a cycle: " + path.concat(p.name).join(" -> "));
  for (const d of p.dependencies) {
    const dep = byName.get(d.name);
    if (dep && d.kind !== "dev") {
      if (!publishable(dep) && publishable(p)) throw new Error(p.name + " depends on " + dep.name + ", which is not published");
      visit(dep, path.concat(p.name));
    }
  }
  done.add(p.name);
  if (publishable(p)) out.push(p.name + " " + p.version);
}
pkgs.sort((a, b) => a.name.localeCompare(b.name)).forEach((p) => visit(p, []));
console.log(out.join("\n"));
' <<<"$metadata")" || fail "cannot read the workspace's crates from cargo metadata"
[ -n "$order" ] || fail "the workspace has no crate to publish"
say "in this order: $(awk '{ printf "%s%s %s", (NR > 1 ? ", " : ""), $1, $2 }' <<<"$order")"

if $dry_run; then
    # cargo unpacks the crates of its dry run's local registry under CARGO_HOME, and builds
    # them in this checkout's target/; a crate from a registry never changes, so when the
    # registry's folder is the one of an earlier run, cargo takes what it unpacked and
    # built then, not this run's packages. Those stale copies (local registries' folders
    # start with `-`) and builds go first: a crate changed since then must be built anew.
    target_dir=$(node -e 'console.log(JSON.parse(require("fs").readFileSync(0, "utf8")).target_directory)' \
        <<<"$metadata")
    while read -r name version; do
        for stale in "${CARGO_HOME:-$HOME/.cargo}"/registry/src/-*/"$name-$version" \
            "$target_dir"/debug/.fingerprint/"$name"-*; do
            if [ -d "$stale" ]; then rm -rf -- "$stale"; fi
        done
    done <<<"$order"
    packages=()
    while read -r name _; do packages+=(-p "$name"); done <<<"$order"
    cargo publish --dry-run --allow-dirty --locked "${packages[@]}"
    say "dry run: every crate packed and built from its package; nothing was sent"
    exit 0
fi

[ -n "${CARGO_REGISTRY_TOKEN:-}" ] || fail "CARGO_REGISTRY_TOKEN is not set (RELEASING.md)"
while read -r name version; do
    log="$(mktemp)"
    # A pipeline, so that the log is whole before it is read (tee in a process
    # substitution may still be writing).
    set +e
    cargo publish --locked -p "$name" 2>&1 | tee "$log" >&2
    status=${PIPESTATUS[0]}
    set -e
    if [ "$status" = 0 ]; then
        say "$name $version: published"
    elif grep -q "already exists" "$log"; then
        say "$name $version: published already, skipped"
    else
        rm -f -- "$log"
        fail "cargo publish of $name $version failed (see above)"
    fi
    rm -f -- "$log"
done <<<"$order"
say "done"

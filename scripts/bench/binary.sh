# The binary the benchmark scripts time, sourced by scripts/bench.sh and
# scripts/bench/{dashboard,monorepo}.sh: PAGENT_BIN when it is set, else the binary as a
# release ships it to this machine, built here. On Linux (glibc) that is the static build
# scripts/release.sh makes (`-C target-feature=+crt-static` for the host target): it starts
# about 0.3 ms sooner than a dynamically linked one (no loader, no libc.so and libgcc_s to
# map), which is what every hook pays, so timing a plain `cargo build --release` would
# time a binary no user of the packages runs. Without a static libc (or off Linux) it is
# the ordinary release build, as release.sh falls back to. The same command and flags as
# release.sh, so the builds of a CI run share one artifact.

# Prints the path of the binary to time, building it first unless PAGENT_BIN names one.
bench_binary() {
    local root=$1 host target_dir
    if [[ -n ${PAGENT_BIN:-} ]]; then
        printf '%s\n' "$PAGENT_BIN"
        return
    fi
    host=$(rustc -vV | sed -n 's/^host: //p')
    target_dir=${CARGO_TARGET_DIR:-$root/target}
    # A no-op when the binary is up to date; never benchmark a stale build.
    if [[ $host == *-linux-gnu ]] && [[ ${PAGENT_STATIC:-1} != 0 ]] &&
        [[ -f $(cc -print-file-name=libc.a 2>/dev/null || echo /nonexistent) ]]; then
        echo "bench: cargo build --release --locked --target $host (static, as released)" >&2
        RUSTFLAGS="${RUSTFLAGS:-} -C target-feature=+crt-static" \
            cargo build --release --locked --quiet --target "$host" --manifest-path "$root/Cargo.toml" >&2
        printf '%s\n' "$target_dir/$host/release/pagent"
    else
        echo "bench: cargo build --release --locked" >&2
        cargo build --release --locked --quiet --manifest-path "$root/Cargo.toml" >&2
        printf '%s\n' "$target_dir/release/pagent"
    fi
}

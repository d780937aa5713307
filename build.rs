//! Link settings for the `pagent` binary, and the target it is built for.
//!
//! The hook runs on every Stop and every tool call, so its start-up is most of its cost.
//! Lazy symbol binding lets the dynamic loader resolve only the symbols a run uses
//! (Rust links with `-z now` by default, resolving all of them up front): about 0.1 ms
//! per call, measured in BENCHMARKS.md. The binary stays position-independent.
//!
//! `PAGENT_TARGET` is the Rust target triple (`aarch64-apple-darwin`, ...): `pagent
//! --version` says it, so a user (and `scripts/release.sh`, which checks every binary it
//! packs) can tell which platform's build is installed; the tests compare it too.

#![forbid(unsafe_code)]

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,lazy");
    }
    let target = std::env::var("TARGET").unwrap_or_else(|_| "unknown".to_owned());
    println!("cargo:rustc-env=PAGENT_TARGET={target}");
    println!("cargo:rerun-if-changed=build.rs");
}

//! Link settings for the `pagent` binary.
//!
//! The hook runs on every Stop and every tool call, so its start-up is most of its cost.
//! Lazy symbol binding lets the dynamic loader resolve only the symbols a run uses
//! (Rust links with `-z now` by default, resolving all of them up front): about 0.1 ms
//! per call, measured in BENCHMARKS.md. The binary stays position-independent.

fn main() {
    if std::env::var("CARGO_CFG_TARGET_OS").as_deref() == Ok("linux") {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,lazy");
    }
    println!("cargo:rerun-if-changed=build.rs");
}

//! The spec-kit plan reader (`Format::SpecKit`): any text, no panic, and every tick it
//! offers reads back done (see `plan_common.rs`).
#![no_main]
#![forbid(unsafe_code)]

#[path = "plan_common.rs"]
mod common;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    common::check(data, pagent_stories::Format::SpecKit);
});

//! The transcript readers: any file contents, read backwards in blocks, give the same
//! last assistant text as a forward reading of the same lines; the usage reader never
//! panics and never counts fewer tokens when a Stop reads the file in two pieces.
#![no_main]
#![forbid(unsafe_code)]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pagent::transcript::fuzz_check(data);
    pagent::usage::fuzz_check(data);
});

//! The transcript tail reader: any file contents, read backwards in blocks, give the
//! same last assistant text as a forward reading of the same lines, without panicking.
#![no_main]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    pagent::transcript::fuzz_check(data);
});

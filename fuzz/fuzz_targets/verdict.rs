//! A reviewer's final message: any text, no panic; a "met" is only ever `met: true` with
//! nothing missing, and appending a clear verdict always makes it the one read.
#![no_main]

use pagent_engine::review::parse_verdict;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    if let Ok(verdict) = parse_verdict(text) {
        assert!(!verdict.met || verdict.missing.is_empty());
        assert!(verdict.met || !verdict.missing.is_empty());
    }
    let appended = format!("{text}\n{{\"met\": false, \"missing\": [\"x\"]}}");
    let verdict = parse_verdict(&appended).expect("a trailing verdict is read");
    assert!(!verdict.met);
});

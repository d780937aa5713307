//! Promise extraction: any message and promise text, no panic; a message that is exactly
//! the tag always keeps its promise.
#![no_main]
#![forbid(unsafe_code)]

use pagent_engine::contains_promise;

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let (message, expected) = text.split_once('\u{0}').unwrap_or((text, "DONE"));
    let _ = contains_promise(message, expected);
    let normal = expected.split_whitespace().collect::<Vec<_>>().join(" ");
    if !normal.is_empty() && !normal.contains('<') && !normal.contains('`') {
        assert!(contains_promise(&format!("<promise>{normal}</promise>"), expected));
    }
});

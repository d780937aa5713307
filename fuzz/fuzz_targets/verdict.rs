//! A reviewer's final message: any text, no panic; a "met" is only ever `met: true` with
//! nothing missing; appending a clear verdict always makes it the one read; and a verdict
//! nested inside any JSON value (an object's field, a list) never counts, whatever the
//! text around it (finding 3 of issue 19).
#![no_main]
#![forbid(unsafe_code)]

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
    // The fuzzer's text as a JSON string inside a "not met" verdict, beside a nested
    // "met": neither the text nor the nested object can make it "met".
    let quoted = serde_json::to_string(text).expect("a string serialises");
    for nested in [
        format!("{{\"met\": false, \"missing\": [\"x\"], \"note\": {{\"met\": true, \"said\": {quoted}}}}}"),
        format!("{{\"met\": false, \"missing\": [{quoted}], \"list\": [{{\"met\": true}}]}}"),
    ] {
        let inside = format!("{text}\n{nested}");
        match parse_verdict(&inside) {
            Ok(verdict) => assert!(!verdict.met, "{inside}"),
            // The text itself may be whitespace only, making "missing" empty.
            Err(why) => assert!(why.contains("missing") || why.contains("met"), "{why}"),
        }
    }
});

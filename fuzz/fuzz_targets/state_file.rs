//! The state file: parsing, the invariants State::from_json checks, sealing, and the
//! round trip through JSON must hold for any bytes.
#![no_main]
#![forbid(unsafe_code)]

use pagent_engine::{State, seal};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(state) = State::from_json(data) else { return };
    assert!(!seal::verify(&state, b"/p", b"key") || state.seal.is_some());
    let mut sealed = state.clone();
    seal::apply(&mut sealed, b"/p", b"key");
    assert!(seal::verify(&sealed, b"/p", b"key"));
    let text = sealed.to_json_pretty();
    let again = State::from_json(text.as_bytes()).expect("a state pagent wrote parses");
    assert_eq!(again, sealed);
    assert!(seal::verify(&again, b"/p", b"key"), "a state pagent wrote must verify when read back");
    let _ = state.current();
    let _ = state.stage_limit(state.stage);
});

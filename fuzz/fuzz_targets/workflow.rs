//! Workflow files: any JSON is accepted or rejected with a field and a reason, and an
//! accepted workflow makes a state that round-trips.
#![no_main]
#![forbid(unsafe_code)]

use pagent_engine::{SetupOptions, State, Timestamp, Workflow};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else { return };
    match Workflow::from_json(&value, "fuzz") {
        Ok(workflow) => {
            let prompts = vec!["p".to_owned(); workflow.stages.len()];
            let state = State::new_pipeline(&workflow, prompts, SetupOptions::default(), None, Timestamp(0));
            let text = state.to_json_pretty();
            assert_eq!(State::from_json(text.as_bytes()).expect("round trip"), state);
        }
        Err(err) => assert!(!err.field.is_empty() && !err.reason.is_empty()),
    }
});

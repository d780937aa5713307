//! Claude Code's hook JSON on stdin: any bytes parse or fail, never panic.
#![no_main]
#![forbid(unsafe_code)]

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    if let Ok(input) = pagent_protocol::HookInput::from_json(data) {
        // What the hooks read from it must be usable whatever it holds.
        let _ = input.tool_input.as_ref().and_then(|t| t.get("file_path")).and_then(|v| v.as_str());
        let _ = serde_json::to_string(&input);
    }
});

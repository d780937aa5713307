//! The built-in syntax checkers (JSON, TOML, YAML) run on every file the model edits, so
//! they must answer for any text: never a panic, never a stack overflow however deep the
//! nesting, and every error with a 1-based line and column and a message. The first byte
//! picks the format, the rest is the file.
#![no_main]
#![forbid(unsafe_code)]

use pagent_engine::{Syntax, check_syntax};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Some((first, rest)) = data.split_first() else { return };
    let syntax = match first % 3 {
        0 => Syntax::Json,
        1 => Syntax::Toml,
        _ => Syntax::Yaml,
    };
    let text = String::from_utf8_lossy(rest);
    if let Err(err) = check_syntax(syntax, &text) {
        assert!(err.line >= 1 && err.column >= 1, "{syntax:?}: {err}");
        assert!(!err.message.trim().is_empty(), "{syntax:?}: an error without a message");
    }
});

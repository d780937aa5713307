//! Agent stream lines (Claude Code, Codex, OpenCode): any line gives events or nothing,
//! and folding them into a run summary never panics.
#![no_main]

use pagent_protocol::stream::{AgentKind, RunSummary, parse_line};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for kind in [AgentKind::Claude, AgentKind::Codex, AgentKind::Opencode] {
        let mut summary = RunSummary::default();
        for line in text.lines() {
            for event in parse_line(kind, line) {
                summary.push(&event);
            }
        }
    }
});

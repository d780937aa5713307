//! Agent stream lines (Claude Code, Codex, OpenCode): any line gives events or nothing,
//! its usage record or none, and folding them into a run summary never panics.
#![no_main]

use pagent_protocol::stream::{AgentKind, RunSummary, parse_line, parse_usage};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    for kind in [AgentKind::Claude, AgentKind::Codex, AgentKind::Opencode] {
        let mut summary = RunSummary::default();
        for line in text.lines() {
            let _ = parse_usage(kind, line);
            for event in parse_line(kind, line) {
                summary.push(&event);
            }
        }
    }
});

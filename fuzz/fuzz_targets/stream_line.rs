//! Agent stream lines (Claude Code, Codex, OpenCode): any line gives events or nothing,
//! its usage record or none, the usage limit or outage it names or none, and folding them
//! into a run summary never panics.
#![no_main]

use pagent_protocol::stream::{AgentKind, LimitWatch, RunSummary, parse_line, parse_usage};

libfuzzer_sys::fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else { return };
    let _ = pagent_protocol::stream::limit::claude_text(text);
    let _ = pagent_protocol::stream::limit::parse_claude_time(text);
    for kind in [AgentKind::Claude, AgentKind::Codex, AgentKind::Opencode] {
        let mut summary = RunSummary::default();
        let mut limits = LimitWatch::default();
        for line in text.lines() {
            let _ = parse_usage(kind, line);
            limits.push(kind, line);
            for event in parse_line(kind, line) {
                summary.push(&event);
            }
        }
        let _ = limits.hit();
        let _ = limits.outage();
    }
});

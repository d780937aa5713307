//! What the model received of pagent's text, iteration by iteration: the figures behind
//! the context table in BENCHMARKS.md, and the copies of a block reason each Claude Code
//! version sends.

use super::*;

/// What the model received of pagent's text in one iteration: the re-prompt, how many
/// messages carried it whole, the bytes of the re-prompt that makes, and the bytes of the
/// whole messages that carried it (Claude Code's wrapping included: `Stop hook feedback:`,
/// the system-reminder of `additionalContext`, 2.1.330's second copy with the hook's
/// command line).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextCost {
    pub iteration: usize,
    pub reason_bytes: usize,
    pub copies: usize,
    pub bytes: usize,
    pub message_bytes: usize,
}

/// For each block of `run`, the next request's messages after the last assistant one that
/// contain its reason: Claude Code up to 2.1.258 sends the reason once (the Stop feedback),
/// later versions twice (and the second copy as a `role:"system"` message). Printed for the
/// context table in BENCHMARKS.md (`-- --nocapture`).
pub fn context_costs(e2e: &E2e, run: &ClaudeRun, flow: &str) -> Vec<ContextCost> {
    let version = claude_version();
    let requests = e2e.mock.requests();
    let mut next = 0;
    let costs: Vec<ContextCost> = run
        .block_reasons()
        .iter()
        .enumerate()
        .map(|(block, reason)| {
            // The first request after the previous block's that carries this reason.
            let (index, carrying) = (next..requests.len())
                .map(|i| {
                    let told = crate::mock::told(&requests[i]);
                    let carrying: Vec<usize> = told
                        .iter()
                        .filter(|t| t.contains(reason.as_str()))
                        .map(String::len)
                        .collect();
                    (i, carrying)
                })
                .find(|(_, carrying)| !carrying.is_empty())
                .unwrap_or((requests.len(), Vec::new()));
            next = index + 1;
            ContextCost {
                iteration: block + 2,
                reason_bytes: reason.len(),
                copies: carrying.len(),
                bytes: carrying.len() * reason.len(),
                message_bytes: carrying.iter().sum(),
            }
        })
        .collect();
    let total: usize = costs.iter().map(|c| c.bytes).sum();
    let wrapped: usize = costs.iter().map(|c| c.message_bytes).sum();
    eprintln!(
        "context: Claude Code {version}, {flow}: {} re-prompts, {total} bytes of pagent text received, \
         {wrapped} bytes with Claude Code's wrapping; per re-prompt (copies x bytes = message bytes): {}",
        costs.len(),
        costs
            .iter()
            .map(|c| format!("{}x{}={}", c.copies, c.reason_bytes, c.message_bytes))
            .collect::<Vec<_>>()
            .join(", ")
    );
    costs
}

/// The CLI's version, e.g. "2.1.330".
pub fn claude_version() -> String {
    let out = Command::new(claude_binary())
        .arg("--version")
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .unwrap_or("")
        .to_owned()
}

/// How many times the CLI under test hands a re-prompt to the model: once. (A Stop block
/// reached it twice since 2.1.259; pagent re-prompts with `additionalContext`, which every
/// pinned version sends once.)
pub fn reason_copies() -> usize {
    1
}

/// Whether the CLI under test is at least `version` ("2.1.259").
pub fn claude_at_least(version: &str) -> bool {
    let parse = |v: &str| -> Vec<u32> { v.split('.').map(|n| n.parse().unwrap_or(0)).collect() };
    parse(&claude_version()) >= parse(version)
}

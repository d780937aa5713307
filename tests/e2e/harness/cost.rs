//! What the model received of pagent's text, iteration by iteration: the figures behind
//! the context table in BENCHMARKS.md, and the copies of a block reason each Claude Code
//! version sends.

use super::*;

/// What the model received of pagent's text in one iteration: the block reason, how many
/// messages carried it whole, and the bytes that makes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextCost {
    pub iteration: usize,
    pub reason_bytes: usize,
    pub copies: usize,
    pub bytes: usize,
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
            let (index, copies) = (next..requests.len())
                .map(|i| {
                    let told = crate::mock::told(&requests[i]);
                    (
                        i,
                        told.iter().filter(|t| t.contains(reason.as_str())).count(),
                    )
                })
                .find(|(_, copies)| *copies > 0)
                .unwrap_or((requests.len(), 0));
            next = index + 1;
            ContextCost {
                iteration: block + 2,
                reason_bytes: reason.len(),
                copies,
                bytes: copies * reason.len(),
            }
        })
        .collect();
    let total: usize = costs.iter().map(|c| c.bytes).sum();
    eprintln!(
        "context: Claude Code {version}, {flow}: {} blocks, {total} bytes of pagent text received; per block: {}",
        costs.len(),
        costs
            .iter()
            .map(|c| format!("{}x{}", c.copies, c.reason_bytes))
            .collect::<Vec<_>>()
            .join(", ")
    );
    costs
}

/// The CLI's version, e.g. "2.1.330".
fn claude_version() -> String {
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

/// How many times the CLI under test hands a Stop block's reason to the model: twice
/// since 2.1.259.
pub fn reason_copies() -> usize {
    let version: Vec<u32> = claude_version()
        .split('.')
        .map(|n| n.parse().unwrap())
        .collect();
    if version >= vec![2, 1, 259] { 2 } else { 1 }
}

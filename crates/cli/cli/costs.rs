//! Which pool pays: what each agent pagent starts spends, said where it starts (`pagent
//! loop`'s first lines, a loop set up with a reviewer). `docs/costs.md` says the same at
//! length.
//!
//! Since 2026-06-15, `claude -p` (what `pagent loop --agent claude` and a Claude reviewer
//! run) spends a Claude subscription's separate Agent SDK credit, billed at API prices,
//! not the plan's usage limits, which the interactive session (where pagent's in-session
//! loop runs) spends. With an API key, `claude -p` spends the API account. Codex and
//! OpenCode spend their own accounts.

use pagent_engine::Reviewer;
use pagent_protocol::stream::AgentKind;

/// The line `pagent loop` says at start about its agent.
pub fn loop_agent(kind: AgentKind) -> &'static str {
    match kind {
        AgentKind::Claude => {
            "each iteration runs `claude -p`: on a Claude subscription that spends the plan's \
             separate Agent SDK credit, billed at API prices (since 2026-06-15), not its usage \
             limits; with an API key, your API account (docs/costs.md)"
        }
        AgentKind::Codex => {
            "each iteration runs `codex exec`: it spends your Codex plan's usage or your API \
             key's account (docs/costs.md)"
        }
        AgentKind::Opencode => {
            "each iteration runs `opencode run`: it spends the account of the provider OpenCode \
             is set up with (docs/costs.md)"
        }
    }
}

/// The line set-up says about a Claude reviewer (`None` for other reviewers).
pub fn reviewer(reviewer: &Reviewer) -> Option<&'static str> {
    matches!(reviewer, Reviewer::Claude).then_some(
        "the reviewer runs `claude -p`: on a Claude subscription that spends the plan's \
         separate Agent SDK credit, billed at API prices, not its usage limits; with an API \
         key, your API account (docs/costs.md)",
    )
}

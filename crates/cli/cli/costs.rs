//! Which account pays: what each agent pagent starts spends, said where it starts (`pagent
//! loop`'s first lines, a loop set up with a reviewer). `docs/costs.md` says the same at
//! length, with the date each billing fact was checked and its source.
//!
//! These lines say only what stays true whatever a vendor's policy of the month: an agent
//! runs on the account its CLI is logged in with. For Claude Code that is a Claude
//! subscription's usage limits (the interactive session and `claude -p` alike) or an API
//! key's account; Codex and OpenCode spend their own. No price, credit or date belongs
//! here: a separate Agent SDK credit announced for 2026-06-15 never took effect, and a line
//! that named it told every user something untrue (issue 30).

use pagent_engine::Reviewer;
use pagent_protocol::stream::AgentKind;

/// Who pays for a `claude -p` run.
const CLAUDE: &str = "on the account Claude Code is logged in with: a Claude subscription's \
                      usage limits, or an API key's account (docs/costs.md)";
/// Who pays for a `codex exec` run.
const CODEX: &str = "on the account Codex is logged in with: a ChatGPT plan's usage, or an API \
                     key's account (docs/costs.md)";
/// Who pays for an `opencode run` run.
const OPENCODE: &str = "on the account of the provider OpenCode is set up with (docs/costs.md)";

/// The line `pagent loop` says at start about its agent.
pub fn loop_agent(kind: AgentKind) -> String {
    let (runs, pays) = match kind {
        AgentKind::Claude => ("claude -p", CLAUDE),
        AgentKind::Codex => ("codex exec", CODEX),
        AgentKind::Opencode => ("opencode run", OPENCODE),
    };
    format!("each iteration runs `{runs}` {pays}")
}

/// The line set-up says about a reviewer that is an agent (`None` for a command).
pub fn reviewer(reviewer: &Reviewer) -> Option<String> {
    let (runs, pays) = match reviewer {
        Reviewer::Claude => ("claude -p", CLAUDE),
        Reviewer::Codex => ("codex exec", CODEX),
        Reviewer::Opencode => ("opencode run", OPENCODE),
        Reviewer::Command(_) => return None,
    };
    Some(format!("the reviewer runs `{runs}` {pays}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Issue 30: every line names the account that pays and nothing a vendor may change
    /// (a credit, a price, a date); the docs carry those, with their sources.
    #[test]
    fn issue_30_1_no_billing_line_names_a_credit_a_price_or_a_date() {
        let kinds = [AgentKind::Claude, AgentKind::Codex, AgentKind::Opencode];
        let reviewers = [Reviewer::Claude, Reviewer::Codex, Reviewer::Opencode];
        let lines = kinds
            .into_iter()
            .map(loop_agent)
            .chain(reviewers.iter().filter_map(reviewer));
        for line in lines {
            assert!(line.contains(" on the account "), "{line}");
            for word in ["credit", "SDK", "price", "billed", "since", "20", "$"] {
                assert!(!line.contains(word), "{word:?} in {line}");
            }
        }
        assert_eq!(reviewer(&Reviewer::Command("./review.sh".to_owned())), None);
    }
}

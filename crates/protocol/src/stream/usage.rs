//! The usage records of agent streams: tokens, and cost where the agent knows it.
//!
//! Kept apart from [`super::parse_line`]'s events because only `pagent loop`'s budgets and
//! status want them, and each agent reports usage once per run or step, not per message:
//!
//! - Claude Code: the `result` record's `usage` (the whole run) and `total_cost_usd`.
//! - Codex: `turn.completed`'s `usage`, where `input_tokens` includes the cached ones
//!   (`cached_input_tokens`); no cost.
//! - OpenCode: each `step_finish` part's `tokens` (`input`, `output`, `reasoning`,
//!   `cache.read`, `cache.write`) and `cost`, which it computes from its own model
//!   prices: 0 when it has none, so 0 counts as "not reported".

use serde_json::Value;

use super::{AgentKind, str_at};
use crate::TokenCounts;

/// One usage record of a run.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageRecord {
    pub model: Option<String>,
    pub tokens: TokenCounts,
    pub cost_usd: Option<f64>,
}

/// The usage record on one line of `kind`'s stdout, if it has one; never panics.
pub fn parse_usage(kind: AgentKind, line: &str) -> Option<UsageRecord> {
    // Most lines are text and tool calls: skip them without parsing.
    let marker = match kind {
        AgentKind::Claude => "\"result\"",
        AgentKind::Codex => "turn.completed",
        AgentKind::Opencode => "step_finish",
    };
    if !line.contains(marker) {
        return None;
    }
    let value: Value = serde_json::from_str(line).ok()?;
    match kind {
        AgentKind::Claude => claude(&value),
        AgentKind::Codex => codex(&value),
        AgentKind::Opencode => opencode(&value),
    }
}

fn count(value: &Value, key: &str) -> u64 {
    value.get(key).and_then(Value::as_u64).unwrap_or(0)
}

fn cost(value: Option<&Value>) -> Option<f64> {
    value
        .and_then(Value::as_f64)
        .filter(|c| c.is_finite() && *c > 0.0)
}

fn claude(line: &Value) -> Option<UsageRecord> {
    if str_at(line, "type") != Some("result") {
        return None;
    }
    let usage = line.get("usage").filter(|u| u.is_object());
    let cost_usd = cost(line.get("total_cost_usd"));
    if usage.is_none() && cost_usd.is_none() {
        return None;
    }
    let model = line
        .get("modelUsage")
        .and_then(Value::as_object)
        .and_then(|models| models.keys().next().cloned());
    Some(UsageRecord {
        model,
        tokens: usage.map(TokenCounts::from_anthropic).unwrap_or_default(),
        cost_usd,
    })
}

fn codex(line: &Value) -> Option<UsageRecord> {
    if str_at(line, "type") != Some("turn.completed") {
        return None;
    }
    let usage = line.get("usage").filter(|u| u.is_object())?;
    let input = count(usage, "input_tokens");
    let cached = count(usage, "cached_input_tokens").min(input);
    Some(UsageRecord {
        model: None,
        tokens: TokenCounts {
            input: input - cached,
            output: count(usage, "output_tokens"),
            cache_read: cached,
            cache_write: 0,
        },
        cost_usd: None,
    })
}

fn opencode(line: &Value) -> Option<UsageRecord> {
    if str_at(line, "type") != Some("step_finish") {
        return None;
    }
    let part = line.get("part").filter(|p| p.is_object())?;
    let tokens = part.get("tokens").filter(|t| t.is_object())?;
    let cache = tokens.get("cache");
    let cached = |key: &str| cache.map_or(0, |c| count(c, key));
    Some(UsageRecord {
        model: None,
        tokens: TokenCounts {
            input: count(tokens, "input"),
            output: count(tokens, "output").saturating_add(count(tokens, "reasoning")),
            cache_read: cached("read"),
            cache_write: cached("write"),
        },
        cost_usd: cost(part.get("cost")),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fixture_records(kind: AgentKind, stream: &str) -> Vec<UsageRecord> {
        stream
            .lines()
            .filter_map(|line| parse_usage(kind, line))
            .collect()
    }

    #[test]
    fn claude_codes_result_gives_the_runs_usage_and_cost() {
        let stream = include_str!("../../../../tests/fixtures/agents/claude-2.1.197.jsonl");
        let records = fixture_records(AgentKind::Claude, stream);
        assert_eq!(
            records,
            [UsageRecord {
                model: Some("claude-opus-4-8[1m]".into()),
                tokens: TokenCounts {
                    input: 30,
                    output: 15,
                    cache_read: 0,
                    cache_write: 0
                },
                cost_usd: Some(0.000525),
            }]
        );
    }

    #[test]
    fn codex_turns_give_tokens_with_the_cached_part_split_out() {
        let stream = include_str!("../../../../tests/fixtures/agents/codex-0.169.0/text.jsonl");
        let records = fixture_records(AgentKind::Codex, stream);
        assert_eq!(records.len(), 1);
        assert_eq!(records[0].tokens.input + records[0].tokens.output, 120);
        assert_eq!(records[0].cost_usd, None);
        let line = r#"{"type":"turn.completed","usage":{"input_tokens":100,"cached_input_tokens":80,"output_tokens":7}}"#;
        let record = parse_usage(AgentKind::Codex, line).unwrap();
        assert_eq!(
            record.tokens,
            TokenCounts {
                input: 20,
                output: 7,
                cache_read: 80,
                cache_write: 0
            }
        );
    }

    #[test]
    fn opencode_steps_give_tokens_and_a_zero_cost_is_unknown() {
        let stream = include_str!("../../../../tests/fixtures/agents/opencode-1.18.33/tool.jsonl");
        let records = fixture_records(AgentKind::Opencode, stream);
        assert!(!records.is_empty());
        assert!(records.iter().all(|r| r.cost_usd.is_none()));
        let total: u64 = records
            .iter()
            .map(|r| r.tokens.input + r.tokens.output)
            .sum();
        assert_eq!(total, 120 * records.len() as u64);
        let line = r#"{"type":"step_finish","part":{"tokens":{"input":5,"output":1,"reasoning":2,"cache":{"read":3,"write":4}},"cost":0.25}}"#;
        let record = parse_usage(AgentKind::Opencode, line).unwrap();
        assert_eq!(record.tokens.output, 3);
        assert_eq!(record.cost_usd, Some(0.25));
    }

    #[test]
    fn odd_usage_values_count_as_zero_and_other_lines_give_nothing() {
        for (kind, line) in [
            (
                AgentKind::Claude,
                r#"{"type":"result","usage":{"input_tokens":-4,"output_tokens":"x"},"total_cost_usd":-1}"#,
            ),
            (
                AgentKind::Codex,
                r#"{"type":"turn.completed","usage":{"input_tokens":1e400}}"#,
            ),
        ] {
            if let Some(record) = parse_usage(kind, line) {
                assert_eq!(record.tokens, TokenCounts::default(), "{line}");
                assert_eq!(record.cost_usd, None);
            }
        }
        assert_eq!(
            parse_usage(AgentKind::Claude, r#"{"type":"assistant","text":"result"}"#),
            None
        );
        assert_eq!(
            parse_usage(AgentKind::Opencode, "step_finish but not json"),
            None
        );
        assert_eq!(
            parse_usage(AgentKind::Codex, r#"{"type":"turn.completed"}"#),
            None
        );
    }
}

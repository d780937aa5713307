//! Table tests of usage: adding reports, pricing them, and saying where a cost came from.

use super::*;

fn report(model: &str, input: u64, output: u64, cost: Option<u64>) -> Report {
    Report {
        model: Some(model.to_owned()),
        tokens: Tokens {
            input,
            output,
            ..Tokens::default()
        },
        cost_microusd: cost,
    }
}

#[test]
fn prices_match_the_longest_prefix_and_the_users_first() {
    let prices = Prices::built_in();
    let sonnet = prices.find("claude-sonnet-4-5-20250929").unwrap();
    assert_eq!((sonnet.input, sonnet.output), (3_000_000, 15_000_000));
    assert_eq!(prices.find("gpt-5-mini").unwrap().prefix, "gpt-5-mini");
    assert_eq!(prices.find("gpt-5.1-codex").unwrap().prefix, "gpt-5");
    assert_eq!(
        prices.find("anthropic/claude-opus-5-5").unwrap().prefix,
        "claude-opus"
    );
    assert_eq!(
        prices.find("claude-opus-4-1[1m]").unwrap().prefix,
        "claude-opus-4-1"
    );
    assert!(prices.find("mystery").is_none());
    let user = Prices::with_user(vec![Price {
        prefix: "claude".into(),
        input: 1,
        output: 2,
        cache_read: 0,
        cache_write: 0,
        source: PriceSource::BuiltIn,
    }]);
    let found = user.find("claude-sonnet-4-5").unwrap();
    assert_eq!(
        (found.prefix.as_str(), found.source),
        ("claude", PriceSource::User)
    );
}

#[test]
fn reports_add_up_with_the_source_of_the_cost_named() {
    let prices = Prices::built_in();
    let cases: Vec<(Vec<Report>, u64, u64, &str)> = vec![
        (vec![], 0, 0, "no cost reported or priced"),
        (
            vec![report("claude-sonnet-4", 1_000_000, 0, None)],
            1_000_000,
            3_000_000,
            "estimated from pagent's list prices",
        ),
        (
            vec![report("claude-sonnet-4", 10, 5, Some(420))],
            15,
            420,
            "reported by the agent",
        ),
        (
            vec![
                report("claude-sonnet-4", 10, 5, Some(420)),
                report("claude-haiku-4-5", 1_000_000, 0, None),
            ],
            1_000_015,
            1_000_420,
            "reported by the agent and estimated from pagent's list prices",
        ),
        (
            vec![report("mystery", 100, 0, None)],
            100,
            0,
            "no cost reported or priced; 100 tokens of a model with no price not counted",
        ),
    ];
    for (reports, total, cost, source) in cases {
        let mut usage = Usage::default();
        for r in &reports {
            usage.add(r, &prices);
        }
        assert_eq!(usage.tokens.total(), total, "{reports:?}");
        assert_eq!(usage.cost_microusd, cost, "{reports:?}");
        assert_eq!(usage.cost_source(), source, "{reports:?}");
        assert_eq!(usage.reports, reports.len() as u64);
    }
}

/// A forged report of `u64::MAX` tokens and cost saturates: the total never wraps back
/// under a budget.
#[test]
fn absurd_reports_saturate_instead_of_wrapping() {
    let prices = Prices::built_in();
    let mut usage = Usage::default();
    usage.add(&report("claude-opus-5", u64::MAX, u64::MAX, None), &prices);
    usage.add(
        &report("claude-opus-5", u64::MAX, 1, Some(u64::MAX)),
        &prices,
    );
    usage.add(&report("claude-opus-5", 1, 1, Some(1)), &prices);
    assert_eq!(usage.tokens.total(), u64::MAX);
    assert_eq!(usage.cost_microusd, u64::MAX);
}

#[test]
fn growth_counts_only_what_a_message_added() {
    let counted = Tokens {
        input: 10,
        output: 5,
        ..Tokens::default()
    };
    let again = Tokens {
        input: 10,
        output: 40,
        ..Tokens::default()
    };
    assert_eq!(
        again.growth_over(&counted),
        Tokens {
            output: 35,
            ..Tokens::default()
        }
    );
    assert_eq!(counted.growth_over(&again), Tokens::default());
}

#[test]
fn figures_read_well() {
    assert_eq!(format_count(950), "950");
    assert_eq!(format_count(12_345), "12.3k");
    assert_eq!(format_count(4_560_000), "4.56M");
    assert_eq!(format_cost(420_000), "$0.42");
    assert_eq!(format_cost(12_500_000), "$12.50");
    assert_eq!(format_cost(3_100), "$0.0031");
    assert_eq!(format_cost(0), "$0.00");
    assert_eq!(format_cost(999_999), "$1.00");
    let mut usage = Usage::default();
    assert_eq!(usage.summary(), "tokens not reported");
    usage.add(
        &report("claude-sonnet-4", 12_000, 345, None),
        &Prices::built_in(),
    );
    assert_eq!(usage.summary(), "12.3k tokens, $0.04");
    assert_eq!(per_million(-1.0), None);
    assert_eq!(per_million(f64::NAN), None);
    assert_eq!(per_million(3.0), Some(3_000_000));
}

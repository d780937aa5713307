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

#[test]
fn the_larger_of_each_field_is_kept() {
    let a = Tokens {
        input: 10,
        output: 1,
        cache_read: 30,
        cache_write: 2,
    };
    let b = Tokens {
        input: 5,
        output: 20,
        cache_read: 3,
        cache_write: 40,
    };
    let larger = Tokens {
        input: 10,
        output: 20,
        cache_read: 30,
        cache_write: 40,
    };
    assert_eq!(a.max(&b), larger);
    assert_eq!(b.max(&a), larger);
}

/// Each of the four counts is priced at its own rate and the parts are summed.
#[test]
fn a_price_sums_the_four_counts_each_at_its_rate() {
    let price = Price {
        prefix: "m".into(),
        input: 1_000_000,
        output: 2_000_000,
        cache_read: 3_000_000,
        cache_write: 4_000_000,
        source: PriceSource::User,
    };
    for (input, output, cache_read, cache_write, micros) in [
        (0, 0, 0, 0, 0),
        (1_000_000, 0, 0, 0, 1_000_000),
        (0, 1_000_000, 0, 0, 2_000_000),
        (0, 0, 1_000_000, 0, 3_000_000),
        (0, 0, 0, 1_000_000, 4_000_000),
        (1_000_000, 1_000_000, 1_000_000, 1_000_000, 10_000_000),
        (7, 5, 3, 2, 34),
        (1, 0, 0, 0, 1),
    ] {
        let tokens = Tokens {
            input,
            output,
            cache_read,
            cache_write,
        };
        assert_eq!(price.cost_microusd(&tokens), micros, "{tokens:?}");
    }
}

/// A report of no tokens and no cost costs nothing and is priced by no one: the cost stays
/// unknown, so a cost budget is not judged on it.
#[test]
fn a_report_of_no_tokens_names_no_price() {
    let mut usage = Usage::default();
    usage.add(&report("claude-sonnet-4", 0, 0, None), &Prices::built_in());
    assert_eq!(usage.reports, 1);
    assert!(!usage.cost_known());
    assert_eq!(usage.cost_sources, CostSources::default());
    assert_eq!(usage.summary(), "0 tokens");
}

/// (reports) -> the status line: a cost only when one is known, and a `+` when some tokens
/// had no price.
#[test]
fn the_summary_shows_a_cost_only_when_one_is_known() {
    let cases: Vec<(Vec<Report>, &str)> = vec![
        (vec![], "tokens not reported"),
        (vec![report("mystery", 100, 0, None)], "100 tokens"),
        (
            vec![report("claude-sonnet-4", 1_000_000, 0, None)],
            "1.00M tokens, $3.00",
        ),
        (
            vec![
                report("claude-sonnet-4", 1_000_000, 0, None),
                report("mystery", 100, 0, None),
            ],
            "1.00M tokens, $3.00+",
        ),
        (
            vec![report("mystery", 100, 0, Some(20_000))],
            "100 tokens, $0.02",
        ),
    ];
    for (reports, expected) in cases {
        let mut usage = Usage::default();
        for r in &reports {
            usage.add(r, &Prices::built_in());
        }
        assert_eq!(usage.summary(), expected, "{reports:?}");
        assert_eq!(usage.cost_known(), expected.contains('$'), "{reports:?}");
    }
}

/// Under a cent the cost keeps two significant digits (never `$0.0000` for a cost that is
/// not zero); a cent and up, two places.
#[test]
fn a_cent_is_where_the_short_form_starts() {
    for (micros, text) in [
        (1, "$0.000001"),
        (50, "$0.00005"),
        (51, "$0.000051"),
        (149, "$0.00015"),
        (3_149, "$0.0031"),
        (3_150, "$0.0032"),
        (9_949, "$0.0099"),
        (9_950, "$0.01"),
        (9_999, "$0.01"),
        (10_000, "$0.01"),
        (10_001, "$0.01"),
        (14_999, "$0.01"),
        (15_000, "$0.02"),
        (1_000_000, "$1.00"),
        (1_009_999, "$1.01"),
    ] {
        assert_eq!(format_cost(micros), text, "{micros}");
    }
}

/// The state file leaves out cost sources and unpriced tokens when there are none, keeps
/// them when there are, and reads back what it wrote.
#[test]
fn usage_is_written_without_its_empty_fields_and_read_back() {
    let empty = serde_json::to_value(Usage::default()).unwrap();
    assert_eq!(empty.get("cost_sources"), None);
    assert_eq!(empty.get("unpriced_tokens"), None);
    assert_eq!(empty.get("reports"), Some(&serde_json::json!(0)));
    let mut usage = Usage::default();
    usage.add(&report("claude-sonnet-4", 10, 0, None), &Prices::built_in());
    usage.add(&report("mystery", 100, 0, None), &Prices::built_in());
    let written = serde_json::to_value(&usage).unwrap();
    assert_eq!(
        written.get("cost_sources"),
        Some(&serde_json::json!({"built_in_prices": true}))
    );
    assert_eq!(
        written.get("unpriced_tokens"),
        Some(&serde_json::json!(100))
    );
    let read: Usage = serde_json::from_value(written).unwrap();
    assert_eq!(read, usage);
    let read: Usage = serde_json::from_value(empty).unwrap();
    assert_eq!(read, Usage::default());
}

/// The prices as the code held them before they became data (issue 31, item 4): the
/// table must still say each of them, and nothing else.
const PRICES_WHEN_THEY_WERE_CODE: &[(&str, f64, f64, f64, f64)] = &[
    ("claude-3-opus", 15.0, 75.0, 1.5, 18.75),
    ("claude-opus-4-0", 15.0, 75.0, 1.5, 18.75),
    ("claude-opus-4-1", 15.0, 75.0, 1.5, 18.75),
    ("claude-opus-4-2", 15.0, 75.0, 1.5, 18.75),
    ("claude-opus", 5.0, 25.0, 0.5, 6.25),
    ("claude-sonnet", 3.0, 15.0, 0.3, 3.75),
    ("claude-3-5-sonnet", 3.0, 15.0, 0.3, 3.75),
    ("claude-3-7-sonnet", 3.0, 15.0, 0.3, 3.75),
    ("claude-haiku", 1.0, 5.0, 0.1, 1.25),
    ("claude-3-5-haiku", 0.8, 4.0, 0.08, 1.0),
    ("gpt-5", 1.25, 10.0, 0.125, 0.0),
    ("gpt-5-mini", 0.25, 2.0, 0.025, 0.0),
    ("gpt-5-nano", 0.05, 0.4, 0.005, 0.0),
    ("gpt-4.1", 2.0, 8.0, 0.5, 0.0),
    ("gpt-4o", 2.5, 10.0, 1.25, 0.0),
    ("o3", 2.0, 8.0, 0.5, 0.0),
    ("o4-mini", 1.1, 4.4, 0.275, 0.0),
];

#[test]
fn issue_31_the_embedded_price_table_parses_and_matches_the_code() {
    let parsed = super::list::parse(PRICES_TOML).expect("prices.toml parses");
    assert_eq!(parsed.as_slice(), list_prices());
    assert_eq!(
        parsed.len(),
        PRICES_TOML.matches("[[price]]").count(),
        "every entry read"
    );
    let rows: Vec<(&str, f64, f64, f64, f64)> = parsed
        .iter()
        .map(|p| {
            let rates = (p.input, p.output, p.cache_read, p.cache_write);
            (p.prefix.as_ref(), rates.0, rates.1, rates.2, rates.3)
        })
        .collect();
    assert_eq!(rows, PRICES_WHEN_THEY_WERE_CODE);
    // Every figure is one a price can have, so none is dropped on the way in.
    assert_eq!(Prices::built_in().entries().len(), parsed.len());
    for price in &parsed {
        let date = price.checked.as_bytes();
        let is_date = date.len() == 10
            && date[4] == b'-'
            && date[7] == b'-'
            && date
                .iter()
                .enumerate()
                .all(|(i, b)| i == 4 || i == 7 || b.is_ascii_digit());
        assert!(is_date, "{}: checked {:?}", price.prefix, price.checked);
        assert!(price.source.starts_with("https://"), "{}", price.prefix);
        assert!(price.via.as_deref().is_none_or(|v| !v.trim().is_empty()));
    }
}

#[test]
fn issue_31_a_broken_price_table_is_an_error_not_a_guess() {
    let missing_date = "[[price]]\nprefix = \"x\"\ninput = 1.0\noutput = 1.0\ncache_read = 0.1\ncache_write = 0.0\nsource = \"https://example.invalid\"\n";
    assert!(super::list::parse(missing_date).is_err());
    let unknown = format!("{missing_date}checked = \"2026-11-27\"\nsale = true\n");
    assert!(super::list::parse(&unknown).is_err());
}

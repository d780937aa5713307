//! Table tests of budgets at their edges: the largest budget accepted and the first one
//! refused, the exact figures of a reached token budget, and text that only looks like a
//! number.

use super::*;

/// Each largest budget is accepted, one unit more is refused with the largest shown, and a
/// state file may hold the largest but not one more.
#[test]
fn the_largest_budgets_are_accepted_and_one_more_is_not() {
    assert_eq!(MAX_DURATION_SECS, 30 * 86_400);
    assert_eq!(parse_duration("30d"), Ok(2_592_000));
    assert_eq!(parse_duration("720h"), Ok(2_592_000));
    assert_eq!(
        parse_duration("2592001"),
        Err("a duration may be at most 720h00m".to_owned())
    );
    assert_eq!(parse_tokens("1000G"), Ok(1_000_000_000_000));
    assert_eq!(
        parse_tokens("1000000000001"),
        Err("a token budget may be at most 1000000000000".to_owned())
    );
    assert_eq!(parse_cost("100000"), Ok(100_000_000_000));
    assert_eq!(
        parse_cost("100000.000001"),
        Err("a cost budget may be at most $100000.00".to_owned())
    );
    let largest = Budget {
        max_duration_secs: Some(MAX_DURATION_SECS),
        max_tokens: Some(MAX_TOKENS),
        max_cost_microusd: Some(MAX_COST_MICROUSD),
    };
    assert!(largest.is_valid());
    for over in [
        Budget {
            max_duration_secs: Some(MAX_DURATION_SECS + 1),
            ..largest
        },
        Budget {
            max_tokens: Some(MAX_TOKENS + 1),
            ..largest
        },
        Budget {
            max_cost_microusd: Some(MAX_COST_MICROUSD + 1),
            ..largest
        },
    ] {
        assert!(!over.is_valid(), "{over:?}");
    }
}

/// A fraction of up to twelve digits is read (the digits past the scale round down); a
/// longer one is not a number. A `+` sign is not digits either, though Rust's integer
/// parsing would take it, in the whole part or the fraction.
#[test]
fn a_decimal_is_digits_only_and_at_most_twelve_after_the_point() {
    for (text, scale, expected) in [
        ("1.000000000000", 1_000_000, Some(1_000_000)),
        ("1.999999999999", 1_000_000, Some(1_999_999)),
        ("0.000000000001", 1_000_000, Some(0)),
        ("1.0000000000000", 1_000_000, None),
        ("0.0000000000001", 1_000_000_000, None),
        ("1.5", 1, Some(1)),
        ("12", 1, Some(12)),
        (".5", 10, Some(5)),
        ("5.", 10, Some(50)),
        (".", 10, None),
        ("", 10, None),
        ("+5", 10, None),
        ("+5.5", 10, None),
        ("5.+5", 10, None),
        ("5.5+", 10, None),
        ("-5", 10, None),
        (" 5", 10, None),
        ("5.5.5", 10, None),
        ("٥", 10, None),
        ("18446744073709551616", 1, None),
        ("18446744073709551615", 1, Some(u64::MAX)),
        ("18446744073709551615", 10, None),
    ] {
        assert_eq!(parse_decimal(text, scale), expected, "{text:?} x {scale}");
    }
    assert_eq!(
        parse_cost("+5"),
        Err("\"+5\" is not an amount of US dollars like 5, 0.50 or $12".to_owned())
    );
    assert!(parse_tokens("+5k").is_err());
    assert_eq!(
        parse_cost("0.000000000001"),
        Err("a cost budget must be more than 0".to_owned())
    );
    assert_eq!(parse_cost("1.000000000000"), Ok(1_000_000));
}

/// (used, limit) -> the description: the exact figures are added when either short figure
/// rounded, not only when both did.
#[test]
fn exact_token_figures_are_added_when_either_short_one_rounds() {
    for (used, limit, expected) in [
        (45, 40, "the token budget (45 tokens used of 40)"),
        (999, 999, "the token budget (999 tokens used of 999)"),
        (
            1_500,
            950,
            "the token budget (1.5k tokens used of 950; 1500 of 950)",
        ),
        (
            950,
            1_500,
            "the token budget (950 tokens used of 1.5k; 950 of 1500)",
        ),
        (
            1_234,
            1_000,
            "the token budget (1.2k tokens used of 1.0k; 1234 of 1000)",
        ),
    ] {
        assert_eq!(Reached::Tokens { used, limit }.describe(), expected);
    }
}

#[test]
fn a_budget_is_empty_only_without_any_limit() {
    assert!(Budget::default().is_empty());
    for budget in [
        Budget {
            max_duration_secs: Some(1),
            ..Budget::default()
        },
        Budget {
            max_tokens: Some(1),
            ..Budget::default()
        },
        Budget {
            max_cost_microusd: Some(1),
            ..Budget::default()
        },
    ] {
        assert!(!budget.is_empty(), "{budget:?}");
    }
    assert_eq!(Budget::default().describe(), "");
}

//! pagent's list prices, as data: `prices.toml` beside this crate's manifest (so `cargo
//! package` carries it), embedded at build time and read once, at the first price asked
//! for. Each entry carries the date it was checked and its public source, which
//! `docs/costs.md` shows (a test keeps the two equal); the user's own `prices` come
//! before all of them ([`super::Prices::with_user`]).

use std::sync::LazyLock;

use serde::Deserialize;

/// The table as written.
pub const PRICES_TOML: &str = include_str!("../../prices.toml");

/// One entry of the table: a price per million tokens, in dollars, and where it is from.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListPrice {
    /// Matches a model name that starts with it (after a `provider/` part).
    pub prefix: String,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    /// When the figures were last compared with their source (`YYYY-MM-DD`).
    pub checked: String,
    /// The vendor's own price page.
    pub source: String,
    /// Where the figures were read when the vendor's page could not be, on that date.
    #[serde(default)]
    pub via: Option<String>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    price: Vec<ListPrice>,
}

/// The table parsed: an embedded file that does not parse gives no list prices (every
/// token then unpriced unless the user priced it); its test keeps that from shipping.
pub fn parse(text: &str) -> Result<Vec<ListPrice>, toml::de::Error> {
    toml::from_str::<Table>(text).map(|table| table.price)
}

static LIST: LazyLock<Vec<ListPrice>> = LazyLock::new(|| parse(PRICES_TOML).unwrap_or_default());

/// pagent's list prices, in the table's order.
pub fn list_prices() -> &'static [ListPrice] {
    &LIST
}

//! pagent's list prices, as data: `prices.toml` beside this crate's manifest (so `cargo
//! package` carries it), made a table of Rust when the crate is built (`build.rs`), so no
//! hook parses it. Each entry carries the date it was checked and its public source, which
//! `docs/costs.md` shows (a test keeps the two equal); the user's own `prices` come
//! before all of them ([`super::Prices::with_user`]).

use std::borrow::Cow;

use serde::Deserialize;

/// The table as written.
pub const PRICES_TOML: &str = include_str!("../../prices.toml");

/// One entry of the table: a price per million tokens, in dollars, and where it is from.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ListPrice {
    /// Matches a model name that starts with it (after a `provider/` part).
    pub prefix: Cow<'static, str>,
    pub input: f64,
    pub output: f64,
    pub cache_read: f64,
    pub cache_write: f64,
    /// When the figures were last compared with their source (`YYYY-MM-DD`).
    pub checked: Cow<'static, str>,
    /// The vendor's own price page.
    pub source: Cow<'static, str>,
    /// Where the figures were read when the vendor's page could not be, on that date.
    #[serde(default)]
    pub via: Option<Cow<'static, str>>,
}

#[cfg(test)]
#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Table {
    price: Vec<ListPrice>,
}

/// The table parsed at run time, as `build.rs` parsed it (its test keeps the two equal).
#[cfg(test)]
pub(crate) fn parse(text: &str) -> Result<Vec<ListPrice>, toml::de::Error> {
    toml::from_str::<Table>(text).map(|table| table.price)
}

/// The table `build.rs` made of `prices.toml` (a file that does not parse fails the build).
static LIST: &[ListPrice] = include!(concat!(env!("OUT_DIR"), "/prices.rs"));

/// pagent's list prices, in the table's order.
pub fn list_prices() -> &'static [ListPrice] {
    LIST
}

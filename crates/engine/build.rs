//! pagent's list prices (`prices.toml`) as a Rust table, parsed here once when the crate is
//! built rather than in every hook that prices a turn: the TOML parse was a measurable part
//! of an active loop's Stop (issue 33). `src/usage/list.rs` includes the table; its test
//! parses the file at run time too and keeps the two equal.
//!
//! The engine's rules (no files, no environment, no panics) are for the engine as it
//! runs; this runs when it is built, and a table that does not parse must stop the build.
#![allow(
    clippy::disallowed_methods,
    clippy::expect_used,
    clippy::panic,
    reason = "a build script: it reads prices.toml and writes into OUT_DIR, and fails the build on a broken table"
)]

use std::fmt::Write as _;
use std::path::PathBuf;

fn main() {
    println!("cargo::rerun-if-changed=prices.toml");
    let text = std::fs::read_to_string("prices.toml").expect("prices.toml beside Cargo.toml");
    let table: toml::Table = text.parse().expect("prices.toml parses");
    let prices = table["price"]
        .as_array()
        .expect("prices.toml: [[price]] entries");
    let mut out = String::from("&[\n");
    for price in prices {
        let price = price
            .as_table()
            .expect("prices.toml: a [[price]] is a table");
        let text = |key: &str| -> String {
            let value = price[key]
                .as_str()
                .unwrap_or_else(|| panic!("{key} is a string"));
            format!("Cow::Borrowed({value:?})")
        };
        let rate = |key: &str| -> String {
            let value = &price[key];
            let value = value
                .as_float()
                .or_else(|| value.as_integer().map(|i| i as f64))
                .unwrap_or_else(|| panic!("{key} is a number"));
            format!("{value:?}")
        };
        let via = match price.get("via") {
            Some(via) => format!("Some({})", text_of(via)),
            None => "None".to_owned(),
        };
        writeln!(
            out,
            "    ListPrice {{ prefix: {}, input: {}, output: {}, cache_read: {}, cache_write: {}, checked: {}, source: {}, via: {via} }},",
            text("prefix"),
            rate("input"),
            rate("output"),
            rate("cache_read"),
            rate("cache_write"),
            text("checked"),
            text("source"),
        )
        .expect("a String takes writes");
    }
    out.push(']');
    let dir = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    std::fs::write(dir.join("prices.rs"), out).expect("OUT_DIR is writable");
}

fn text_of(value: &toml::Value) -> String {
    let value = value.as_str().expect("via is a string");
    format!("Cow::Borrowed({value:?})")
}

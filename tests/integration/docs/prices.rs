//! pagent's list prices are data (`crates/engine/prices.toml`, issue 31, item 4), and
//! every price carries the date it was checked and its public source in the docs: the
//! table in `docs/costs.md` is made from the data, so neither can change alone.
//! `PAGENT_BLESS_DOCS=1` rewrites the table from the data (review the diff).

use pagent_engine::usage::list_prices;

use super::{read, repo};

const DOC: &str = "docs/costs.md";
const HEADER: &str =
    "| model prefix | input | output | cache read | cache write | checked | source |";

/// The table as the data says it.
fn table() -> String {
    let mut out = format!("{HEADER}\n| --- | --- | --- | --- | --- | --- | --- |\n");
    for p in list_prices() {
        let via = p
            .via
            .as_deref()
            .map(|v| format!(", read via {v}"))
            .unwrap_or_default();
        out.push_str(&format!(
            "| `{}` | ${} | ${} | ${} | ${} | {} | <{}>{via} |\n",
            p.prefix, p.input, p.output, p.cache_read, p.cache_write, p.checked, p.source
        ));
    }
    out
}

/// The table's lines in the page: from its header to the first line that is not a row.
fn table_in(page: &str) -> Option<std::ops::Range<usize>> {
    let start = page.find(HEADER)?;
    let mut end = start;
    for line in page[start..].split_inclusive('\n') {
        if !line.starts_with('|') {
            break;
        }
        end += line.len();
    }
    Some(start..end)
}

#[test]
fn issue_31_every_list_price_is_in_the_docs_with_its_date_and_source() {
    assert!(!list_prices().is_empty(), "the embedded table parses");
    let page = read(std::path::Path::new(DOC));
    let range = table_in(&page).unwrap_or_else(|| panic!("{DOC} has no table of list prices"));
    let expected = table();
    if page[range.clone()] != expected && std::env::var_os("PAGENT_BLESS_DOCS").is_some() {
        let mut blessed = page.clone();
        blessed.replace_range(range, &expected);
        std::fs::write(repo().join(DOC), blessed).unwrap();
        return;
    }
    assert_eq!(
        page[range].to_owned(),
        expected,
        "{DOC}'s list prices differ from crates/engine/prices.toml (PAGENT_BLESS_DOCS=1 rewrites them)"
    );
}

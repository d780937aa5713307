//! Where each story of a `prd.json` is, in bytes: serde reads the values but forgets the
//! places, and ticking a story must rewrite its `"passes": false` and nothing else (no
//! re-serialising, which would reorder keys, reindent and drop what pagent does not
//! know). jsonc-parser (dprint's parser, the one behind editors' formatters) gives every
//! value its byte range; this notes, for each element of the top-level `userStories`
//! array, the object's bytes and its `passes` value's bytes.
//!
//! It runs only on text serde has already parsed (nesting at most 128 deep), but is
//! written for any bytes: nesting deeper than serde's is refused as serde refuses it
//! (and the parser stops at 512 levels itself, so it never recurses without bound), and
//! anything it does not expect gives `None` (the plan is then read, but cannot be
//! ticked).

use std::ops::Range;

use jsonc_parser::ast::{ObjectProp, Value};
use jsonc_parser::common::Ranged;
use jsonc_parser::{CollectOptions, ParseOptions, parse_to_ast};

/// Deeper nesting than this is not a PRD (serde_json stops at 128 too).
const MAX_DEPTH: usize = 128;

/// One element of `userStories`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StorySpan {
    pub object: Range<usize>,
    pub passes: Option<Range<usize>>,
    pub members: usize,
}

pub(super) fn user_story_spans(text: &str) -> Option<Vec<StorySpan>> {
    if too_deep(text) {
        return None;
    }
    let strict = ParseOptions {
        allow_comments: false,
        allow_loose_object_property_names: false,
        allow_trailing_commas: false,
        allow_missing_commas: false,
        allow_single_quoted_strings: false,
        allow_hexadecimal_numbers: false,
        allow_unary_plus_numbers: false,
        allow_bare_decimal_point_numbers: false,
        allow_extended_string_escapes: false,
        allow_non_finite_numbers: false,
    };
    // Ranges count from after a byte-order mark, which the text keeps.
    let body = text.strip_prefix('\u{feff}').unwrap_or(text);
    let shift = text.len() - body.len();
    let parsed = parse_to_ast(body, &CollectOptions::default(), &strict).ok()?;
    let Some(Value::Object(top)) = parsed.value else {
        return None;
    };
    let stories = top
        .properties
        .iter()
        .rfind(|p| named(p, "userStories"))
        .map(|p| &p.value);
    let Some(Value::Array(stories)) = stories else {
        return Some(Vec::new());
    };
    let at = |r: jsonc_parser::common::Range| r.start + shift..r.end + shift;
    let spans = stories
        .elements
        .iter()
        .map(|element| match element {
            Value::Object(story) => StorySpan {
                object: at(story.range),
                passes: story
                    .properties
                    .iter()
                    .rfind(|p| named(p, "passes"))
                    .map(|p| at(p.value.range())),
                members: story.properties.len(),
            },
            other => StorySpan {
                object: at(other.range()),
                passes: None,
                members: 0,
            },
        })
        .collect();
    Some(spans)
}

/// Whether a property's name, unescaped, is `name`.
fn named(property: &ObjectProp<'_>, name: &str) -> bool {
    property.name.as_str() == name
}

/// Whether brackets outside strings nest deeper than [`MAX_DEPTH`], as serde would refuse.
fn too_deep(text: &str) -> bool {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for byte in text.bytes() {
        match (in_string, escaped, byte) {
            (true, true, _) => escaped = false,
            (true, false, b'\\') => escaped = true,
            (true, false, b'"') | (false, _, b'"') => in_string = !in_string,
            (false, _, b'[' | b'{') => {
                depth += 1;
                if depth > MAX_DEPTH {
                    return true;
                }
            }
            (false, _, b']' | b'}') => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_story_and_its_passes_value_are_found() {
        let text = r#"{"a": [1, {"b": "}"}], "user\u0053tories": [
            {"id": "US-1", "passes": false, "x": {"passes": true}},
            {},
            3
        ], "z": null}"#;
        let spans = user_story_spans(text).unwrap();
        assert_eq!(spans.len(), 3);
        assert_eq!(&text[spans[0].passes.clone().unwrap()], "false");
        assert_eq!(spans[0].members, 3);
        assert_eq!(&text[spans[1].object.clone()], "{}");
        assert_eq!((spans[1].passes.clone(), spans[1].members), (None, 0));
        assert_eq!(&text[spans[2].object.clone()], "3");
    }

    #[test]
    fn anything_else_ends_the_walk_without_a_panic() {
        for text in [
            "",
            "[",
            "{\"userStories\": [",
            "{\"a\" 1}",
            "{\"a\": \"\\",
            "{,}",
        ] {
            assert_eq!(user_story_spans(text), None, "{text:?}");
        }
        let deep = format!("{{\"a\": {}{}}}", "[".repeat(200), "]".repeat(200));
        assert_eq!(user_story_spans(&deep), None);
    }

    /// Issue 31, item 5: the parser recurses once per level; a hostile file of nested
    /// brackets is refused without exhausting the stack (serde refuses it too; this holds
    /// on its own).
    #[test]
    fn issue_31_a_megabyte_of_brackets_is_refused_before_the_parser_recurses() {
        assert_eq!(user_story_spans(&"[".repeat(1 << 20)), None);
        let braces = format!("{{\"userStories\": [{}", "{\"a\": ".repeat(1 << 18));
        assert_eq!(user_story_spans(&braces), None);
    }

    /// Issue 31, item 5: ranges count in the file's own bytes, a byte-order mark included.
    #[test]
    fn issue_31_ranges_count_the_byte_order_mark() {
        let text = "\u{feff}{\"userStories\": [{\"passes\": false}]}";
        let spans = user_story_spans(text).unwrap();
        assert_eq!(&text[spans[0].passes.clone().unwrap()], "false");
        assert_eq!(&text[spans[0].object.clone()], "{\"passes\": false}");
    }
}

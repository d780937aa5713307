//! Syntax checks that need no subprocess: JSON (and notebooks), TOML, YAML.
//!
//! These run on every edit of such a file while a loop is active, so they parse without
//! building more than the parser must (JSON into `IgnoredAny`, YAML as a stream of events)
//! and report the first error with a 1-based line and column, the way an editor would show
//! it.
//!
//! The file is the model's (or a stranger's) text, so depth is bounded: nesting deeper
//! than [`MAX_NESTING`] levels (TOML: its parser's own limit, 80) is reported as a
//! finding like any other error. A recursive parser given 100,000 levels overflows the
//! stack, and a stack overflow aborts the process: no `catch_unwind` can turn it into a
//! message. So JSON's depth is measured in one flat pass before parsing, and YAML's parser
//! is driven event by event (its `load` recurses once per level) while counting depth.

use std::fmt;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Syntax {
    Json,
    Toml,
    Yaml,
}

impl Syntax {
    pub fn name(self) -> &'static str {
        match self {
            Syntax::Json => "JSON",
            Syntax::Toml => "TOML",
            Syntax::Yaml => "YAML",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl fmt::Display for SyntaxError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "line {}, column {}: {}",
            self.line, self.column, self.message
        )
    }
}

/// Deepest nesting of arrays and objects (or sequences and mappings) accepted in JSON and
/// YAML: the bound YAML's scanner puts on flow collections (`[[[`), applied to every
/// nesting pagent counts itself. Hand-written and generated files stay far below it.
pub const MAX_NESTING: usize = 255;

/// The TOML parser's own bound on nesting (it reports an error rather than recursing on).
const TOML_NESTING: usize = 80;

/// Checks `text` as `syntax`; `Ok` when it parses.
pub fn check_syntax(syntax: Syntax, text: &str) -> Result<(), SyntaxError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match syntax {
        Syntax::Json => {
            check_json_depth(text)?;
            serde_json::from_str::<serde::de::IgnoredAny>(text)
                .map(|_| ())
                .map_err(|e| SyntaxError {
                    line: e.line().max(1),
                    column: e.column().max(1),
                    message: strip_position(&e.to_string()),
                })
        }
        Syntax::Toml => toml::from_str::<toml::Table>(text)
            .map(|_| ())
            .map_err(|e| {
                let (line, column) = e
                    .span()
                    .map_or((1, 1), |span| line_column(text, span.start));
                let message = e.message().trim();
                let message = if message.contains("recursion") || message.contains("recurse") {
                    too_deep(TOML_NESTING)
                } else {
                    message.to_owned()
                };
                SyntaxError {
                    line,
                    column,
                    message,
                }
            }),
        Syntax::Yaml => check_yaml(text),
    }
}

fn too_deep(limit: usize) -> String {
    format!("nested deeper than {limit} levels")
}

/// Fails at the first `[` or `{` (outside strings) that opens level `MAX_NESTING + 1`.
/// Everything else about the text is left to the parser.
fn check_json_depth(text: &str) -> Result<(), SyntaxError> {
    let (mut depth, mut in_string, mut escaped) = (0usize, false, false);
    for (at, byte) in text.bytes().enumerate() {
        if in_string {
            match byte {
                _ if escaped => escaped = false,
                b'\\' => escaped = true,
                b'"' => in_string = false,
                _ => {}
            }
            continue;
        }
        match byte {
            b'"' => in_string = true,
            b'[' | b'{' => {
                depth += 1;
                if depth > MAX_NESTING {
                    let (line, column) = line_column(text, at);
                    return Err(SyntaxError {
                        line,
                        column,
                        message: too_deep(MAX_NESTING),
                    });
                }
            }
            b']' | b'}' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    Ok(())
}

/// Drives the YAML parser one event at a time, counting depth. (`Parser::load` recurses
/// once per level, and asserts on event orders it does not expect.)
fn check_yaml(text: &str) -> Result<(), SyntaxError> {
    use yaml_rust2::Event;
    let mut parser = yaml_rust2::parser::Parser::new_from_str(text);
    let mut depth = 0usize;
    loop {
        let (event, mark) = parser.next_token().map_err(|e| SyntaxError {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: if e.info().contains("recursion limit") {
                too_deep(MAX_NESTING)
            } else {
                e.info().to_owned()
            },
        })?;
        match event {
            Event::SequenceStart(..) | Event::MappingStart(..) => {
                depth += 1;
                if depth > MAX_NESTING {
                    return Err(SyntaxError {
                        line: mark.line(),
                        column: mark.col() + 1,
                        message: too_deep(MAX_NESTING),
                    });
                }
            }
            Event::SequenceEnd | Event::MappingEnd => depth = depth.saturating_sub(1),
            Event::StreamEnd => return Ok(()),
            _ => {}
        }
    }
}

/// serde_json appends " at line L column C"; the position is reported separately.
fn strip_position(message: &str) -> String {
    match message.rfind(" at line ") {
        Some(i) => message[..i].to_owned(),
        None => message.to_owned(),
    }
}

/// 1-based line and column (in characters) of byte offset `at`.
fn line_column(text: &str, at: usize) -> (usize, usize) {
    let before = &text[..at.min(text.len())];
    let line = before.matches('\n').count() + 1;
    let column = before.rsplit('\n').next().map_or(0, |l| l.chars().count()) + 1;
    (line, column)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn valid_documents_pass() {
        assert_eq!(
            check_syntax(Syntax::Json, "{\"a\": [1, 2, {\"b\": null}]}"),
            Ok(())
        );
        assert_eq!(check_syntax(Syntax::Json, "\u{feff}[]"), Ok(()));
        assert_eq!(
            check_syntax(Syntax::Toml, "[package]\nname = \"x\"\n"),
            Ok(())
        );
        assert_eq!(
            check_syntax(Syntax::Yaml, "a: 1\nb:\n  - x\n---\nc: d\n"),
            Ok(())
        );
        assert_eq!(check_syntax(Syntax::Yaml, ""), Ok(()));
    }

    /// 100,000 levels used to overflow the stack (YAML block sequences and mappings) and
    /// abort the PostToolUse hook. Every format now reports the depth as a finding, at the
    /// line where it is passed, and a document just within the bound still parses.
    #[test]
    fn deep_nesting_is_a_finding_never_a_crash() {
        let deep = 100_000;
        // Indentation grows with depth: 3,000 levels are already 4.5 million characters.
        let yaml_mappings: String = (0..3_000)
            .map(|i| format!("{}a:\n", " ".repeat(i)))
            .collect();
        let cases = [
            (Syntax::Json, "[".repeat(deep), 1, MAX_NESTING),
            (
                Syntax::Json,
                format!("{}{}", "[".repeat(deep), "]".repeat(deep)),
                1,
                MAX_NESTING,
            ),
            (
                Syntax::Json,
                "{\"a\":\n".repeat(deep),
                MAX_NESTING + 1,
                MAX_NESTING,
            ),
            (Syntax::Toml, format!("a = {}", "[".repeat(deep)), 1, 80),
            (
                Syntax::Toml,
                format!("x = 1\na = {}", "{b=".repeat(deep)),
                2,
                80,
            ),
            (
                Syntax::Toml,
                format!("{} = 1", vec!["a"; deep].join(".")),
                1,
                80,
            ),
            (Syntax::Yaml, "[".repeat(deep), 1, MAX_NESTING),
            (Syntax::Yaml, "{a: ".repeat(deep), 1, MAX_NESTING),
            (Syntax::Yaml, "- ".repeat(deep), 1, MAX_NESTING),
            (
                Syntax::Yaml,
                format!("x: 1\ny:\n{}", "  - ".repeat(deep)),
                3,
                MAX_NESTING,
            ),
            (Syntax::Yaml, yaml_mappings, MAX_NESTING + 1, MAX_NESTING),
        ];
        for (syntax, text, line, limit) in cases {
            let head: String = text.chars().take(12).collect();
            let err = check_syntax(syntax, &text).unwrap_err();
            assert_eq!(
                err.message,
                format!("nested deeper than {limit} levels"),
                "{syntax:?} {head:?}: {err}"
            );
            assert_eq!(err.line, line, "{syntax:?} {head:?}: {err}");
        }
        let within = format!("{}{}", "[".repeat(MAX_NESTING), "]".repeat(MAX_NESTING));
        assert_eq!(check_syntax(Syntax::Json, &within), Ok(()));
        assert_eq!(check_syntax(Syntax::Yaml, &within), Ok(()));
        let strings = format!("[\"{}\\\"\"]", "[".repeat(deep));
        assert_eq!(check_syntax(Syntax::Json, &strings), Ok(()));
    }

    /// Depth is nesting, not a count of brackets: closed collections give their level
    /// back, and brackets inside strings (escaped quotes included) are text.
    #[test]
    fn only_open_collections_count_towards_the_depth() {
        let siblings = format!("[{}[]]", "[], ".repeat(MAX_NESTING * 2));
        assert_eq!(check_syntax(Syntax::Json, &siblings), Ok(()));
        let objects = format!("[{}{{}}]", "{}, ".repeat(MAX_NESTING * 2));
        assert_eq!(check_syntax(Syntax::Json, &objects), Ok(()));
        let quoted = format!("[\"\\\"{}\"]", "[".repeat(MAX_NESTING * 2));
        assert_eq!(check_syntax(Syntax::Json, &quoted), Ok(()));
        let escaped_backslash = format!("[\"\\\\\", {}]", "[".repeat(MAX_NESTING * 2));
        assert_eq!(
            check_syntax(Syntax::Json, &escaped_backslash)
                .unwrap_err()
                .message,
            too_deep(MAX_NESTING)
        );
        let yaml_siblings = "- [1]\n- {a: 1}\n".repeat(MAX_NESTING);
        assert_eq!(check_syntax(Syntax::Yaml, &yaml_siblings), Ok(()));
    }

    /// The depth error points at the bracket that went one level too deep (1-based).
    #[test]
    fn the_depth_error_points_at_the_bracket() {
        for syntax in [Syntax::Json, Syntax::Yaml] {
            let err = check_syntax(syntax, &"[".repeat(MAX_NESTING + 10)).unwrap_err();
            assert_eq!((err.line, err.column), (1, MAX_NESTING + 1), "{syntax:?}");
        }
        // Block collections are counted by pagent, not by the YAML scanner: the mapping
        // that opens level 256 is on line 256, indented 255 spaces (the event's mark is
        // one past the indentation).
        let mappings: String = (0..MAX_NESTING + 10)
            .map(|i| format!("{}a:\n", " ".repeat(i)))
            .collect();
        let err = check_syntax(Syntax::Yaml, &mappings).unwrap_err();
        assert_eq!((err.line, err.column), (MAX_NESTING + 1, MAX_NESTING + 2));
    }

    #[test]
    fn an_error_reads_like_an_editor_shows_it() {
        let err = check_syntax(Syntax::Json, "{\"a\": 1").unwrap_err();
        assert_eq!(
            err.to_string(),
            "line 1, column 7: EOF while parsing an object"
        );
        assert_eq!(
            [Syntax::Json, Syntax::Toml, Syntax::Yaml].map(Syntax::name),
            ["JSON", "TOML", "YAML"]
        );
    }

    #[test]
    fn errors_carry_line_and_column() {
        let cases = [
            (
                Syntax::Json,
                "{\n  \"a\": 1,\n  \"b\": tru,\n}",
                3,
                11,
                "expected ident",
            ),
            (
                Syntax::Json,
                "{\n  \"a\": 1,\n}",
                3,
                1,
                "key must be a string",
            ),
            (
                Syntax::Json,
                "{\"a\": 1",
                1,
                7,
                "EOF while parsing an object",
            ),
            (Syntax::Toml, "a = 1\nb = [1,\nc = 2", 3, 3, ""),
            (Syntax::Toml, "[x]\ny = \"unterminated\n", 2, 18, "expected"),
            (
                Syntax::Yaml,
                "a: 1\n  b: 2\n",
                2,
                4,
                "mapping values are not allowed",
            ),
            (Syntax::Yaml, "a: [1, 2\nc: d", 2, 2, ""),
        ];
        for (syntax, text, line, column, message) in cases {
            let err = check_syntax(syntax, text).unwrap_err();
            assert_eq!(
                (err.line, err.column),
                (line, column),
                "{syntax:?} {text:?}: {err}"
            );
            assert!(err.message.contains(message), "{err}");
            assert!(!err.message.is_empty());
        }
    }
}

//! Syntax checks that need no subprocess: JSON (and notebooks), TOML, YAML.
//!
//! These run on every edit of such a file while a loop is active, so they parse without
//! building more than the parser must (JSON into `IgnoredAny`) and report the first error
//! with a 1-based line and column, the way an editor would show it.

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

/// Checks `text` as `syntax`; `Ok` when it parses.
pub fn check_syntax(syntax: Syntax, text: &str) -> Result<(), SyntaxError> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    match syntax {
        Syntax::Json => serde_json::from_str::<serde::de::IgnoredAny>(text)
            .map(|_| ())
            .map_err(|e| SyntaxError {
                line: e.line().max(1),
                column: e.column().max(1),
                message: strip_position(&e.to_string()),
            }),
        Syntax::Toml => toml::from_str::<toml::Table>(text)
            .map(|_| ())
            .map_err(|e| {
                let (line, column) = e
                    .span()
                    .map_or((1, 1), |span| line_column(text, span.start));
                SyntaxError {
                    line,
                    column,
                    message: e.message().trim().to_owned(),
                }
            }),
        Syntax::Yaml => {
            let mut sink = Sink;
            let mut parser = yaml_rust2::parser::Parser::new_from_str(text);
            parser.load(&mut sink, true).map_err(|e| SyntaxError {
                line: e.marker().line(),
                column: e.marker().col() + 1,
                message: e.info().to_owned(),
            })
        }
    }
}

/// Drops the events: only whether the stream parses matters.
struct Sink;

impl yaml_rust2::parser::MarkedEventReceiver for Sink {
    fn on_event(&mut self, _event: yaml_rust2::Event, _mark: yaml_rust2::scanner::Marker) {}
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

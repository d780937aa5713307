//! Where each story of a `prd.json` is, in bytes: serde reads the values but forgets the
//! places, and ticking a story must rewrite its `"passes": false` and nothing else (no
//! re-serialising, which would reorder keys, reindent and drop what pagent does not
//! know). So this small scanner walks the same text serde accepted and notes, for each
//! element of the top-level `userStories` array, the object's bytes and its `passes`
//! value's bytes.
//!
//! It runs only on text serde has already parsed, but is written for any bytes: nesting
//! is capped, every read is bounds-checked, and anything it does not expect ends the walk
//! with `None` (the plan is then read, but cannot be ticked).

use std::ops::Range;

/// Deeper nesting than this is not a PRD (serde_json stops at 128 too).
const MAX_DEPTH: usize = 128;

/// One element of `userStories`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct StorySpan {
    pub object: Range<usize>,
    pub passes: Option<Range<usize>>,
    pub members: usize,
}

struct Scanner<'a> {
    text: &'a str,
    pos: usize,
}

pub(super) fn user_story_spans(text: &str) -> Option<Vec<StorySpan>> {
    let mut s = Scanner { text, pos: 0 };
    if s.text.starts_with('\u{feff}') {
        s.pos = '\u{feff}'.len_utf8();
    }
    s.ws();
    s.expect(b'{')?;
    let mut found = None;
    s.ws();
    if s.eat(b'}') {
        return Some(Vec::new());
    }
    loop {
        s.ws();
        let key = s.key()?;
        s.ws();
        s.expect(b':')?;
        s.ws();
        if key == "userStories" && s.peek() == Some(b'[') {
            found = Some(s.stories()?);
        } else {
            s.value(1)?;
        }
        s.ws();
        if s.eat(b'}') {
            return Some(found.unwrap_or_default());
        }
        s.expect(b',')?;
    }
}

impl Scanner<'_> {
    fn peek(&self) -> Option<u8> {
        self.text.as_bytes().get(self.pos).copied()
    }

    fn eat(&mut self, byte: u8) -> bool {
        let found = self.peek() == Some(byte);
        if found {
            self.pos += 1;
        }
        found
    }

    fn expect(&mut self, byte: u8) -> Option<()> {
        self.eat(byte).then_some(())
    }

    fn ws(&mut self) {
        while matches!(self.peek(), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.pos += 1;
        }
    }

    /// A string's bytes, quotes included.
    fn string(&mut self) -> Option<Range<usize>> {
        let start = self.pos;
        self.expect(b'"')?;
        loop {
            match self.peek()? {
                b'"' => {
                    self.pos += 1;
                    return Some(start..self.pos);
                }
                b'\\' => self.pos += 2,
                _ => self.pos += 1,
            }
        }
    }

    /// An object key, unescaped.
    fn key(&mut self) -> Option<String> {
        let range = self.string()?;
        let raw = self.text.get(range)?;
        if raw.contains('\\') {
            serde_json::from_str(raw).ok()
        } else {
            Some(raw[1..raw.len() - 1].to_owned())
        }
    }

    fn value(&mut self, depth: usize) -> Option<Range<usize>> {
        if depth > MAX_DEPTH {
            return None;
        }
        let start = self.pos;
        match self.peek()? {
            b'"' => {
                self.string()?;
            }
            open @ (b'{' | b'[') => {
                let close = if open == b'{' { b'}' } else { b']' };
                self.pos += 1;
                self.ws();
                if !self.eat(close) {
                    loop {
                        self.ws();
                        if open == b'{' {
                            self.string()?;
                            self.ws();
                            self.expect(b':')?;
                            self.ws();
                        }
                        self.value(depth + 1)?;
                        self.ws();
                        if self.eat(close) {
                            break;
                        }
                        self.expect(b',')?;
                    }
                }
            }
            _ => {
                while self.peek().is_some_and(|b| {
                    !matches!(b, b',' | b']' | b'}' | b' ' | b'\t' | b'\r' | b'\n')
                }) {
                    self.pos += 1;
                }
                if self.pos == start {
                    return None;
                }
            }
        }
        Some(start..self.pos)
    }

    fn stories(&mut self) -> Option<Vec<StorySpan>> {
        let mut out = Vec::new();
        self.expect(b'[')?;
        self.ws();
        if self.eat(b']') {
            return Some(out);
        }
        loop {
            self.ws();
            if self.peek() == Some(b'{') {
                out.push(self.story()?);
            } else {
                let object = self.value(2)?;
                out.push(StorySpan {
                    object,
                    passes: None,
                    members: 0,
                });
            }
            self.ws();
            if self.eat(b']') {
                return Some(out);
            }
            self.expect(b',')?;
        }
    }

    fn story(&mut self) -> Option<StorySpan> {
        let start = self.pos;
        let mut passes = None;
        let mut members = 0;
        self.expect(b'{')?;
        self.ws();
        if !self.eat(b'}') {
            loop {
                self.ws();
                let key = self.key()?;
                self.ws();
                self.expect(b':')?;
                self.ws();
                let value = self.value(3)?;
                if key == "passes" {
                    passes = Some(value);
                }
                members += 1;
                self.ws();
                if self.eat(b'}') {
                    break;
                }
                self.expect(b',')?;
            }
        }
        Some(StorySpan {
            object: start..self.pos,
            passes,
            members,
        })
    }
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
}

//! Reading the module paths a Rust source file names, without a parser: comments and
//! literals are blanked (newlines kept, so lines still count), then every `crate::` and
//! `super::` path is read, brace groups expanded (`crate::{a, b::{c, d}}` names `a`,
//! `b::c` and `b::d`), and `super` resolved against the file's module and the inline
//! `mod name { .. }` blocks it sits in (a `mod tests { use super::*; }` names the file's
//! own module, not its parent).
//!
//! What it cannot see: a path spelled through a `use` alias of another room's item that
//! is then re-exported. The rooms do not re-export each other's items, so an alias still
//! starts as a `crate::` path somewhere, which is read here.

/// One path a file names: where, and the absolute module path (`["store", "door"]`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Named {
    pub line: usize,
    pub path: Vec<String>,
}

/// Blanks comments, string, byte-string, raw-string and char literals with spaces,
/// keeping newlines.
pub fn blank_comments_and_literals(src: &str) -> String {
    let mut b = Blanker {
        c: src.chars().collect(),
        i: 0,
        out: String::with_capacity(src.len()),
    };
    while b.i < b.c.len() {
        if b.at(0) == '/' && b.at(1) == '/' {
            b.line_comment();
        } else if b.at(0) == '/' && b.at(1) == '*' {
            b.block_comment();
        } else if let Some(hashes) = b.raw_string_opens() {
            b.raw_string(hashes);
        } else if b.at(0) == '"' {
            b.string();
        } else if b.at(0) == '\'' && (b.at(2) == '\'' || (b.at(1) == '\\' && b.at(1) != '\0')) {
            // A char literal ('x', '\n', '\u{..}'); a lifetime ('a) has no closing quote.
            b.char_literal();
        } else {
            b.keep();
        }
    }
    b.out
}

/// The source as characters, where the reading is, and what it has written.
struct Blanker {
    c: Vec<char>,
    i: usize,
    out: String,
}

impl Blanker {
    fn at(&self, k: usize) -> char {
        self.c.get(self.i + k).copied().unwrap_or('\0')
    }

    fn keep(&mut self) {
        self.out.push(self.c[self.i]);
        self.i += 1;
    }

    /// Writes a space for the character (a newline stays), and moves on.
    fn blank(&mut self) {
        self.out
            .push(if self.c[self.i] == '\n' { '\n' } else { ' ' });
        self.i += 1;
    }

    /// Writes `n` spaces over what they stand for.
    fn spaces(&mut self, n: usize) {
        (0..n).for_each(|_| self.out.push(' '));
        self.i += n;
    }

    fn line_comment(&mut self) {
        while self.i < self.c.len() && self.c[self.i] != '\n' {
            self.spaces(1);
        }
    }

    /// A block comment, nested ones in it.
    fn block_comment(&mut self) {
        let mut depth = 0;
        while self.i < self.c.len() {
            if self.at(0) == '/' && self.at(1) == '*' {
                depth += 1;
                self.spaces(2);
            } else if self.at(0) == '*' && self.at(1) == '/' {
                depth -= 1;
                self.spaces(2);
                if depth == 0 {
                    break;
                }
            } else {
                self.blank();
            }
        }
    }

    /// Whether a raw string (`r"`, `r#"`, `br##"`) opens here, not inside an identifier:
    /// its number of hashes.
    fn raw_string_opens(&self) -> Option<usize> {
        let prefix = match (self.at(0), self.at(1)) {
            ('r', _) => 1,
            ('b', 'r') => 2,
            _ => return None,
        };
        if self.i > 0 && ident_char(self.c[self.i - 1]) {
            return None;
        }
        let hashes = (prefix..).take_while(|&k| self.at(k) == '#').count();
        (self.at(prefix + hashes) == '"').then_some(hashes)
    }

    fn raw_string(&mut self, hashes: usize) {
        let prefix = if self.at(0) == 'b' { 2 } else { 1 };
        self.spaces(prefix + hashes + 1);
        while self.i < self.c.len() {
            if self.c[self.i] == '"' && (1..=hashes).all(|h| self.at(h) == '#') {
                self.spaces(hashes + 1);
                break;
            }
            self.blank();
        }
    }

    /// A string or byte string, its escapes too.
    fn string(&mut self) {
        self.spaces(1);
        while self.i < self.c.len() && self.c[self.i] != '"' {
            if self.c[self.i] == '\\' {
                self.spaces(1);
            }
            if self.i < self.c.len() {
                self.blank();
            }
        }
        self.out.push(' ');
        self.i += 1;
    }

    fn char_literal(&mut self) {
        self.spaces(1);
        while self.i < self.c.len() && self.c[self.i] != '\'' {
            if self.c[self.i] == '\\' {
                self.spaces(1);
            }
            self.out.push(' ');
            self.i += 1;
        }
        self.out.push(' ');
        self.i += 1;
    }
}

fn ident_char(ch: char) -> bool {
    ch.is_alphanumeric() || ch == '_'
}

/// A token stream good enough for paths: identifiers, `::`, braces, commas, `*`, `;`.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Tok {
    Ident(String),
    Colons,
    Open,
    Close,
    Comma,
    Star,
    Other,
}

fn tokens(text: &str) -> Vec<(usize, Tok)> {
    let c: Vec<char> = text.chars().collect();
    let (mut i, mut line, mut out) = (0, 1, Vec::new());
    while i < c.len() {
        let ch = c[i];
        if ch == '\n' {
            line += 1;
            i += 1;
        } else if ch.is_whitespace() {
            i += 1;
        } else if ident_char(ch) {
            let start = i;
            while i < c.len() && ident_char(c[i]) {
                i += 1;
            }
            out.push((line, Tok::Ident(c[start..i].iter().collect())));
        } else {
            let tok = match ch {
                ':' if c.get(i + 1) == Some(&':') => {
                    i += 1;
                    Tok::Colons
                }
                '{' => Tok::Open,
                '}' => Tok::Close,
                ',' => Tok::Comma,
                '*' => Tok::Star,
                _ => Tok::Other,
            };
            out.push((line, tok));
            i += 1;
        }
    }
    out
}

/// Every module path `src` names through `crate::` or `super::`, made absolute. `module`
/// is the file's own module path (`["store", "door"]` for `store/door/mod.rs`).
pub fn named_paths(src: &str, module: &[String]) -> Vec<Named> {
    let toks = tokens(&blank_comments_and_literals(src));
    let mut found = Vec::new();
    // Inline modules: (name, brace depth inside it).
    let mut inline: Vec<(String, usize)> = Vec::new();
    let mut depth = 0usize;
    let mut i = 0;
    while i < toks.len() {
        match &toks[i].1 {
            Tok::Ident(kw) if kw == "mod" => {
                if let (Some((_, Tok::Ident(name))), Some((_, Tok::Open))) =
                    (toks.get(i + 1), toks.get(i + 2))
                {
                    depth += 1;
                    inline.push((name.clone(), depth));
                    i += 3;
                    continue;
                }
            }
            Tok::Open => depth += 1,
            Tok::Close => {
                if inline.last().is_some_and(|(_, d)| *d == depth) {
                    inline.pop();
                }
                depth = depth.saturating_sub(1);
            }
            Tok::Ident(head) if head == "crate" || head == "super" => {
                let after_colons = i > 0 && toks[i - 1].1 == Tok::Colons;
                if !after_colons && toks.get(i + 1).map(|t| &t.1) == Some(&Tok::Colons) {
                    let mut base: Vec<String> = if head == "crate" {
                        Vec::new()
                    } else {
                        let mut here = module.to_vec();
                        here.extend(inline.iter().map(|(n, _)| n.clone()));
                        here.pop();
                        here
                    };
                    let mut j = i + 1;
                    // Further `super::` steps.
                    while toks.get(j).map(|t| &t.1) == Some(&Tok::Colons)
                        && matches!(toks.get(j + 1), Some((_, Tok::Ident(s))) if s == "super")
                    {
                        base.pop();
                        j += 2;
                    }
                    let end = read_tree(&toks, j, base, &mut found);
                    i = end.max(i + 1);
                    continue;
                }
            }
            _ => {}
        }
        i += 1;
    }
    found
}

/// Reads `::seg::seg` or `::{tree, tree}` starting at `j` (a `::`), pushing every leaf
/// path; returns the index after it.
fn read_tree(
    toks: &[(usize, Tok)],
    mut j: usize,
    mut path: Vec<String>,
    out: &mut Vec<Named>,
) -> usize {
    let line = toks.get(j).map_or(0, |t| t.0);
    while toks.get(j).map(|t| &t.1) == Some(&Tok::Colons) {
        match toks.get(j + 1) {
            Some((_, Tok::Ident(seg))) => {
                path.push(seg.clone());
                j += 2;
            }
            Some((_, Tok::Open)) => {
                j += 2;
                loop {
                    match toks.get(j) {
                        Some((_, Tok::Ident(kw))) if kw == "as" => j += 2,
                        Some((l, Tok::Ident(seg))) => {
                            let mut sub = path.clone();
                            if seg != "self" {
                                sub.push(seg.clone());
                            }
                            let at = toks.get(j + 1).map(|t| &t.1);
                            if at == Some(&Tok::Colons) {
                                j = read_tree(toks, j + 1, sub, out);
                            } else {
                                out.push(Named {
                                    line: *l,
                                    path: sub,
                                });
                                j += 1;
                            }
                        }
                        Some((_, Tok::Comma | Tok::Star | Tok::Other)) => j += 1,
                        Some((_, Tok::Close)) => return j + 1,
                        _ => return j,
                    }
                }
            }
            _ => break,
        }
    }
    if !path.is_empty() {
        out.push(Named { line, path });
    }
    j
}

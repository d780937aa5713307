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
    let c: Vec<char> = src.chars().collect();
    let mut out = String::with_capacity(src.len());
    let blank = |ch: char| if ch == '\n' { '\n' } else { ' ' };
    let mut i = 0;
    while i < c.len() {
        let at = |k: usize| c.get(i + k).copied().unwrap_or('\0');
        if at(0) == '/' && at(1) == '/' {
            while i < c.len() && c[i] != '\n' {
                out.push(' ');
                i += 1;
            }
        } else if at(0) == '/' && at(1) == '*' {
            let mut depth = 0;
            while i < c.len() {
                if c[i] == '/' && c.get(i + 1) == Some(&'*') {
                    depth += 1;
                    out.push_str("  ");
                    i += 2;
                } else if c[i] == '*' && c.get(i + 1) == Some(&'/') {
                    depth -= 1;
                    out.push_str("  ");
                    i += 2;
                    if depth == 0 {
                        break;
                    }
                } else {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
        } else if (at(0) == 'r' || (at(0) == 'b' && at(1) == 'r'))
            && !ident_char(if i == 0 { ' ' } else { c[i - 1] })
            && {
                let s = if at(0) == 'b' { 2 } else { 1 };
                let mut k = s;
                while at(k) == '#' {
                    k += 1;
                }
                at(k) == '"'
            }
        {
            let start = if at(0) == 'b' { 2 } else { 1 };
            let mut hashes = 0;
            while at(start + hashes) == '#' {
                hashes += 1;
            }
            let open = start + hashes + 1;
            (0..open).for_each(|_| out.push(' '));
            i += open;
            while i < c.len() {
                if c[i] == '"' && (1..=hashes).all(|h| c.get(i + h) == Some(&'#')) {
                    (0..=hashes).for_each(|_| out.push(' '));
                    i += hashes + 1;
                    break;
                }
                out.push(blank(c[i]));
                i += 1;
            }
        } else if at(0) == '"' {
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '"' {
                if c[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                if i < c.len() {
                    out.push(blank(c[i]));
                    i += 1;
                }
            }
            out.push(' ');
            i += 1;
        } else if at(0) == '\'' && (at(2) == '\'' || (at(1) == '\\' && at(1) != '\0')) {
            // A char literal ('x', '\n', '\u{..}'); a lifetime ('a) has no closing quote.
            out.push(' ');
            i += 1;
            while i < c.len() && c[i] != '\'' {
                if c[i] == '\\' {
                    out.push(' ');
                    i += 1;
                }
                out.push(' ');
                i += 1;
            }
            out.push(' ');
            i += 1;
        } else {
            out.push(c[i]);
            i += 1;
        }
    }
    out
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

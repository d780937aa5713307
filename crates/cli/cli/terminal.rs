//! The output edge: every byte pagent writes to stdout or stderr passes through [`Edge`],
//! which `dispatch::run` puts around both streams before any command runs. So no text
//! that may hold a project's or an agent's bytes (a prompt shown by `run`, `ralph` and
//! `resume`, an error quoting a project file, `pagent loop`'s status line with a tool's
//! file path or command, a check's output) can reach a terminal raw, and no call site can
//! forget to make it safe.
//!
//! The edge neutralises what a terminal would act on: C0 controls other than newline and
//! tab (so ESC, BEL and a carriage return that would overwrite a line; one that ends a
//! line, CRLF, passes), DEL, the C1
//! controls and the bidi embeddings, overrides and isolates. C0 is written as `\x1b`,
//! the others as `\u009b`, an escape that is also valid inside a JSON string (a hook's
//! output stays the same JSON value). The only terminal controls that pass are pagent's
//! own, which exist as a type, [`Control`], and nowhere else: its `Display` writes a token
//! framed by NUL bytes around a random per-process nonce, and only the edge turns a
//! token into the control's bytes. Project text cannot forge one (it does not know the
//! nonce, and its own NUL bytes are escaped like any control).

use std::fmt;
use std::io::{self, Write};
use std::sync::OnceLock;

/// A terminal control pagent itself emits: colour and the redrawn status lines.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Control {
    /// `\r` and erase the line: redraw a status line in place.
    ClearLine,
    /// Move the cursor up this many lines (the live table of `pagent parallel`).
    Up(u16),
    /// Select graphic rendition: `0` reset, `1` bold, `2` dim, `31`/`32`/`33` colours.
    Sgr(Sgr),
}

/// The colours and weights pagent uses, and nothing else (no hidden text, no blink).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sgr {
    Reset,
    Bold,
    Dim,
    Red,
    Green,
    Yellow,
}

impl Sgr {
    fn code(self) -> &'static str {
        match self {
            Sgr::Reset => "0",
            Sgr::Bold => "1",
            Sgr::Dim => "2",
            Sgr::Red => "31",
            Sgr::Green => "32",
            Sgr::Yellow => "33",
        }
    }
}

/// The per-process nonce that frames control tokens, as 32 hex digits.
fn nonce() -> &'static str {
    static NONCE: OnceLock<String> = OnceLock::new();
    NONCE.get_or_init(|| {
        let bytes: [u8; 16] = pagent_door::random_bytes().unwrap_or_else(|_| {
            // No randomness: a value no project text is likely to hold, from the clock.
            let nanos = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.as_nanos());
            nanos.to_le_bytes()
        });
        pagent_engine::seal::hex(&bytes)
    })
}

/// Whether the terminal acts on pagent's controls, made so where it must be: always on
/// Unix; on Windows, a console does only once asked (`ENABLE_VIRTUAL_TERMINAL_PROCESSING`,
/// asked of stdout's and stderr's by the door), and one that cannot (older than Windows
/// 10) is treated as no terminal, so nothing is coloured or redrawn in place and no escape
/// shows as text. A stream that is not a console is left as it is.
pub fn console_takes_controls() -> bool {
    pagent_door::terminal::enable_controls()
}

/// The longest token: NUL, 32 nonce digits, a code of at most 8 bytes, NUL.
const TOKEN_MAX: usize = 1 + 32 + 8 + 1;

impl fmt::Display for Control {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let code = match self {
            Control::ClearLine => "K".to_owned(),
            Control::Up(n) => format!("U{n}"),
            Control::Sgr(sgr) => format!("m{}", sgr.code()),
        };
        write!(f, "\0{}{code}\0", nonce())
    }
}

/// The bytes a token's code means, if it is one of pagent's.
fn control_bytes(code: &[u8]) -> Option<Vec<u8>> {
    let code = std::str::from_utf8(code).ok()?;
    let (kind, rest) = code.split_at(code.char_indices().nth(1).map_or(code.len(), |(i, _)| i));
    match kind {
        "K" if rest.is_empty() => Some(b"\r\x1b[2K".to_vec()),
        "U" => {
            let n: u16 = rest.parse().ok()?;
            Some(format!("\x1b[{n}A").into_bytes())
        }
        "m" => {
            let sgr = [
                Sgr::Reset,
                Sgr::Bold,
                Sgr::Dim,
                Sgr::Red,
                Sgr::Green,
                Sgr::Yellow,
            ]
            .into_iter()
            .find(|s| s.code() == rest)?;
            Some(format!("\x1b[{}m", sgr.code()).into_bytes())
        }
        _ => None,
    }
}

/// Whether a character is never written raw.
pub fn is_unsafe(c: char) -> bool {
    matches!(c,
        '\u{0}'..='\u{8}' | '\u{b}'..='\u{1f}' | '\u{7f}'..='\u{9f}'
        | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}')
}

/// `c` written so that a person reads it and a terminal does nothing.
fn escaped(c: char) -> String {
    match c {
        '\r' => "\\r".to_owned(),
        '\u{0}'..='\u{1f}' => format!("\\x{:02x}", u32::from(c)),
        _ => format!("\\u{:04x}", u32::from(c)),
    }
}

/// A stream with the edge around it.
pub struct Edge<'a> {
    inner: &'a mut dyn Write,
    /// Bytes held back: an unfinished UTF-8 character or a token not yet complete.
    pending: Vec<u8>,
}

impl fmt::Debug for Edge<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Edge").finish_non_exhaustive()
    }
}

impl<'a> Edge<'a> {
    pub fn new(inner: &'a mut dyn Write) -> Edge<'a> {
        Edge {
            inner,
            pending: Vec::new(),
        }
    }

    /// Writes out `pending`, keeping back only what more bytes could still complete.
    /// `last` writes everything (the stream ends).
    fn drain(&mut self, last: bool) -> io::Result<()> {
        let bytes = std::mem::take(&mut self.pending);
        let mut out: Vec<u8> = Vec::with_capacity(bytes.len() + 16);
        let mut at = 0;
        while at < bytes.len() {
            let rest = &bytes[at..];
            // Printable ASCII, tabs and newlines go out as they are, a run at a time.
            let plain = rest
                .iter()
                .position(|&b| !matches!(b, b'\t' | b'\n' | 0x20..=0x7e))
                .unwrap_or(rest.len());
            if plain > 0 {
                out.extend_from_slice(&rest[..plain]);
                at += plain;
                continue;
            }
            if rest[0] == 0 {
                match token(rest) {
                    Token::Control(len, control) => {
                        out.extend_from_slice(&control);
                        at += len;
                        continue;
                    }
                    Token::Unfinished if !last => break,
                    _ => {}
                }
            }
            // A carriage return that ends a line (CRLF) only does what the newline does.
            if rest[0] == b'\r' {
                match rest.get(1) {
                    Some(b'\n') => {
                        out.extend_from_slice(b"\r\n");
                        at += 2;
                        continue;
                    }
                    None if !last => break,
                    _ => {}
                }
            }
            let len = utf8_len(rest[0]);
            if rest.len() < len && !last {
                break;
            }
            match std::str::from_utf8(&rest[..len.min(rest.len())]) {
                Ok(text) => {
                    let c = text.chars().next().unwrap_or('\u{fffd}');
                    if is_unsafe(c) {
                        out.extend_from_slice(escaped(c).as_bytes());
                    } else {
                        out.extend_from_slice(text.as_bytes());
                    }
                    at += len.min(rest.len());
                }
                Err(_) => {
                    // Not UTF-8 here: written as a replacement character, never raw.
                    out.extend_from_slice("\u{fffd}".as_bytes());
                    at += 1;
                }
            }
        }
        self.pending = bytes[at..].to_vec();
        self.inner.write_all(&out)
    }
}

/// What a NUL at the start of `bytes` begins.
enum Token {
    /// pagent's control: the token's length and the control's bytes.
    Control(usize, Vec<u8>),
    /// Could still become a token with more bytes.
    Unfinished,
    /// Not a token: the NUL is escaped like any control.
    Not,
}

fn token(bytes: &[u8]) -> Token {
    let nonce = nonce().as_bytes();
    let seen = &bytes[1..bytes.len().min(1 + nonce.len())];
    if !nonce.starts_with(seen) {
        return Token::Not;
    }
    if seen.len() < nonce.len() {
        return Token::Unfinished;
    }
    let rest = &bytes[1 + nonce.len()..];
    match rest.iter().position(|b| *b == 0) {
        Some(end) => match control_bytes(&rest[..end]) {
            Some(control) => Token::Control(1 + nonce.len() + end + 1, control),
            None => Token::Not,
        },
        None if 1 + nonce.len() + rest.len() < TOKEN_MAX => Token::Unfinished,
        None => Token::Not,
    }
}

/// The length of the UTF-8 sequence a byte starts (1 for anything that cannot start one).
fn utf8_len(first: u8) -> usize {
    match first {
        0xc0..=0xdf => 2,
        0xe0..=0xef => 3,
        0xf0..=0xf7 => 4,
        _ => 1,
    }
}

impl Write for Edge<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.pending.extend_from_slice(buf);
        self.drain(false)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        self.drain(true)?;
        self.inner.flush()
    }
}

impl Drop for Edge<'_> {
    fn drop(&mut self) {
        let _ = self.drain(true);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn through(pieces: &[&[u8]]) -> String {
        let mut out = Vec::new();
        {
            let mut edge = Edge::new(&mut out);
            for piece in pieces {
                edge.write_all(piece).unwrap();
            }
            edge.flush().unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn terminal_controls_in_text_are_neutralised() {
        let cases: [(&str, &str); 7] = [
            (
                "plain text, é ü 日本\n\ttabbed",
                "plain text, é ü 日本\n\ttabbed",
            ),
            ("\x1b]0;pwned\x07", "\\x1b]0;pwned\\x07"),
            ("\x1b]52;c;cHduZWQ=\x07", "\\x1b]52;c;cHduZWQ=\\x07"),
            ("\x1b[8mhidden\x1b[0m", "\\x1b[8mhidden\\x1b[0m"),
            ("a\u{202e}b\u{2066}c", "a\\u202eb\\u2066c"),
            ("\u{9b}31m\u{7f}\0x", "\\u009b31m\\u007f\\x00x"),
            ("over\rwrite", "over\\rwrite"),
        ];
        for (text, expected) in cases {
            assert_eq!(through(&[text.as_bytes()]), expected, "{text:?}");
        }
    }

    #[test]
    fn pagents_own_controls_pass_even_split_across_writes() {
        let text = format!(
            "{}bold{} {}status",
            Control::Sgr(Sgr::Bold),
            Control::Sgr(Sgr::Reset),
            Control::ClearLine
        );
        let expected = "\x1b[1mbold\x1b[0m \r\x1b[2Kstatus";
        assert_eq!(through(&[text.as_bytes()]), expected);
        let bytes = text.as_bytes();
        for cut in 0..bytes.len() {
            assert_eq!(
                through(&[&bytes[..cut], &bytes[cut..]]),
                expected,
                "cut at {cut}"
            );
        }
        assert_eq!(
            through(&[format!("{}", Control::Up(3)).as_bytes()]),
            "\x1b[3A"
        );
    }

    #[test]
    fn a_forged_token_and_split_characters_are_handled() {
        // A NUL-framed text that does not know the nonce is escaped, NULs and all.
        assert_eq!(
            through(&[b"\x00000000000000000000000000000000mK\x00"]),
            "\\x00000000000000000000000000000000mK\\x00"
        );
        // A character split across two writes arrives whole; a lone bad byte does not.
        // CRLF line ends pass, even split between writes; a lone CR does not.
        assert_eq!(through(&[b"a\r\nb\r"]), "a\r\nb\\r");
        assert_eq!(through(&[b"a\r", b"\nb"]), "a\r\nb");
        let e = "é".as_bytes();
        assert_eq!(through(&[&e[..1], &e[1..]]), "é");
        assert_eq!(through(&[b"a\xffb"]), "a\u{fffd}b");
        // JSON stays the same JSON value.
        let value = serde_json::json!({"a": "\u{85}\u{202e}\u{7f}"});
        let text = serde_json::to_string(&value).unwrap();
        let safe = through(&[text.as_bytes()]);
        assert_eq!(
            serde_json::from_str::<serde_json::Value>(&safe).unwrap(),
            value
        );
    }
}

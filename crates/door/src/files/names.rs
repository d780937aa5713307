//! Which names the door refuses on Windows before any system call, as UTF-16 (what
//! Windows file names are made of). Pure, so it is compiled and tested on every system,
//! though only the Windows door applies it.
//!
//! A Windows name can mean something other than a file of that name in its folder:
//!
//! - `file.txt:stream` (any `:`) names an NTFS alternate data stream of `file.txt`: a
//!   hidden second content that no listing shows, and a way to write "into" a file the
//!   door checked as another. `::$DATA` is the same thing spelled out.
//! - `NUL`, `CON`, `PRN`, `AUX`, `COM1`-`COM9`, `LPT1`-`LPT9` (also with an extension,
//!   `con.txt`, any case, and with the superscript digits `COM¹`, `COM²`, `COM³`), and
//!   `CONIN$`, `CONOUT$`: devices in every folder for any program that opens by Win32
//!   path. The door opens by handle through the NT layer, where these are plain names,
//!   so it would create a file no other tool can open or delete; refused instead.
//! - A trailing `.` or space is stripped by Win32 path parsing (`a.` is `a`), so a name
//!   with one means another file to every other program than it means to the door.
//! - `<`, `>`, `"`, `|`, `?`, `*` are wildcards or invalid to Win32, `/` and `\` are
//!   separators, and characters below 32 are invalid in NTFS names.
//!
//! So each rule makes the door mean what every other Windows program means by a name, or
//! refuse it: a project that names such a file is refused with a `BadPath`, at setup and
//! at every later read.

/// Why a name is refused on Windows (for tests and messages), `None` when it is fine.
pub fn windows_name_problem(name: &[u16]) -> Option<&'static str> {
    if name.is_empty() {
        return Some("an empty name");
    }
    for &unit in name {
        match unit {
            0..=31 => return Some("a control character"),
            0x3a => return Some("a `:` (an NTFS alternate data stream)"),
            0x3c | 0x3e | 0x22 | 0x7c | 0x3f | 0x2a => {
                return Some("a wildcard or reserved character");
            }
            0x2f | 0x5c => return Some("a path separator"),
            _ => {}
        }
    }
    if let Some(&last) = name.last()
        && (last == u16::from(b'.') || last == u16::from(b' '))
        && name != [u16::from(b'.')]
        && name != [u16::from(b'.'), u16::from(b'.')]
    {
        return Some("a trailing dot or space (Windows drops it)");
    }
    if is_reserved_device(name) {
        return Some("a reserved device name (NUL, CON, COM1, ...)");
    }
    None
}

/// `NUL`, `con.txt`, `Com1.json`, `LPT¹`, `CONIN$`...: the part before the first dot (and
/// before any trailing spaces) is a DOS device name, in any case.
fn is_reserved_device(name: &[u16]) -> bool {
    let stem_end = name
        .iter()
        .position(|&u| u == u16::from(b'.'))
        .unwrap_or(name.len());
    let mut stem = &name[..stem_end];
    while let Some((&last, rest)) = stem.split_last() {
        if last == u16::from(b' ') {
            stem = rest;
        } else {
            break;
        }
    }
    let upper: Vec<u16> = stem
        .iter()
        .map(|&u| {
            if (u16::from(b'a')..=u16::from(b'z')).contains(&u) {
                u - 32
            } else {
                u
            }
        })
        .collect();
    let is = |word: &str| upper.iter().copied().eq(word.encode_utf16());
    if ["CON", "PRN", "AUX", "NUL", "CONIN$", "CONOUT$"]
        .iter()
        .any(|w| is(w))
    {
        return true;
    }
    if upper.len() == 4 {
        let prefix = &upper[..3];
        let digit = upper[3];
        let com_or_lpt = prefix.iter().copied().eq("COM".encode_utf16())
            || prefix.iter().copied().eq("LPT".encode_utf16());
        // 1-9, and the superscripts ¹ ² ³ (U+00B9, U+00B2, U+00B3), which Windows also maps.
        let device_digit = (u16::from(b'1')..=u16::from(b'9')).contains(&digit)
            || matches!(digit, 0xb9 | 0xb2 | 0xb3);
        return com_or_lpt && device_digit;
    }
    false
}

#[cfg(test)]
mod tests {
    use super::*;

    fn problem(name: &str) -> Option<&'static str> {
        windows_name_problem(&name.encode_utf16().collect::<Vec<_>>())
    }

    /// Issue 25: an NTFS alternate data stream name is refused as the state or a
    /// condition file, whatever follows the colon.
    #[test]
    fn windows_alternate_data_stream_names_are_refused() {
        for name in [
            "file.txt:stream",
            "pagent-pipeline.json:x",
            "a::$DATA",
            ":",
            "notes.md:",
        ] {
            assert!(
                problem(name).is_some_and(|p| p.contains("stream")),
                "{name}"
            );
        }
    }

    /// Issue 25: reserved device names, with extensions, in any case, with superscripts.
    #[test]
    fn windows_reserved_device_names_are_refused() {
        for name in [
            "NUL",
            "nul",
            "CON",
            "con.txt",
            "Con.Json",
            "PRN",
            "aux.md",
            "COM1",
            "com9.log",
            "LPT1",
            "lpt5.txt",
            "COM\u{b9}",
            "LPT\u{b3}.x",
            "CONIN$",
            "conout$",
            "nul .txt",
            "NUL.tar.gz",
        ] {
            assert!(
                problem(name).is_some_and(|p| p.contains("device")),
                "{name}"
            );
        }
        for name in [
            "COM0",
            "COM10",
            "LPT",
            "CONSOLE",
            "nully",
            "con_",
            "xcon",
            "com1x",
            "auxiliary.md",
            "null",
            "notes.md",
            ".claude",
            "pagent-pipeline.json",
            "..",
            ".",
        ] {
            assert_eq!(problem(name), None, "{name}");
        }
    }

    /// Issue 25: names Win32 would read as another file, or not at all.
    #[test]
    fn windows_names_win32_would_read_differently_are_refused() {
        for name in [
            "a.",
            "a ",
            "file.txt.",
            "x. ",
            "a<b",
            "a>b",
            "a\"b",
            "a|b",
            "a?b",
            "a*",
            "a\u{1}b",
            "a/b",
            "a\\b",
            "",
        ] {
            assert!(problem(name).is_some(), "{name:?}");
        }
        for name in ["a.b", " a", "ünïcödé", "日本語.md", "a b", "a-b_c.d"] {
            assert_eq!(problem(name), None, "{name}");
        }
    }

    /// Lone surrogates are kept as they are (Windows names are UTF-16, not UTF-8).
    #[test]
    fn windows_names_with_lone_surrogates_are_kept() {
        assert_eq!(windows_name_problem(&[0xd800, u16::from(b'a')]), None);
    }
}

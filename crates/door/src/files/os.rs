//! A path's own bytes, as the system gives them, for keys and digests: `OsStr`'s encoded
//! bytes, which are the bytes themselves on Unix and WTF-8 on Windows (UTF-16 names,
//! lone surrogates included, one to one). Nothing here is lossy: two names that differ
//! anywhere give different bytes, and the bytes give back the name.

use std::borrow::Cow;
use std::ffi::{OsStr, OsString};
use std::path::Path;

/// The bytes of `s` as the system keeps them (Unix) or their WTF-8 (Windows).
pub fn os_bytes(s: &OsStr) -> &[u8] {
    s.as_encoded_bytes()
}

/// The name [`os_bytes`] gave, or `None` for bytes no name of this system has (only
/// possible on Windows, for bytes that are not WTF-8: read back from a file).
pub fn os_from_bytes(bytes: Vec<u8>) -> Option<OsString> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStringExt;
        Some(OsString::from_vec(bytes))
    }
    #[cfg(windows)]
    {
        use std::os::windows::ffi::OsStringExt;
        wtf8_to_wide(&bytes).map(|wide| OsString::from_wide(&wide))
    }
}

/// Git's order of two entries of one folder, by name bytes, a folder's name read as if it
/// ended with `/`: a walk that lists each folder so visits paths in the order of git's
/// index (`a-b/x` before `a/c` before `a0`), so the two can be read side by side.
pub fn git_order(a: (&[u8], bool), b: (&[u8], bool)) -> std::cmp::Ordering {
    fn key((name, dir): (&[u8], bool)) -> impl Iterator<Item = u8> + '_ {
        name.iter().copied().chain(dir.then_some(b'/'))
    }
    key(a).cmp(key(b))
}

/// A relative path given as bytes (git's index, a walk), as a path: borrowed on Unix; on
/// Windows decoded from UTF-8/WTF-8, `/` and all (Windows takes both separators).
pub fn path_from_bytes(bytes: &[u8]) -> Cow<'_, Path> {
    #[cfg(unix)]
    {
        use std::os::unix::ffi::OsStrExt;
        Cow::Borrowed(Path::new(OsStr::from_bytes(bytes)))
    }
    #[cfg(windows)]
    {
        // Bytes that are no name (not WTF-8) become an empty path, which the door refuses.
        Cow::Owned(os_from_bytes(bytes.to_vec()).unwrap_or_default().into())
    }
}

/// WTF-8 (UTF-8 that may also encode lone surrogates) to UTF-16; `None` when it is not.
/// Compiled everywhere so its tests run on every system.
#[cfg_attr(unix, allow(dead_code))]
pub(crate) fn wtf8_to_wide(bytes: &[u8]) -> Option<Vec<u16>> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let b0 = u32::from(bytes[i]);
        let (len, min, init) = match b0 {
            0x00..=0x7f => (1, 0, b0),
            0xc2..=0xdf => (2, 0x80, b0 & 0x1f),
            0xe0..=0xef => (3, 0x800, b0 & 0x0f),
            0xf0..=0xf4 => (4, 0x1_0000, b0 & 0x07),
            _ => return None,
        };
        let tail = bytes.get(i + 1..i + len)?;
        let mut cp = init;
        for &b in tail {
            if b & 0xc0 != 0x80 {
                return None;
            }
            cp = (cp << 6) | u32::from(b & 0x3f);
        }
        if cp < min || cp > 0x10_ffff {
            return None;
        }
        if cp >= 0x1_0000 {
            let v = cp - 0x1_0000;
            out.push(0xd800 | u16::try_from(v >> 10).ok()?);
            out.push(0xdc00 | u16::try_from(v & 0x3ff).ok()?);
        } else {
            let unit = u16::try_from(cp).ok()?;
            // A lead surrogate followed by a trail one would be a pair spelled in two
            // pieces, which WTF-8 forbids (it has one spelling per name).
            if (0xdc00..0xe000).contains(&unit)
                && out.last().is_some_and(|u| (0xd800..0xdc00).contains(u))
                && len == 3
                && i >= 3
                && bytes[i - 3] == 0xed
            {
                return None;
            }
            out.push(unit);
        }
        i += len;
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wtf8_decodes_utf8_and_lone_surrogates_and_refuses_the_rest() {
        assert_eq!(
            wtf8_to_wide("aé日😀".as_bytes()).unwrap(),
            "aé日😀".encode_utf16().collect::<Vec<_>>()
        );
        // A lone lead surrogate U+D800 in WTF-8: ED A0 80.
        assert_eq!(
            wtf8_to_wide(&[b'a', 0xed, 0xa0, 0x80]).unwrap(),
            vec![0x61, 0xd800]
        );
        // A pair written as two surrogates is not WTF-8.
        assert_eq!(wtf8_to_wide(&[0xed, 0xa0, 0x80, 0xed, 0xb0, 0x80]), None);
        for bad in [
            &[0xff][..],
            &[0xc0, 0x80],
            &[0xe0, 0x80, 0x80],
            &[0xc3],
            &[0xf5, 0x80, 0x80, 0x80],
        ] {
            assert_eq!(wtf8_to_wide(bad), None, "{bad:?}");
        }
    }

    #[test]
    fn os_bytes_round_trip() {
        let name = OsStr::new("dir/ünï côdé");
        assert_eq!(os_from_bytes(os_bytes(name).to_vec()).unwrap(), name);
        assert_eq!(path_from_bytes(b"a/b").as_os_str(), OsStr::new("a/b"));
    }
}

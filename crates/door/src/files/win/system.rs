//! What the door asks Windows outside any root: a path without its verbatim prefix and
//! the user's profile folder as the account records it.

use super::*;

/// `\\?\C:\a\b` as `C:\a\b` and `\\?\UNC\host\share\a` as `\\host\share\a`, when
/// every component means the same to Win32 as to the verbatim form (else kept verbatim).
pub(in crate::files) fn plain_path(path: PathBuf) -> PathBuf {
    let wide_path = wide(path.as_os_str());
    let verbatim: Vec<u16> = "\\\\?\\".encode_utf16().collect();
    let Some(rest) = wide_path.strip_prefix(verbatim.as_slice()) else {
        return path;
    };
    let unc: Vec<u16> = "UNC\\".encode_utf16().collect();
    let plain: Vec<u16> = if let Some(share) = rest.strip_prefix(unc.as_slice()) {
        [&[u16::from(b'\\'), u16::from(b'\\')][..], share].concat()
    } else if rest.len() >= 3
        && rest[1] == u16::from(b':')
        && rest[2] == u16::from(b'\\')
        && u8::try_from(rest[0]).is_ok_and(|c| c.is_ascii_alphabetic())
    {
        rest.to_vec()
    } else {
        return path;
    };
    // Past a drive (`C:`) or a share (`\\host\share`), each name must mean itself to Win32.
    let skip = if plain.starts_with(&[u16::from(b'\\')]) {
        4
    } else {
        1
    };
    let names_ok = plain
        .split(|u| *u == u16::from(b'\\'))
        .skip(skip)
        .filter(|n| !n.is_empty())
        .all(|n| names::windows_name_problem(n).is_none());
    if !names_ok || plain.len() >= 260 {
        return path;
    }
    use std::os::windows::ffi::OsStringExt;
    PathBuf::from(OsString::from_wide(&plain))
}

/// A folder Windows keeps for the user's account.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KnownFolder {
    /// `C:\Users\NAME`.
    Profile,
}

/// Where `which` is for this user, as the system says (`SHGetKnownFolderPath`: the
/// account's registry, not the environment).
pub fn known_folder(which: KnownFolder) -> Option<PathBuf> {
    use std::os::windows::ffi::OsStringExt;
    use windows_sys::Win32::System::Com::CoTaskMemFree;
    use windows_sys::Win32::UI::Shell as sh;
    let id = match which {
        KnownFolder::Profile => sh::FOLDERID_Profile,
    };
    let mut path: *mut u16 = std::ptr::null_mut();
    // SAFETY: the out pointer is valid; the string it receives is freed below.
    let hr =
        unsafe { sh::SHGetKnownFolderPath(&raw const id, 0, std::ptr::null_mut(), &raw mut path) };
    let found = if hr >= 0 && !path.is_null() {
        // SAFETY: on success `path` is a NUL-terminated UTF-16 string.
        let len = (0..).take_while(|&i| unsafe { *path.add(i) } != 0).count();
        // SAFETY: `len` units were just read.
        let units = unsafe { std::slice::from_raw_parts(path, len) };
        Some(PathBuf::from(OsString::from_wide(units)))
    } else {
        None
    };
    // SAFETY: the system allocated `path` with the COM allocator (null is allowed).
    unsafe { CoTaskMemFree(path.cast()) };
    found
}

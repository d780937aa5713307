//! Where a path really is, and where the user's home is: folding `.` and `..` and
//! resolving the part that exists (so a config folder named through a symlink or a
//! dotted path is placed where it really is), and the home folder from the password
//! database, not `$HOME`, which a project's settings can set. Both the store (where the
//! config folder may live) and the process door (which `PATH` entries are the user's)
//! ask, so they live at the bottom.

use std::path::{Path, PathBuf};

/// `path` made absolute against `base`, with its longest existing ancestor's symlinks
/// resolved and `.`/`..` folded, so neither a relative path nor a `..` hides where it is.
pub fn absolute_real(path: &Path, base: &Path) -> PathBuf {
    use std::path::Component;
    let joined = base.join(path);
    let mut folded = PathBuf::new();
    for part in joined.components() {
        match part {
            Component::ParentDir => {
                folded.pop();
            }
            Component::CurDir => {}
            other => folded.push(other),
        }
    }
    let mut existing = folded.clone();
    let mut rest = Vec::new();
    loop {
        if let Ok(real) = super::canonical(&existing) {
            return rest.iter().rev().fold(real, |p: PathBuf, c| p.join(c));
        }
        match (
            existing.file_name().map(ToOwned::to_owned),
            existing.parent(),
        ) {
            (Some(name), Some(parent)) => {
                rest.push(name);
                existing = parent.to_path_buf();
            }
            _ => return folded,
        }
    }
}

/// The user's home folder from the password database (not `$HOME`, which a project's
/// settings can set).
#[cfg(unix)]
pub fn passwd_home() -> Option<PathBuf> {
    use std::ffi::CStr;
    use std::os::unix::ffi::OsStrExt as _;
    let mut buf = vec![0 as libc::c_char; 16 * 1024];
    // SAFETY: all-zero is a valid `passwd` (null pointers, zero ids).
    let mut entry: libc::passwd = unsafe { std::mem::zeroed() };
    let mut found: *mut libc::passwd = std::ptr::null_mut();
    // SAFETY: every pointer is valid for the call and `buf` outlives `entry`'s use.
    let rc = unsafe {
        libc::getpwuid_r(
            libc::getuid(),
            &raw mut entry,
            buf.as_mut_ptr(),
            buf.len(),
            &raw mut found,
        )
    };
    if rc != 0 || found.is_null() || entry.pw_dir.is_null() {
        return None;
    }
    // SAFETY: on success `pw_dir` points at a NUL-terminated string inside `buf`.
    let dir = unsafe { CStr::from_ptr(entry.pw_dir) };
    let dir = Path::new(std::ffi::OsStr::from_bytes(dir.to_bytes()));
    Some(absolute_real(dir, Path::new("/")))
}

/// The user's profile folder as Windows keeps it for the user's account
/// (`SHGetKnownFolderPath(FOLDERID_Profile)`, read from the registry, not from
/// `%USERPROFILE%` or `%HOME%`, which a project's settings can set): Windows' password
/// database.
#[cfg(windows)]
pub fn passwd_home() -> Option<PathBuf> {
    super::known_folder(super::KnownFolder::Profile).map(|dir| absolute_real(&dir, &dir))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn relative_and_dotted_config_paths_are_placed_where_they_really_are() {
        let base = Path::new("/nonexistent-pagent-test/p");
        let relative = absolute_real(Path::new(".evil"), base);
        let dotted = absolute_real(Path::new("/nonexistent-pagent-test/q/../p/./x"), base);
        #[cfg(unix)]
        {
            assert_eq!(relative, Path::new("/nonexistent-pagent-test/p/.evil"));
            assert_eq!(dotted, Path::new("/nonexistent-pagent-test/p/x"));
        }
        // Windows puts `/` on a drive (`C:`, or `Z:` under Wine): the same places below it,
        // with nothing left to fold.
        #[cfg(windows)]
        {
            use std::path::Component;
            assert!(relative.is_absolute(), "{}", relative.display());
            assert!(
                relative.ends_with("nonexistent-pagent-test/p/.evil"),
                "{}",
                relative.display()
            );
            assert!(
                dotted.ends_with("nonexistent-pagent-test/p/x"),
                "{}",
                dotted.display()
            );
            assert!(
                !dotted
                    .components()
                    .any(|c| matches!(c, Component::ParentDir | Component::CurDir)),
                "{}",
                dotted.display()
            );
        }
    }

    #[test]
    fn the_password_database_names_a_home() {
        assert!(passwd_home().is_some());
    }
}

//! Removing a whole folder under a root (a merged task's worktree): every entry unlinked
//! by descriptor, never through a symlink. A symlink inside is removed as the link it is,
//! its target untouched; a folder is entered with `O_NOFOLLOW | O_DIRECTORY`, so one
//! swapped for a link meanwhile is refused rather than followed out of the root.

use super::write::write_error;
use super::*;

impl Dir {
    /// Removes the folder `rel` and everything in it; `Ok(false)` when nothing was there.
    /// `rel` itself must be a real folder (a symlink there is refused, not followed).
    pub fn remove_tree(&self, rel: &Path) -> Result<bool, DoorError> {
        let shown = show(rel);
        let (parent, name) = match self.parent_for_existing(rel, &shown) {
            Ok(found) => found,
            Err(DoorError::Missing(_)) => return Ok(false),
            Err(err) => return Err(err),
        };
        match fstatat(parent.fd(), &name, libc::AT_SYMLINK_NOFOLLOW) {
            Ok(st) if Kind::of(st.st_mode) == Kind::Dir => {}
            Ok(st) => return Err(DoorError::NotADir(shown, Kind::of(st.st_mode))),
            Err(err) if err.kind() == io::ErrorKind::NotFound => return Ok(false),
            Err(err) => return Err(DoorError::Io(shown, err)),
        }
        empty_folder(&parent, &name, &shown, 0)?;
        unlinkat(parent.fd(), &name, libc::AT_REMOVEDIR).map_err(|e| DoorError::Io(shown, e))?;
        Ok(true)
    }
}

/// Unlinks everything inside `parent/name`, depth first.
fn empty_folder(parent: &Fd, name: &CString, shown: &str, depth: usize) -> Result<(), DoorError> {
    if depth > MAX_DEPTH {
        return Err(DoorError::Io(
            shown.to_owned(),
            io::Error::other("folders nested too deep to remove"),
        ));
    }
    let flags = libc::O_RDONLY | libc::O_DIRECTORY | libc::O_NOFOLLOW | libc::O_CLOEXEC;
    let dir = Fd(openat(parent.fd(), name, flags, 0).map_err(|e| write_error(e, shown))?);
    let mut entries: Vec<Vec<u8>> = Vec::new();
    for_each_entry(&dir, |entry| {
        if entry != b"." && entry != b".." {
            entries.push(entry.to_vec());
        }
    });
    for entry in entries {
        let Ok(entry) = CString::new(entry) else {
            continue;
        };
        let st = match fstatat(dir.fd(), &entry, libc::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(err) if err.kind() == io::ErrorKind::NotFound => continue,
            Err(err) => return Err(DoorError::Io(shown.to_owned(), err)),
        };
        if Kind::of(st.st_mode) == Kind::Dir {
            empty_folder(&dir, &entry, shown, depth + 1)?;
            unlinkat(dir.fd(), &entry, libc::AT_REMOVEDIR)
        } else {
            unlinkat(dir.fd(), &entry, 0)
        }
        .or_else(|err| match err.kind() {
            io::ErrorKind::NotFound => Ok(()),
            _ => Err(DoorError::Io(shown.to_owned(), err)),
        })?;
    }
    Ok(())
}

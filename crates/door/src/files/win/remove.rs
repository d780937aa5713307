//! Removing a whole folder under a root on Windows (a merged task's worktree): every
//! entry opened by handle relative to its folder and deleted by handle, never through a
//! link. A symbolic link or junction inside is opened with `FILE_OPEN_REPARSE_POINT` and
//! deleted as the link it is, its target untouched; a folder is entered only when it is
//! one (not a link), so one swapped for a junction meanwhile is refused, not followed.

use std::os::windows::io::{AsHandle, BorrowedHandle};

use windows_sys::Wdk::Storage::FileSystem as nt;
use windows_sys::Win32::Storage::FileSystem as fs;

use super::read::{for_each_entry, stat_at};
use super::write::delete_by_handle;
use super::*;

/// Folders deeper than this are not removed (a pathological tree).
const MAX_DEPTH: usize = 256;

impl Dir {
    /// Removes the folder `rel` and everything in it; `Ok(false)` when nothing was there.
    /// `rel` itself must be a real folder (a link there is refused, not followed).
    pub fn remove_tree(&self, rel: &Path) -> Result<bool, DoorError> {
        let shown = show(rel);
        let mut parts = normal_components(rel, &shown)?;
        let Some(last) = parts.pop() else {
            return Err(DoorError::BadPath(shown));
        };
        let parent = match self.folder(&parts, &shown, false) {
            Ok(parent) => parent,
            Err(DoorError::Missing(_)) => return Ok(false),
            Err(DoorError::Reparse(p) | DoorError::Outside(p)) => {
                return Err(DoorError::Symlink(p));
            }
            Err(err) => return Err(err),
        };
        match stat_at(self, parent.as_handle(), &last, &shown) {
            Ok(None) => return Ok(false),
            Ok(Some(stat)) if stat.kind == Kind::Dir => {}
            Ok(Some(stat)) => return Err(DoorError::NotADir(shown, stat.kind)),
            Err(DoorError::Outside(p)) => return Err(DoorError::Symlink(p)),
            Err(err) => return Err(err),
        }
        remove_folder(parent.as_handle(), &wide(&last), &shown, 0)?;
        Ok(true)
    }
}

/// Deletes everything inside `parent\name`, depth first, then the folder itself.
fn remove_folder(
    parent: BorrowedHandle<'_>,
    name: &[u16],
    shown: &str,
    depth: usize,
) -> Result<(), DoorError> {
    if depth > MAX_DEPTH {
        return Err(DoorError::Io(
            shown.to_owned(),
            io::Error::other("folders nested too deep to remove"),
        ));
    }
    let how = How {
        access: fs::FILE_LIST_DIRECTORY | fs::FILE_TRAVERSE | fs::FILE_READ_ATTRIBUTES | fs::DELETE,
        share: SHARE_ALL,
        disposition: nt::FILE_OPEN,
        kind: nt::FILE_DIRECTORY_FILE,
    };
    let dir = nt_open(parent, name, how).map_err(|e| DoorError::Io(shown.to_owned(), e))?;
    let tag = tag_of(dir.as_handle()).map_err(|e| DoorError::Io(shown.to_owned(), e))?;
    if tag.redirects() {
        return Err(DoorError::Symlink(shown.to_owned()));
    }
    let mut entries: Vec<(Vec<u16>, Kind)> = Vec::new();
    for_each_entry(dir.as_handle(), |entry, kind| {
        entries.push((entry.to_vec(), kind))
    });
    for (entry, kind) in entries {
        if kind == Kind::Dir {
            remove_folder(dir.as_handle(), &entry, shown, depth + 1)?;
            continue;
        }
        // A file, or a link of any kind: the name itself goes, never its target.
        let how = How {
            access: fs::DELETE | fs::FILE_READ_ATTRIBUTES,
            share: SHARE_ALL,
            disposition: nt::FILE_OPEN,
            kind: 0,
        };
        let handle = nt_open(dir.as_handle(), &entry, how)
            .map_err(|e| DoorError::Io(shown.to_owned(), e))?;
        delete_by_handle(handle.as_handle()).map_err(|e| DoorError::Io(shown.to_owned(), e))?;
    }
    delete_by_handle(dir.as_handle()).map_err(|e| DoorError::Io(shown.to_owned(), e))
}
